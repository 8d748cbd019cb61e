// Where stderr's lines go (util/log's sinks), from the log options and
// their environment variables.

#include "cli/line/log_options.hpp"

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cli/line/option_values.hpp"
#include "cli/setup/config_file.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace redlock::cli {

namespace {

// Where stderr's lines go: the flags, else $REDLOCK_LOG_FORMAT and
// $REDLOCK_SYSLOG (unset or empty: not said; 0, no, off or false: no
// syslog; 1, yes, on or true: syslog with facility user; a facility's name:
// syslog with it), else the configuration file's log-format, syslog and
// syslog-facility. A value that is none of these is a UsageError (64),
// before any traffic.
LogSinks sinks_of(const GlobalOptions& g, const ConfigFile& file) {
  LogSinks s;
  if (g.log_format) {
    s.format = *g.log_format;
  } else if (const char* env = std::getenv("REDLOCK_LOG_FORMAT"); env != nullptr && *env != '\0') {
    s.format = parse_log_format(env, "REDLOCK_LOG_FORMAT");
  } else if (file.log_format) {
    s.format = *file.log_format;
  }
  const char* env = std::getenv("REDLOCK_SYSLOG");
  const std::string_view v = env != nullptr ? env : "";
  std::optional<bool> env_syslog;
  std::optional<int> env_facility;
  if (v == "1" || v == "yes" || v == "on" || v == "true") {
    env_syslog = true;
  } else if (v == "0" || v == "no" || v == "off" || v == "false") {
    env_syslog = false;
  } else if (!v.empty()) {
    env_facility = parse_syslog_facility(env, "REDLOCK_SYSLOG");
    env_syslog = true;
  }
  s.facility = g.syslog_facility.value_or(env_facility.value_or(file.syslog_facility.value_or(s.facility)));
  if (g.syslog || g.syslog_facility) {
    s.syslog = true;
  } else if (env_syslog) {
    s.syslog = *env_syslog;
  } else {
    s.syslog = file.syslog.value_or(file.syslog_facility.has_value());
  }
  return s;
}

// The lock the command is about, for the JSON log lines: its one NAME
// (none for several).
void set_name_field(std::optional<Subcommand> which, const AllOptions& o) {
  if (!which || log_sinks().format != LogFormat::k_json) {
    return;
  }
  auto one = [](const std::vector<std::string>& names) { return names.size() == 1 ? names.front() : ""; };
  std::string name;
  switch (*which) {
    case Subcommand::k_acquire:
      name = one(o.acquire.take.names);
      break;
    case Subcommand::k_exec:
      name = one(o.exec.take.names);
      break;
    case Subcommand::k_release:
      name = one(o.release.names);
      break;
    case Subcommand::k_renew:
      name = one(o.renew.names);
      break;
    case Subcommand::k_history:
      name = o.history.name;
      break;
    case Subcommand::k_overdue:
      name = o.overdue.name;
      break;
    case Subcommand::k_status:
      name = one(o.status.names);
      break;
    case Subcommand::k_break:
      name = one(o.brk.names);
      break;
    case Subcommand::k_events:
      name = one(o.events.names);
      break;
    default:
      break;  // a subcommand of no single lock
  }
  if (!name.empty()) {
    set_log_field("name", name);
  }
}

}  // namespace

// Before argv is read in full: the log flags and variables as far as they
// are valid, so that even a usage error is written as asked (what is not
// valid is said by the full reading, as text).
void set_early_logging(int argc, char** argv) noexcept {
  try {
    GlobalOptions g;
    for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {
      const std::string_view w = argv[i];
      try {
        if (w == "--log-format" && i + 1 < argc) {
          g.log_format = parse_log_format(argv[++i], "--log-format");
        } else if (w.substr(0, 13) == "--log-format=") {
          g.log_format = parse_log_format(std::string(w.substr(13)), "--log-format");
        } else if (w == "--syslog") {
          g.syslog = true;
        } else if (w == "--syslog-facility" && i + 1 < argc) {
          g.syslog_facility = parse_syslog_facility(argv[++i], "--syslog-facility");
        } else if (w.substr(0, 18) == "--syslog-facility=") {
          g.syslog_facility = parse_syslog_facility(std::string(w.substr(18)), "--syslog-facility");
        }
      } catch (const UsageError&) {
      }
    }
    LogSinks s;
    try {
      s = sinks_of(g, read_config());
    } catch (const UsageError&) {
      s.format = g.log_format.value_or(LogFormat::k_text);
    }
    if (s.format != LogFormat::k_text || s.syslog) {
      set_log_sinks(s);
    }
  } catch (...) {
  }
}

void set_logging(const AllOptions& o, std::optional<Subcommand> which) {
  set_log_sinks(sinks_of(o.global, read_config()));
  set_name_field(which, o);
}

}  // namespace redlock::cli
