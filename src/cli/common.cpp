#include "cli/common.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_option("-r,--redis", g.redis,
                 "Redis URL; repeat for the Redlock algorithm over N masters "
                 "(default: $REDLOCK_URL, else redis://127.0.0.1:6379)")
      ->allow_extra_args(false)  // one URL per -r: `release -r URL NAME` must leave NAME alone
      ->type_name("URL");
  app.add_option("--prefix", g.prefix, "key prefix (default: $REDLOCK_PREFIX, else redlock:)")->type_name("STR");
  app.add_option("--connect-timeout", g.connect_timeout, "per-connection timeout (default 1s)")->type_name("D");
  app.add_option("--timeout", g.timeout, "per-command round-trip timeout (default 1s)")->type_name("D");
  app.add_option("--tls-ca", g.tls_ca, "CA certificates for rediss:// (default: system store)")->type_name("FILE");
  app.add_option("--tls-cert", g.tls_cert, "client certificate for rediss://")->type_name("FILE");
  app.add_option("--tls-key", g.tls_key, "client key for rediss://")->type_name("FILE");
  app.add_option("--tls-server-name", g.tls_server_name, "name to verify the server certificate against")
      ->type_name("NAME");
  app.add_flag("--insecure", g.insecure, "do not verify TLS certificates (says so on stderr)");
  app.add_option("--password-file", g.password_file, "read the Redis password from FILE")->type_name("FILE");
  app.add_option("--min-replicas", g.min_replicas, "after acquire/renew, WAIT for N replicas or treat the lock as not held")
      ->type_name("N");
  app.add_flag("-q,--quiet", g.quiet, "print nothing on stderr");
  app.add_flag("-v,--verbose", g.verbose, "say more on stderr");
}

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string read_password_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError(fmt::format("cannot read --password-file '{}': {}", escape_for_terminal(path),
                                 std::strerror(errno)));
  }
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) {
    line.pop_back();
  }
  if (line.empty()) {
    throw UsageError(fmt::format("--password-file '{}' is empty", escape_for_terminal(path)));
  }
  return line;
}

Millis parse_timeout(const std::string& text, const char* what) {
  Millis d = parse_duration(text, what);
  if (d < Millis(1)) {
    throw UsageError(fmt::format("{} must be at least 1ms", what));
  }
  return d;
}

}  // namespace

Resolved resolve(const GlobalOptions& g) {
  Resolved r;
  if (!g.redis.empty()) {
    for (const auto& url : g.redis) {
      auto list = redis::parse_endpoint_list(url);
      r.endpoints.insert(r.endpoints.end(), list.begin(), list.end());
    }
  } else if (std::string urls = env("REDLOCK_URL"); !urls.empty()) {
    r.endpoints = redis::parse_endpoint_list(urls);
  } else {
    r.endpoints = {redis::parse_endpoint("redis://127.0.0.1:6379")};
  }
  std::optional<std::string> password;
  if (!g.password_file.empty()) {
    password = read_password_file(g.password_file);
  } else if (std::string p = env("REDLOCK_PASSWORD"); !p.empty()) {
    password = p;
  }
  for (auto& ep : r.endpoints) {
    if (!ep.password && password) {
      ep.password = password;
    }
  }
  const bool any_tls = std::any_of(r.endpoints.begin(), r.endpoints.end(), [](const auto& ep) { return ep.tls; });
  if (any_tls) {
    r.options.tls = redis::TlsContext::create(
        redis::TlsOptions{g.tls_ca, g.tls_cert, g.tls_key, g.tls_server_name, g.insecure});
    if (g.insecure) {
      log_warning("--insecure: TLS certificates are not verified; anyone on the path can impersonate Redis");
    }
  }
  r.options.prefix = g.prefix ? *g.prefix : (std::getenv("REDLOCK_PREFIX") ? env("REDLOCK_PREFIX") : "redlock:");
  if (!is_valid_utf8(r.options.prefix) || r.options.prefix.size() > 512) {
    throw UsageError("invalid --prefix: it must be valid UTF-8 of at most 512 bytes");
  }
  r.options.timeouts.connect = parse_timeout(g.connect_timeout, "--connect-timeout");
  r.options.timeouts.command = parse_timeout(g.timeout, "--timeout");
  if (g.min_replicas < 0) {
    throw UsageError("--min-replicas must not be negative");
  }
  r.options.min_replicas = g.min_replicas;
  return r;
}

std::string display_endpoints(const std::vector<redis::Endpoint>& endpoints) {
  std::string out;
  for (const auto& ep : endpoints) {
    out += (out.empty() ? "" : ",") + ep.display();
  }
  return out;
}

Millis parse_ttl(const std::string& text) {
  Millis ttl = parse_duration(text, "--ttl");
  if (ttl < Millis(10)) {
    throw UsageError(fmt::format("--ttl {} is too short: a lock needs at least 10ms", text));
  }
  return ttl;
}

std::string token_from(const std::string& flag) {
  return flag.empty() ? env("REDLOCK_TOKEN") : flag;
}

lock::Claim make_claim(int limit, bool shared) {
  if (limit < 1 || limit > 1'000'000) {
    throw UsageError("--limit must be a whole number from 1 to 1000000");
  }
  if (shared && limit != 1) {
    throw UsageError("--shared takes a reader's share of a readers/writer lock; it does not go with --limit");
  }
  lock::Claim claim;
  claim.limit = limit;
  claim.mode = shared ? lock::Claim::Mode::k_shared
               : limit > 1 ? lock::Claim::Mode::k_semaphore
                           : lock::Claim::Mode::k_exclusive;
  return claim;
}

void validate_exit_code(int code, const char* option) {
  if (code < 0 || code > 255) {
    throw UsageError(fmt::format("{} must be from 0 to 255", option));
  }
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) {
    return "unknown";
  }
  return buf;
}

std::string process_command(long long pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') {
    raw.pop_back();
  }
  for (char& c : raw) {
    if (c == '\0') {
      c = ' ';
    }
  }
  return raw.substr(0, 1024);
}

int report_busy(const std::string& name, const lock::Busy& busy, std::optional<Millis> waited,
                int conflict_exit_code) {
  std::string who;
  if (!busy.host.empty()) {
    who = fmt::format(" by {} pid {}", escape_for_terminal(busy.host), escape_for_terminal(busy.pid));
  }
  std::string more = busy.ttl_left > Millis(0) ? fmt::format(" for {} more", format_duration(busy.ttl_left)) : "";
  std::string after = waited && *waited > Millis(0) ? fmt::format(" (gave up after --wait {})", format_duration(*waited)) : "";
  if (busy.lost_race && busy.host.empty()) {
    log_warning("{} is contended: no quorum for anyone{}; try again or use --wait", escape_for_terminal(name), after);
  } else {
    log_warning("{} is held{}{}{}; try later or use --wait", escape_for_terminal(name), who, more, after);
  }
  return conflict_exit_code;
}

}  // namespace redlock::cli
