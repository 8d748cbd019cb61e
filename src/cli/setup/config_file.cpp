#include "cli/setup/config_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <variant>

#include "cli/line/option_values.hpp"
#include "lock/servers.hpp"
#include "util/exit_status.hpp"
#include "util/fd.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// A configuration file is a few lines: anything longer is not one.
constexpr size_t k_max_config_bytes = size_t{64} * 1024;

constexpr const char* k_keys =
    "redis, prefix, password-file, connect-timeout, redis-timeout, tls-ca, tls-cert, tls-key, tls-server-name, "
    "insecure, min-replicas, log-format, syslog, syslog-facility";

std::string_view trim(std::string_view s) {
  const size_t from = s.find_first_not_of(" \t\r");
  if (from == std::string_view::npos) {
    return {};
  }
  return s.substr(from, s.find_last_not_of(" \t\r") - from + 1);
}

// A file named in the file is read wherever redlock runs: its path must
// not depend on the working directory.
std::string absolute_file(const std::string& key, const std::string& value) {
  if (value.front() != '/') {
    throw UsageError(fmt::format("{} must be an absolute path", key));
  }
  return value;
}

// The URLs of a `redis =` line; a password in them is refused: the file is
// meant to be read by every user of redlock on the host.
std::string server_list(const std::string& value) {
  if (lock::names_password(value)) {
    throw UsageError(
        "a password may not be written in the configuration file: name a file that holds it with password-file");
  }
  return value;
}

bool yes_or_no(const std::string& key, const std::string& value) {
  if (value == "yes" || value == "true" || value == "1") {
    return true;
  }
  if (value == "no" || value == "false" || value == "0") {
    return false;
  }
  throw UsageError(fmt::format("{} is yes or no, not '{}'", key, escape_for_terminal(value)));
}

// Sets `key` in `c`; throws UsageError (without the file and line) for an
// unknown key or a bad value.
void set(ConfigFile& c, const std::string& key, const std::string& value, int line) {
  if (key == "redis") {
    c.redis.push_back(server_list(value));
    c.redis_line = c.redis_line == 0 ? line : c.redis_line;
  } else if (key == "prefix") {
    if (!is_valid_utf8(value) || value.size() > 512) {
      throw UsageError("prefix must be valid UTF-8 of at most 512 bytes");
    }
    c.prefix = value;
  } else if (key == "password-file") {
    c.password_file = absolute_file(key, value);
  } else if (key == "connect-timeout") {
    c.connect_timeout = parse_timeout(value, "connect-timeout");
  } else if (key == "redis-timeout" || key == "timeout") {
    c.timeout = parse_timeout(value, key.c_str());
    c.old_timeout_line = key == "timeout" ? line : 0;
  } else if (key == "tls-ca") {
    c.tls_ca = absolute_file(key, value);
  } else if (key == "tls-cert") {
    c.tls_cert = absolute_file(key, value);
  } else if (key == "tls-key") {
    c.tls_key = absolute_file(key, value);
  } else if (key == "tls-server-name") {
    c.tls_server_name = value;
  } else if (key == "insecure") {
    c.insecure = yes_or_no(key, value);
  } else if (key == "min-replicas") {
    c.min_replicas = parse_whole_number(value, "min-replicas", 0, 1'000'000);
  } else if (key == "log-format") {
    c.log_format = parse_log_format(value, "log-format");
  } else if (key == "syslog") {
    c.syslog = yes_or_no(key, value);
  } else if (key == "syslog-facility") {
    c.syslog_facility = parse_syslog_facility(value, "syslog-facility");
  } else if (key == "password") {
    throw UsageError("a password may not be written in the configuration file: use password-file");
  } else {
    throw UsageError(fmt::format("unknown key '{}' (the keys are {})", escape_for_terminal(key), k_keys));
  }
}

// The text of `path`, or nullopt when it does not exist; a file that
// exists but cannot be read is a UsageError.
std::optional<std::string> read_file(const std::string& path, bool must_exist) {
  const Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() && (errno == ENOENT || errno == ENOTDIR) && !must_exist) {
    return std::nullopt;
  }
  const auto cannot = [&] {
    return UsageError(
        fmt::format("cannot read the configuration file {}: {}", escape_for_terminal(path), std::strerror(errno)));
  };
  if (!fd.valid()) {
    throw cannot();
  }
  std::string text;
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(fd.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw cannot();
    }
    if (n == 0) {
      return text;
    }
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > k_max_config_bytes) {
      throw UsageError(fmt::format("the configuration file {} is longer than {} bytes: is it one?",
                                   escape_for_terminal(path), k_max_config_bytes));
    }
  }
}

// `line` without a comment that follows its value ("key = value  # why"):
// a '#' after a space or tab starts one. A value cannot hold " #" (no
// option's value needs it: a URL writes a space as %20).
std::string_view without_comment(std::string_view line) {
  for (size_t at = line.find('#'); at != std::string_view::npos; at = line.find('#', at + 1)) {
    if (at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t') {
      return line.substr(0, at);
    }
  }
  return line;
}

}  // namespace

ConfigFile parse_config(std::string_view text, const std::string& path) {
  ConfigFile c;
  c.path = path;
  int number = 0;
  // A byte order mark, as some editors on other systems write one.
  constexpr std::string_view k_bom = "\xEF\xBB\xBF";
  if (text.starts_with(k_bom)) {
    text.remove_prefix(k_bom.size());
  }
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    end = end == std::string_view::npos ? text.size() : end;
    const std::string_view line = trim(without_comment(text.substr(at, end - at)));
    at = end + 1;
    ++number;
    if (line.empty() || line.front() == '#') {
      continue;
    }
    try {
      const size_t eq = line.find('=');
      if (eq == std::string_view::npos) {
        throw UsageError("expected key = value");
      }
      const std::string key(trim(line.substr(0, eq)));
      const std::string value(trim(line.substr(eq + 1)));
      if (value.empty()) {
        throw UsageError(fmt::format("{} has no value", escape_for_terminal(key)));
      }
      set(c, key, value, number);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}:{}: {}", escape_for_terminal(path), number, e.what()));
    }
  }
  return c;
}

const ConfigFile& read_config() {
  // Read once a call: the log set-up before argv is read, the log set-up
  // after, and the servers all ask. A file that does not read throws the
  // same UsageError each time.
  static const std::variant<ConfigFile, UsageError> once = []() -> std::variant<ConfigFile, UsageError> {
    try {
      return read_config_file();
    } catch (const UsageError& e) {
      return e;
    }
  }();
  if (const auto* bad = std::get_if<UsageError>(&once)) {
    throw *bad;
  }
  return std::get<ConfigFile>(once);
}

ConfigFile read_config_file() {
  const char* named = std::getenv("REDLOCK_CONFIG");
  if (named != nullptr && *named != '\0') {
    const std::string path = named;
    return parse_config(*read_file(path, true), path);
  }
  std::string user_file;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
    user_file = std::string(xdg) + "/redlock/config";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    user_file = std::string(home) + "/.config/redlock/config";
  }
  for (const std::string& path : {user_file, std::string("/etc/redlock.conf")}) {
    if (path.empty()) {
      continue;
    }
    if (auto text = read_file(path, false)) {
      return parse_config(*text, path);
    }
  }
  return {};
}

}  // namespace redlock::cli
