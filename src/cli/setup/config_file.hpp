#pragma once

// The configuration file: the server set written once, as `key = value`
// lines named as the long global options (redis, prefix, password-file,
// connect-timeout, redis-timeout (timeout before 0.2), tls-ca, tls-cert, tls-key, tls-server-name,
// insecure, min-replicas, log-format, syslog, syslog-facility). Flags beat
// the environment, which beats the file (cli/setup/servers.cpp merges the
// servers', cli/line/log_options.cpp the logs'). A password may not be written in it:
// only a password file named. Every value is checked as the file is read,
// before any network traffic; a bad line is a UsageError naming the file
// and the line.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/duration.hpp"
#include "util/log.hpp"

namespace redlock::cli {

struct ConfigFile {
  std::string path;                // the file read; empty when there is none
  std::vector<std::string> redis;  // each `redis =` line, in order (a line may hold a comma-separated list)
  int redis_line = 0;              // the first `redis =` line
  std::optional<std::string> prefix;
  std::string password_file;
  std::optional<Millis> connect_timeout;
  std::optional<Millis> timeout;  // redis-timeout
  int old_timeout_line = 0;       // the line that set it by its old name, `timeout` (0: none)
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  bool insecure = false;
  std::optional<int> min_replicas;
  std::optional<LogFormat> log_format;
  std::optional<bool> syslog;
  std::optional<int> syslog_facility;
};

// The settings in `text`, read from `path` (for messages). Throws
// UsageError "PATH:LINE: what is wrong" for a line that is not blank, a
// comment (#) or `key = value` with a known key and a valid value.
[[nodiscard]] ConfigFile parse_config(std::string_view text, const std::string& path);

// The file $REDLOCK_CONFIG names (which must exist), else
// $XDG_CONFIG_HOME/redlock/config (default ~/.config/redlock/config), else
// /etc/redlock.conf: the first that exists, alone. A file that is missing
// costs one failed open(). Nothing (an empty path) when none exists.
[[nodiscard]] ConfigFile read_config_file();

// read_config_file() once a process: every later call gives what the
// first did (its settings, or the same UsageError).
[[nodiscard]] const ConfigFile& read_config();

}  // namespace redlock::cli
