#include "cli/setup/servers.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "cli/line/option_values.hpp"
#include "cli/setup/config_file.hpp"
#include "lock/answers.hpp"
#include "util/exit_status.hpp"
#include "util/fd.hpp"
#include "util/log.hpp"
#include "util/signals.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A password is one line: a file whose first line is longer is not a
// password file (/dev/zero, a log), and is not read to its end.
constexpr size_t k_password_max = 4096;

// The password: the first line of `path`, named in messages as `from`
// ("--password-file" or "$REDLOCK_PASSWORD_FILE"). Read up to its first
// newline only, so a pipe (<(pass show redis)) works as a file does.
std::string read_password_file(const std::string& path, const char* from) {
  const auto cannot_read = [&] {
    return UsageError(fmt::format("cannot read {} '{}': {}", from, escape_for_terminal(path), std::strerror(errno)));
  };
  const Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    throw cannot_read();
  }
  std::string text;
  char chunk[512];
  while (text.find('\n') == std::string::npos && text.size() <= k_password_max) {
    const ssize_t n = read(fd.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {  // a directory: EISDIR
      throw cannot_read();
    }
    if (n == 0) {
      break;
    }
    text.append(chunk, static_cast<size_t>(n));
  }
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > k_password_max) {
    throw UsageError(fmt::format("{} '{}' does not hold a password: its first line is longer than {} bytes", from,
                                 escape_for_terminal(path), k_password_max));
  }
  while (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  if (line.empty()) {
    throw UsageError(fmt::format("{} '{}' is empty", from, escape_for_terminal(path)));
  }
  return line;
}

// The password for endpoints whose URL has none, and the file it came from
// when a nested redlock can read that file again.
struct Fallback {
  std::optional<std::string> password;
  std::string file;  // absolute; empty for a variable or a pipe (read once)
};

// --password-file, else $REDLOCK_PASSWORD, else $REDLOCK_PASSWORD_FILE,
// else the configuration file's password-file.
Fallback fallback_password(const GlobalOptions& g, const ConfigFile& file) {
  const std::string variable = env("REDLOCK_PASSWORD");
  const bool option = !g.password_file.empty();
  const std::string variable_file = env("REDLOCK_PASSWORD_FILE");
  const std::string path = option                  ? g.password_file
                           : !variable.empty()     ? ""
                           : variable_file.empty() ? file.password_file
                                                   : variable_file;
  if (path.empty()) {
    return {variable.empty() ? std::nullopt : std::optional(variable), ""};
  }
  const std::string from = option                   ? "--password-file"
                           : !variable_file.empty() ? "$REDLOCK_PASSWORD_FILE"
                                                    : "password-file in " + file.path;
  Fallback f{read_password_file(path, from.c_str()), ""};
  // A nested redlock reads the same file, whatever directory CMD is in.
  if (char* absolute = realpath(path.c_str(), nullptr)) {
    struct stat st {};
    if (stat(absolute, &st) == 0 && S_ISREG(st.st_mode)) {
      f.file = absolute;
    }
    std::free(absolute);
  }
  return f;
}

// Whether every one of `endpoints` has the same `field` (a password; true
// if none has one).
template <typename Field>
bool all_alike(const std::vector<const redis::Endpoint*>& endpoints, Field field) {
  return std::all_of(endpoints.begin(), endpoints.end(),
                     [&](const auto* ep) { return ep->*field == endpoints.front()->*field; });
}

// A nested redlock finds no password in $REDLOCK_URL: it takes
// $REDLOCK_PASSWORD, else $REDLOCK_PASSWORD_FILE, for every endpoint. CMD
// gets exactly one of them (the caller's own included), so that it makes
// this redlock's choice; none, and a warning, when the endpoints' passwords
// differ: one variable cannot carry them.
void pass_password_on(const Fallback& fallback, Resolved& r) {
  std::vector<const redis::Endpoint*> all;
  for (const auto& ep : r.endpoints) {
    all.push_back(&ep);
  }
  const std::optional<std::string> password = all.empty() ? std::nullopt : all.front()->password;
  const bool one_password = all_alike(all, &redis::Endpoint::password);
  if (!one_password || !password) {
    r.credentials_unset = {"REDLOCK_PASSWORD", "REDLOCK_PASSWORD_FILE"};
    if (!one_password) {
      r.credentials_warning = "the servers do not all have the same password";
    }
  } else if (password == fallback.password && !fallback.file.empty()) {
    r.credentials_env.emplace_back("REDLOCK_PASSWORD_FILE", fallback.file);
    r.credentials_unset = {"REDLOCK_PASSWORD"};
  } else {
    r.credentials_env.emplace_back("REDLOCK_PASSWORD", *password);
    r.credentials_unset = {"REDLOCK_PASSWORD_FILE"};
  }
  // The same for the sentinels' own password ($REDLOCK_SENTINEL_PASSWORD).
  std::vector<const redis::Endpoint*> sentinels;
  std::copy_if(all.begin(), all.end(), std::back_inserter(sentinels),
               [](const auto* ep) { return ep->kind == redis::Endpoint::Kind::k_sentinel; });
  if (sentinels.empty()) {
    return;
  }
  if (!all_alike(sentinels, &redis::Endpoint::sentinel_password)) {
    r.credentials_unset.emplace_back("REDLOCK_SENTINEL_PASSWORD");
    r.credentials_warning = r.credentials_warning.empty() ? "the sentinels do not all have the same password"
                                                          : r.credentials_warning + ", nor do the sentinels";
  } else if (const auto& p = sentinels.front()->sentinel_password) {
    r.credentials_env.emplace_back("REDLOCK_SENTINEL_PASSWORD", *p);
  } else {
    r.credentials_unset.emplace_back("REDLOCK_SENTINEL_PASSWORD");
  }
}

// The passwords: each endpoint's from its URL, else the fallback
// (sentinels' from ?sentinel_password=, else $REDLOCK_SENTINEL_PASSWORD);
// and what CMD needs to pass them on to a nested redlock.
void resolve_password(const GlobalOptions& g, const ConfigFile& file, Resolved& r) {
  const Fallback fallback = fallback_password(g, file);
  const std::string sentinel_password = env("REDLOCK_SENTINEL_PASSWORD");
  for (auto& ep : r.endpoints) {
    if (!ep.password && fallback.password) {
      ep.password = fallback.password;
    }
    if (ep.kind == redis::Endpoint::Kind::k_sentinel && !ep.sentinel_password && !sentinel_password.empty()) {
      ep.sentinel_password = sentinel_password;
    }
  }
  pass_password_on(fallback, r);
}

// TLS for rediss:// endpoints: each option, else the variable a calling
// exec set ($REDLOCK_TLS_CA...), else the configuration file's. What was
// used is passed on to exec's CMD the same way (files as absolute paths),
// so that a nested redlock verifies the servers and presents its
// certificate as this one does.
redis::TlsOptions resolve_tls(const GlobalOptions& g, const ConfigFile& file, Resolved& r) {
  struct Setting {
    const std::string& option;
    const char* variable;
    const std::string& configured;
    bool file;
  };
  redis::TlsOptions tls;
  const std::pair<Setting, std::string*> settings[] = {
      {{g.tls_ca, "REDLOCK_TLS_CA", file.tls_ca, true}, &tls.ca_file},
      {{g.tls_cert, "REDLOCK_TLS_CERT", file.tls_cert, true}, &tls.cert_file},
      {{g.tls_key, "REDLOCK_TLS_KEY", file.tls_key, true}, &tls.key_file},
      {{g.tls_server_name, "REDLOCK_TLS_SERVER_NAME", file.tls_server_name, false}, &tls.server_name},
  };
  for (const auto& [setting, value] : settings) {
    *value = setting.option.empty() ? env(setting.variable) : setting.option;
    if (value->empty()) {
      *value = setting.configured;
    }
    if (value->empty()) {
      continue;
    }
    std::string passed = *value;
    if (setting.file) {
      if (char* absolute = realpath(value->c_str(), nullptr)) {
        passed = absolute;
        std::free(absolute);
      }
    }
    r.credentials_env.emplace_back(setting.variable, passed);
  }
  tls.insecure = g.insecure || env("REDLOCK_TLS_INSECURE") == "1" || file.insecure;
  if (tls.insecure) {
    r.credentials_env.emplace_back("REDLOCK_TLS_INSECURE", "1");
  }
  return tls;
}

// The endpoints from --redis, else $REDLOCK_URL, else the configuration
// file, else the default; and where they were named.
void choose_endpoints(const GlobalOptions& g, const ConfigFile& file, Resolved& r) {
  const auto add = [&r](const std::vector<std::string>& lists) {
    for (const auto& urls : lists) {
      auto list = redis::parse_endpoint_list(urls);
      r.endpoints.insert(r.endpoints.end(), list.begin(), list.end());
    }
  };
  if (!g.redis.empty()) {
    add(g.redis);
    r.servers_from = "--redis";
  } else if (std::string urls = env("REDLOCK_URL"); !urls.empty()) {
    add({urls});
    r.servers_from = "$REDLOCK_URL";
  } else if (!file.redis.empty()) {
    add(file.redis);
    r.servers_from = fmt::format("{}:{}", file.path, file.redis_line);
  } else {
    add({"redis://127.0.0.1:6379"});
    r.servers_from = "the default: no --redis, $REDLOCK_URL or configuration file";
  }
}

// The round-trip timeout when no --redis-timeout was given:
// $REDLOCK_REDIS_TIMEOUT, else the file's redis-timeout (or its old name,
// timeout, said once), else 1s.
Millis redis_timeout_from(const ConfigFile& file) {
  if (const std::string variable = env("REDLOCK_REDIS_TIMEOUT"); !variable.empty()) {
    return parse_timeout(variable, "$REDLOCK_REDIS_TIMEOUT");
  }
  if (file.old_timeout_line != 0) {
    log_warning("{}:{}: timeout is now called redis-timeout; the old name still works", escape_for_terminal(file.path),
                file.old_timeout_line);
  }
  return file.timeout.value_or(Millis(1000));
}

}  // namespace

Resolved resolve(const GlobalOptions& g) {
  const ConfigFile& file = read_config();
  Resolved r;
  choose_endpoints(g, file, r);
  redis::refuse_repeated(r.endpoints);
  log_debug("servers: {} (from {})", display_endpoints(r.endpoints), escape_for_terminal(r.servers_from));
  lock::servers_named_in() =
      r.servers_from.rfind("the default", 0) == 0
          ? std::string("no --redis, $REDLOCK_URL or configuration file names one, so it is the default")
          : "the URL came from " + escape_for_terminal(r.servers_from);
  // The files named here may be FIFOs that nobody writes to yet: waiting on
  // them (in open or read, some inside OpenSSL) must not outlast a stop.
  ExitOnStop stops_end_reading;
  resolve_password(g, file, r);
  const bool any_tls = std::any_of(r.endpoints.begin(), r.endpoints.end(), [](const auto& ep) { return ep.tls; });
  if (any_tls) {
    const redis::TlsOptions tls = resolve_tls(g, file, r);
    r.options.tls = redis::TlsContext::create(tls);
    if (tls.insecure) {
      log_warning("{}: TLS certificates are not verified; anyone on the path can impersonate Redis",
                  g.insecure                           ? std::string("--insecure")
                  : env("REDLOCK_TLS_INSECURE") == "1" ? std::string("REDLOCK_TLS_INSECURE=1")
                                                       : "insecure in " + file.path);
    }
  }
  const bool prefix_variable = std::getenv("REDLOCK_PREFIX") != nullptr;
  r.options.prefix = g.prefix ? *g.prefix : prefix_variable ? env("REDLOCK_PREFIX") : file.prefix.value_or("redlock:");
  const std::string prefix_from = g.prefix          ? "--prefix"
                                  : prefix_variable ? "$REDLOCK_PREFIX"
                                                    : "prefix in " + file.path;
  if (!is_valid_utf8(r.options.prefix) || r.options.prefix.size() > 512) {
    throw UsageError(fmt::format("invalid {}: it must be valid UTF-8 of at most 512 bytes", prefix_from));
  }
  // A lock's keys are <prefix>{NAME}...: their hash tag runs from the first
  // '{' to the first '}' after it, the same for every key of the lock. A
  // prefix whose first '{' is followed at once by '}' makes that tag empty:
  // Redis would hash each whole key, scattering the lock over several slots.
  if (const size_t open = r.options.prefix.find('{');
      open != std::string::npos && open + 1 < r.options.prefix.size() && r.options.prefix[open + 1] == '}') {
    throw UsageError(
        fmt::format("invalid {} '{}': its first '{{' is closed at once, which leaves the keys without a "
                    "Redis hash tag",
                    prefix_from, escape_for_terminal(r.options.prefix)));
  }
  r.options.timeouts.connect = g.connect_timeout.value_or(file.connect_timeout.value_or(Millis(1000)));
  r.options.timeouts.command = g.timeout.value_or(redis_timeout_from(file));
  r.options.min_replicas = g.min_replicas.value_or(file.min_replicas.value_or(0));
  return r;
}

std::string display_endpoints(const std::vector<redis::Endpoint>& endpoints) {
  std::string out;
  for (const auto& ep : endpoints) {
    out += (out.empty() ? "" : ",") + ep.display();
  }
  return out;
}

}  // namespace redlock::cli
