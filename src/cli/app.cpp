#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <openssl/opensslv.h>
#include <signal.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "cli/commands.hpp"
#include "cli/option_values.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

std::string version_text() {
  // OpenSSL is loaded only for rediss:// (see redis/openssl.hpp): the
  // version it was built against, without loading it here.
  return fmt::format("redlock {}\nhiredis {}.{}.{}\n{} (libssl.so.{}, loaded for rediss://)", REDLOCK_VERSION,
                     HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH, OPENSSL_VERSION_TEXT, OPENSSL_VERSION_MAJOR);
}

namespace {

// The stop signal (SIGINT, SIGTERM or SIGHUP) waiting to be handled, or 0.
int pending_stop() {
  sigset_t set;
  if (sigpending(&set) != 0) {
    return 0;
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (sigismember(&set, sig) == 1) {
      return sig;
    }
  }
  return 0;
}

ExitCode run_subcommand(std::optional<Subcommand> which, const AllOptions& o, const Cancel& stop) {
  if (!which) {
    throw UsageError("no subcommand given (acquire, release, renew, status, break, exec)");
  }
  switch (*which) {
    case Subcommand::k_acquire:
      return run_acquire(o.acquire, o.global, stop);
    case Subcommand::k_release:
      return run_release(o.release, o.global, stop);
    case Subcommand::k_renew:
      return run_renew(o.renew, o.global, stop);
    case Subcommand::k_status:
      return run_status(o.status, o.global, stop);
    case Subcommand::k_break:
      return run_break(o.brk, o.global, stop);
    case Subcommand::k_revoke:
      return run_revoke(o.revoke, o.global, stop);
    case Subcommand::k_suspend:
      return run_suspend(o.suspend, o.global, stop);
    case Subcommand::k_resume:
      return run_resume(o.resume, o.global, stop);
    case Subcommand::k_exec:
      return run_exec(o.exec, o.global, stop);
    case Subcommand::k_history:
      return run_history(o.history, o.global, stop);
    case Subcommand::k_overdue:
      return run_overdue(o.overdue, o.global, stop);
    case Subcommand::k_doctor:
      return run_doctor(o.doctor, o.global, stop);
    case Subcommand::k_events:
      return run_events(o.events, o.global, stop);
  }
  throw std::logic_error("run_subcommand: unknown subcommand");
}

// Where stderr's lines go: the flags, else $REDLOCK_LOG_FORMAT and
// $REDLOCK_SYSLOG (unset, empty, 0, no, off or false: no syslog; 1, yes, on
// or true: syslog with facility user; a facility's name: syslog with it).
// A value that is neither is a UsageError (64), before any traffic.
LogSinks sinks_of(const GlobalOptions& g) {
  LogSinks s;
  if (g.log_format) {
    s.format = *g.log_format;
  } else if (const char* env = std::getenv("REDLOCK_LOG_FORMAT"); env != nullptr && *env != '\0') {
    s.format = parse_log_format(env, "REDLOCK_LOG_FORMAT");
  }
  s.syslog = g.syslog || g.syslog_facility.has_value();
  if (g.syslog_facility) {
    s.facility = *g.syslog_facility;
  }
  if (const char* env = std::getenv("REDLOCK_SYSLOG"); env != nullptr) {
    const std::string_view v = env;
    if (v == "1" || v == "yes" || v == "on" || v == "true") {
      s.syslog = true;
    } else if (!v.empty() && v != "0" && v != "no" && v != "off" && v != "false") {
      const int facility = parse_syslog_facility(env, "REDLOCK_SYSLOG");
      s.facility = g.syslog_facility.value_or(facility);
      s.syslog = true;
    }
  }
  return s;
}

// Before argv is read in full: the log flags and variables as far as they
// are valid, so that even a usage error is written as asked (what is not
// valid is said by the full reading, as text).
void set_early_sinks(int argc, char** argv) noexcept {
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
      s = sinks_of(g);
    } catch (const UsageError&) {
      s.format = g.log_format.value_or(LogFormat::k_text);
    }
    if (s.format != LogFormat::k_text || s.syslog) {
      set_log_sinks(s);
    }
  } catch (...) {
  }
}

// The lock the command is about, for the JSON log lines: its one NAME.
void set_name_field(std::optional<Subcommand> which, const AllOptions& o) {
  if (!which || log_sinks().format != LogFormat::k_json) {
    return;
  }
  auto one = [](const std::vector<std::string>& names) { return names.size() == 1 ? names.front() : ""; };
  std::string name;
  switch (*which) {
    case Subcommand::k_acquire:
      name = o.acquire.take.name;
      break;
    case Subcommand::k_exec:
      name = o.exec.take.name;
      break;
    case Subcommand::k_release:
      name = o.release.name;
      break;
    case Subcommand::k_renew:
      name = o.renew.name;
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
  }
  if (!name.empty()) {
    set_log_field("name", name);
  }
}

// The line that ends the command, unless -qq: its JSON carries the status.
void say_exit(const std::string& text, int status, LogLevel level) {
  if (verbosity() >= Verbosity::k_quiet) {
    write_exit_line(text, status, level);
  }
}

void set_verbosity(const GlobalOptions& g) {
  verbosity() = g.silent || g.quiet >= 2 ? Verbosity::k_silent
                : g.quiet == 1           ? Verbosity::k_quiet
                : g.verbose              ? Verbosity::k_verbose
                                         : Verbosity::k_normal;
}

// Runs the parsed subcommand: every error becomes one line and its status.
// The one place where an ExitCode becomes a number.
int run(std::optional<Subcommand> which, const AllOptions& o) {
  // From here on the stop signals are blocked (before any thread or child
  // exists), and the subcommand hands them to every wait for Redis as its
  // Cancel: SIGINT, SIGTERM or SIGHUP while redlock waits for Redis ends it
  // at once, with 128+N. What was just sent still reaches the server,
  // followed by the release of anything it would grant.
  SignalFd stops({SIGINT, SIGTERM, SIGHUP});
  ExitCode status = ExitStatus::k_ok;
  std::string failure;
  try {
    set_log_sinks(sinks_of(o.global));
    set_name_field(which, o);
    status = run_subcommand(which, o, stops.cancel());
  } catch (const Error& e) {
    failure = e.what();
    status = e.status();
  } catch (const std::exception& e) {
    failure = fmt::format("internal error: {}", e.what());
    status = ExitStatus::k_protocol;
  }
  // A stop signal still pending cut a round trip short, or came before the
  // subcommand could finish: it ends the command. Only an acquire that
  // succeeded keeps its 0: it printed a token, and the caller holds the lock.
  const int sig = pending_stop();
  const bool interrupted = sig != 0 && (!status.ok() || which != Subcommand::k_acquire);
  // Warnings held back (a refusing server of a Redlock) are news when the
  // command did what it was asked; a failure has its one line.
  if (status.ok() && !interrupted) {
    say_held_warnings();
  } else {
    drop_held_warnings();
  }
  if (interrupted) {
    say_exit(fmt::format("interrupted by SIG{}", sigabbrev_np(sig)), ExitCode::for_signal(sig).value(),
             LogLevel::k_warning);
    if (!failure.empty()) {
      log_debug("{}", failure);
    }
    return ExitCode::for_signal(sig).value();
  }
  if (!failure.empty()) {
    say_exit(failure, status.value(), LogLevel::k_error);
  }
  return status.value();
}

int parse_and_run(int argc, char** argv) {
  AllOptions o;
  set_early_sinks(argc, argv);
  const CommandLine line = read_command_line(o, argc, argv);
  if (line.exit_now) {
    return *line.exit_now;
  }
  set_verbosity(o.global);
  return run(line.subcommand, o);
}

}  // namespace

int main(int argc, char** argv) noexcept {
  try {
    return parse_and_run(argc, argv);
  } catch (const std::exception& e) {
    // What run() does not turn into a status itself: building the command
    // line, blocking the stop signals, or no memory left to say more.
    write_exit_line(fmt::format("internal error: {}", e.what()), to_int(ExitStatus::k_protocol));
  } catch (...) {
    write_exit_line("internal error", to_int(ExitStatus::k_protocol));
  }
  return to_int(ExitStatus::k_protocol);
}

}  // namespace redlock::cli
