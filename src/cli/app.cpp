#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <openssl/opensslv.h>
#include <signal.h>

#include <optional>

#include "cli/commands.hpp"
#include "cli/line/log_options.hpp"
#include "cli/line/options.hpp"
#include "util/build_info.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

std::string version_text() {
  // OpenSSL is loaded only for rediss:// (see redis/openssl.hpp): the
  // version it was built against, without loading it here.
  return fmt::format("redlock {}\ncommit {}\nhiredis {}.{}.{}\n{} (libssl.so.{}, loaded for rediss://)",
                     REDLOCK_VERSION, build_commit(), HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH, OPENSSL_VERSION_TEXT,
                     OPENSSL_VERSION_MAJOR);
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

}  // namespace

// Every subcommand: its name, its options (cli/line/options.cpp) and what
// runs it (one file each, in cli/).

// The groups of subcommands in redlock --help: what a person does.
constexpr const char* k_run = "Run a command under a lock";
constexpr const char* k_by_hand = "Script by hand";
constexpr const char* k_look = "Look at locks and runs";
constexpr const char* k_operate = "Operate on anyone's lock";
constexpr const char* k_check = "Check the deployment";
// Older spellings, kept for the scripts that use them: out of --help's
// groups (its footer names them), still run and completed.
constexpr const char* k_older = "";

constexpr SubcommandDef k_subcommands[] = {
    {"exec", k_run, Subcommand::k_exec, add_exec,
     [](const AllOptions& o, const Cancel& c) { return run_exec(o.exec, o.global, c); }},
    {"acquire", k_by_hand, Subcommand::k_acquire, add_acquire,
     [](const AllOptions& o, const Cancel& c) { return run_acquire(o.acquire, o.global, c); }},
    {"renew", k_by_hand, Subcommand::k_renew, add_renew,
     [](const AllOptions& o, const Cancel& c) { return run_renew(o.renew, o.global, c); }},
    {"release", k_by_hand, Subcommand::k_release, add_release,
     [](const AllOptions& o, const Cancel& c) { return run_release(o.release, o.global, c); }},
    {"status", k_look, Subcommand::k_status, add_status,
     [](const AllOptions& o, const Cancel& c) { return run_status(o.status, o.global, c); }},
    {"history", k_look, Subcommand::k_history, add_history,
     [](const AllOptions& o, const Cancel& c) { return run_history(o.history, o.global, c); }},
    {"events", k_look, Subcommand::k_events, add_events,
     [](const AllOptions& o, const Cancel& c) { return run_events(o.events, o.global, c); }},
    {"break", k_operate, Subcommand::k_break, add_break,
     [](const AllOptions& o, const Cancel& c) { return run_break(o.brk, o.global, c); }},
    {"suspend", k_operate, Subcommand::k_suspend, add_suspend,
     [](const AllOptions& o, const Cancel& c) { return run_suspend(o.suspend, o.global, c); }},
    {"resume", k_operate, Subcommand::k_resume, add_resume,
     [](const AllOptions& o, const Cancel& c) { return run_resume(o.resume, o.global, c); }},
    {"doctor", k_check, Subcommand::k_doctor, add_doctor,
     [](const AllOptions& o, const Cancel& c) { return run_doctor(o.doctor, o.global, c); }},
    {"revoke", k_older, Subcommand::k_revoke, add_revoke,
     [](const AllOptions& o, const Cancel& c) { return run_revoke(o.revoke, o.global, c); }},
    {"overdue", k_older, Subcommand::k_overdue, add_overdue,
     [](const AllOptions& o, const Cancel& c) { return run_overdue(o.overdue, o.global, c); }},
};

std::span<const SubcommandDef> subcommand_defs() {
  return k_subcommands;
}

namespace {

ExitCode run_subcommand(std::optional<Subcommand> which, const AllOptions& o, const Cancel& stop) {
  for (const SubcommandDef& s : k_subcommands) {
    if (which == s.id) {
      return s.run(o, stop);
    }
  }
  std::string names;
  for (const SubcommandDef& s : k_subcommands) {
    if (*s.group != '\0') {
      names += (names.empty() ? "" : ", ") + std::string(s.name);
    }
  }
  throw UsageError("no subcommand given (" + names + ")");
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
ExitCode run(std::optional<Subcommand> which, const AllOptions& o) {
  // From here on the stop signals are blocked (before any thread or child
  // exists), and the subcommand hands them to every wait for Redis as its
  // Cancel: SIGINT, SIGTERM or SIGHUP while redlock waits for Redis ends it
  // at once, with 128+N. What was just sent still reaches the server,
  // followed by the release of anything it would grant.
  SignalFd stops({SIGINT, SIGTERM, SIGHUP});
  ExitCode status = ExitStatus::k_ok;
  std::string failure;
  try {
    set_logging(o, which);
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
    return ExitCode::for_signal(sig);
  }
  if (!failure.empty()) {
    say_exit(failure, status.value(), LogLevel::k_error);
  }
  return status;
}

// The one place where an ExitCode becomes a number, or the end by the stop
// signal redlock was sent (everything is released by now).
int parse_and_run(int argc, char** argv) {
  AllOptions o;
  set_early_logging(argc, argv);
  const CommandLine line = read_command_line(o, argc, argv);
  if (line.exit_now) {
    return *line.exit_now;
  }
  set_verbosity(o.global);
  const ExitCode status = run(line.subcommand, o);
  say_dropped_lines();
  if (status.signal() != 0) {
    end_by_signal(status.signal());
  }
  return status.value();
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
