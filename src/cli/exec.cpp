#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "cli/commands.hpp"
#include "cli/revoke.hpp"
#include "cli/setup/arguments.hpp"
#include "cli/setup/servers.hpp"
#include "cli/show/history_format.hpp"
#include "cli/take/take.hpp"
#include "cli/take/take_all.hpp"
#include "exec/supervisor.hpp"
#include "lock/wait_loop.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

extern char** environ;

namespace redlock::cli {

namespace {

// What CMD runs: argv after --, or STRING under $SHELL -c (like flock -c).
// Every word before `--` is a NAME; without `--` (-c STRING, or a command
// that lacks its --), exec takes one NAME, and words after it are taken for
// a command that lacks its `--`.
std::vector<std::string> command_argv(const ExecOptions& o) {
  if (!o.saw_double_dash && (!o.command.empty() || o.take.names.size() > 1)) {
    std::string line = o.dashes_hint;
    if (line.empty()) {
      std::vector<std::string> words = o.take.names;
      words.insert(words.end(), o.command.begin(), o.command.end());
      line = "redlock exec " + escape_for_terminal(words.front()) + " --";
      words.erase(words.begin());
      for (const auto& w : redact_arguments(words)) {
        line += " " + escape_for_terminal(w);
      }
    }
    throw UsageError("put -- before the command: " + line);
  }
  if (!o.shell_command.empty() && !o.command.empty()) {
    throw UsageError("exec takes either -- CMD [ARG...] or -c STRING, not both");
  }
  if (!o.shell_command.empty()) {
    const char* shell = std::getenv("SHELL");
    return {shell && *shell ? shell : "/bin/sh", "-c", o.shell_command};
  }
  if (o.command.empty()) {
    throw UsageError("exec needs a command: redlock exec NAME -- CMD [ARG...] (or -c STRING)");
  }
  return o.command;
}

// CMD's environment: ours (without the variables in `unset`: the caller's
// own credentials when another source won), plus what a nested redlock (or
// the command itself) needs to know about the lock it runs under and how to
// reach it.
std::vector<std::string> command_env(const std::vector<std::pair<std::string, std::string>>& add,
                                     const std::vector<std::string>& unset) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    bool replaced = std::find(unset.begin(), unset.end(), key) != unset.end();
    for (const auto& [k, v] : add) {
      replaced = replaced || key == k;
    }
    if (!replaced) {
      env.push_back(std::move(kv));
    }
  }
  for (const auto& [k, v] : add) {
    env.push_back(fmt::format("{}={}", k, v));
  }
  return env;
}

// What ending exec's hold did, when it is news: levels that nested acquires
// inside CMD took and never gave back (dropped with exec's own: nobody could
// renew them), and a minimum hold that keeps the lock after CMD.
void report_end(const std::string& name, const lock::Ended& ended) {
  if (ended.levels > 1) {
    log_warning(
        "the command left {} nested level{} of {} held (taken inside it and never released); dropped with exec's",
        ended.levels - 1, ended.levels == 2 ? "" : "s", escape_for_terminal(name));
  }
  if (ended.kind == lock::Ended::Kind::k_kept) {
    log_debug("{} stays held for {} more (--hold-at-least)", escape_for_terminal(name), format_duration(ended.kept));
  }
}

// The break of the hold that exec's listener heard of, if any. Its message
// left before the release found the lock gone: a moment's wait lets the
// listener's thread read it.
std::optional<exec::RevokeNotice> heard_break(const exec::Revocation& revocation) {
  constexpr int k_moment_ms = 250;
  if (!revocation.started()) {
    return std::nullopt;
  }
  pollfd fd{revocation.fd(), POLLIN, 0};
  if (::poll(&fd, 1, k_moment_ms) <= 0 || !(fd.revents & POLLIN)) {
    return std::nullopt;
  }
  exec::RevokeNotice n = revocation.notice();
  return n.broken ? std::optional(std::move(n)) : std::nullopt;
}

// Ends exec's hold: the whole of it when this exec took the lock (levels
// nested acquires left behind go with it), else only the level it
// re-entered, never one of the exec that runs this one (`outer`); with any
// minimum hold left kept under no token. Returns true if the lock was found
// lost (not reported yet: CMD ran its last stretch unlocked).
bool end_hold(lock::Locker& locker, const std::string& name, const lock::Acquired& got, Millis min_hold,
              const exec::Finished& done, const std::optional<RunningExec>& outer,
              const std::optional<lock::RunEnd>& run, const exec::Revocation& revocation) {
  // A run that never started is not the period's run: the others must not
  // skip theirs for a host whose script is missing.
  const bool kept_none = !done.started && min_hold > Millis(0);
  if (kept_none) {
    min_hold = Millis(0);
  }
  // Nor is a revoked one: whoever revoked it wants the lock free (revoke's
  // 0 says so, and --on-busy replace runs next).
  if (done.revoked) {
    min_hold = Millis(0);
  }
  const bool whole = got.count == 1;
  const lock::Ended ended =
      locker.finish(name, got.token, min_hold, whole, whole || !outer ? 0 : outer->level, whole ? run : std::nullopt);
  // Each line after what it tells: a log never delays the release.
  if (kept_none) {
    log_warning("the command could not be run: {} is released at once, not kept for --hold-at-least",
                escape_for_terminal(name));
  }
  report_end(name, ended);
  if (ended.kind == lock::Ended::Kind::k_floor) {
    log_warning(
        "this exec's level of {} was already released by an unbalanced release in the command that runs it; "
        "the level of that command's exec, pid {}, is left alone",
        escape_for_terminal(name), outer ? outer->pid : 0);
    return false;
  }
  if (ended.kind != lock::Ended::Kind::k_not_held || done.lost) {
    return false;
  }
  if (const auto broken = heard_break(revocation)) {
    log_warning("{} while the command ran (it exited with {})", exec::broken_reason(*broken), done.status);
    return true;
  }
  log_warning("{} was no longer held when the command ended (it exited with {}); a longer --ttl may help",
              escape_for_terminal(name), done.status);
  return true;
}

// Takes the lock with room for CMD: more validity left than the first
// renewal plus the --kill-after grace (with less, after a slow acquire, the
// supervisor would signal CMD at once). A lock taken with less is given back
// and taken again while --wait lasts. An exit status when CMD must not
// start (a stop signal while waiting or taking the lock, or no room in
// time).
std::variant<HeldAll, ExitCode> take_with_room(lock::Locker& locker, const Take& take, const lock::Owner& owner,
                                               SignalFd& signals, const exec::Policy& policy) {
  const Millis needed = policy.kill_after + exec::Renewer::interval_for(take.ttl);
  const auto started = std::chrono::steady_clock::now();
  Take attempt = take;
  while (true) {
    auto taken = take_all(locker, attempt, owner, signals);
    if (auto* conflict = std::get_if<Conflict>(&taken)) {
      return conflict->status;
    }
    if (auto* stopped = std::get_if<Stopped>(&taken)) {
      return ExitCode::for_signal(stopped->signal);
    }
    HeldAll all = std::get<HeldAll>(std::move(taken));
    const Millis validity = all.validity();
    if (validity > needed) {
      return all;
    }
    give_back(locker, all.held, take.claim.starts_run());
    const std::string names = spoken_names(all.names());
    const auto waited = std::chrono::ceil<Millis>(std::chrono::steady_clock::now() - started);
    if (take.wait && waited >= *take.wait) {
      log_warning(
          "only {} of {}'s validity was left after acquiring it, not more than --kill-after ({}) plus one "
          "renewal period ({}); the command was not started (is Redis slow? a longer --ttl may help)",
          format_duration(validity), names, format_duration(policy.kill_after),
          format_duration(needed - policy.kill_after));
      return ExitStatus::k_unavailable;
    }
    log_debug("only {} of {}'s validity was left after acquiring it; trying again", format_duration(validity), names);
    if (take.wait) {
      attempt.wait = *take.wait - waited;
    }
    attempt.jitter = Millis(0);  // before the first try only
  }
}

// How the run ended, for the ledger (nothing with --no-history).
std::optional<lock::RunEnd> run_end(const Take& take, const lock::Acquired& got, const exec::Finished& done,
                                    const lock::Owner& owner) {
  if (!take.claim.record_run) {
    return std::nullopt;
  }
  lock::Outcome outcome = lock::outcome_of_command(done.status, done.signalled, done.lost, done.timed_out);
  if (done.revoked && !done.lost) {
    outcome = lock::Outcome::k_revoked;
  }
  // A run --max-runtime ended is recorded with the status exec exits with.
  const int exit = outcome == lock::Outcome::k_timed_out ? static_cast<int>(ExitStatus::k_timed_out) : done.status;
  return lock::RunEnd{outcome, exit, owner, got.fence};
}

// What giving one name back after CMD found: the lock lost (not reported
// yet), or the stop signal that cut the round trip short.
struct Released {
  bool lost = false;
  int interrupted = 0;
};

// Ends the hold of `h` after CMD. When Redis cannot be reached, its TTL
// frees it: said, unless the lock was already known lost (`lost`).
Released release_name(lock::Locker& locker, const Take& take, const Held& h, const exec::Finished& done,
                      SignalFd& signals, const lock::Owner& owner, bool lost, const exec::Revocation& revocation) {
  const std::string& name = h.name;
  // An exec that re-entered the lock of the exec running it (same name,
  // inherited token) must never give back that exec's levels.
  const std::optional<RunningExec> outer = exec_holding(name, h.got.token);
  try {
    const bool found_lost =
        end_hold(locker, name, h.got, take.claim.min_hold, done, outer, run_end(take, h.got, done, owner), revocation);
    log_debug("ended the hold of {}", escape_for_terminal(name));
    return {found_lost, 0};
  } catch (const Error& e) {
    if (int sig = signals.take(); sig != 0 && sig != SIGCHLD) {
      if (!lost) {
        set_exit_field(128 + sig);  // a lost lock's 74 stands
      }
      log_warning("interrupted by SIG{} while releasing {}; it frees itself within {}", sigabbrev_np(sig),
                  escape_for_terminal(name), format_duration(take.ttl));
      return {false, sig};
    }
    if (lost) {
      // The lock was lost, and said so: a release that cannot be sent is no news.
      log_debug("could not release {}: {}", escape_for_terminal(name), e.what());
    } else {
      log_warning("could not release {}: {}; it frees itself within {}", escape_for_terminal(name), e.what(),
                  format_duration(take.ttl));
    }
  }
  return {};
}

// After CMD: ends the hold of every name (the last taken first) and tells
// exec's exit status. Release happens on every path; if Redis cannot be
// reached, the TTL frees the lock. A stop signal now (CMD is gone: nothing
// to forward it to) ends redlock by it once released; one that arrives
// during the round trip abandons it at once, and the lock's TTL frees it.
ExitCode release_after(lock::Locker& locker, const Take& take, const HeldAll& all, const exec::Finished& done,
                       SignalFd& signals, const lock::Owner& owner, const exec::Revocation& revocation) {
  int stop = 0;
  while (int sig = signals.take()) {
    stop = sig == SIGCHLD ? stop : sig;
  }
  // A stop signal ends redlock by that signal once the lock is released;
  // any other one (SIGQUIT, SIGUSR1) with 128+N.
  const auto ended_by = [](int sig) {
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP ? ExitCode::for_signal(sig)
                                                            : ExitCode::passed_on(128 + sig);
  };
  locker.set_cancel(signals.cancel());
  bool lost = done.lost;  // a loss while CMD ran was reported when it was found
  for (auto h = all.held.rbegin(); h != all.held.rend(); ++h) {
    const Released r = release_name(locker, take, *h, done, signals, owner, lost, revocation);
    if (r.interrupted != 0) {
      return lost || r.lost ? ExitCode(ExitStatus::k_lost) : ended_by(r.interrupted);
    }
    lost = r.lost || lost;
  }
  locker.reset_cancel();
  if (lost || done.revoked) {
    return ExitStatus::k_lost;  // a revoke ends exec as a lost lock does
  }
  if (done.timed_out) {
    return ExitStatus::k_timed_out;
  }
  if (stop != 0) {
    set_exit_field(128 + stop);
    log_warning("interrupted by SIG{} after the command ended (it exited with {})", sigabbrev_np(stop), done.status);
    return ended_by(stop);
  }
  // CMD died of the stop signal redlock passed on: redlock, its lock
  // released, ends by it too, as timeout(1) does. A command that caught it
  // and chose its own status has that status passed on.
  if (done.signalled && done.stop_signal != 0 && done.status == 128 + done.stop_signal) {
    return ExitCode::for_signal(done.stop_signal);
  }
  return ExitCode::passed_on(done.status);
}

// The run ledger's options: --no-history, and --skip-if-ok-within, which
// means "one run per period" and so only goes with a plain lock.
void take_history(const ExecOptions& o, lock::Claim& claim, size_t names) {
  claim.record_run = !o.no_history;
  // Several names are taken one at a time, each waited for in turn: their
  // runs begin once all are held (start_runs), or an exec that died while
  // waiting would leave a run of a command that never ran.
  claim.run_later = names > 1;
  if (o.skip_if_ok_within) {
    if (claim.mode != lock::Claim::Mode::k_exclusive) {
      throw UsageError(
          "--skip-if-ok-within runs a job once per period, one host at a time; it does not go with --limit or "
          "--shared");
    }
    claim.skip_ok_within = *o.skip_if_ok_within;
  }
}

// A run before this one that never ended (its redlock died and its lock
// expired) is named: the line a cron user's mail needs.
void report_abandoned(const std::string& name, const lock::Acquired& got) {
  if (const auto& a = got.abandoned) {
    log_warning(
        "the previous run of {} on {} (pid {}, started {}) never finished: its redlock ended without "
        "releasing the lock, which expired",
        escape_for_terminal(name), escape_for_terminal(a->host), escape_for_terminal(a->pid),
        a->start_ms > 0 ? format_time(a->start_ms) : std::string("at a time not known"));
  }
}

// The runs of the names this exec took (not those it re-entered: a run is
// its exec's, and the exec running this one has it), begun now that every
// name is held, just before CMD starts; each names the run before it that
// never ended, as an acquire that starts a run does.
void start_runs(lock::Locker& locker, const Take& take, HeldAll& all, const lock::Owner& owner) {
  if (!take.claim.record_run || !take.claim.run_later) {
    return;
  }
  for (auto& h : all.held) {
    if (h.got.count == 1) {
      h.got.abandoned = locker.start_run(h.name, h.got.token, owner);
    }
  }
}

// --on-busy replace: the holders are revoked (with --kill-after as their
// grace) before the lock is taken, and `take` then waits long enough for
// the lock to come free. Nothing to do with a token that re-enters (a
// nested exec must not revoke the exec that runs it). First, whether the
// replacement may run at all (a suspension, --skip-if-ok-within,
// --max-waiters): one that may not leaves the running job alone and is
// busy as any exec. An exit status if it may not run, or if a stop signal
// ended it.
std::optional<ExitCode> replace_holder(lock::Locker& locker, Take& take, const lock::Owner& owner, SignalFd& signals,
                                       const exec::Policy& policy) {
  if (!take.reenter.empty()) {
    return std::nullopt;
  }
  for (const auto& name : take.names) {
    if (const auto refused = refusal(locker, name, take.claim)) {
      return report_busy(name, *refused, take);
    }
  }
  bool revoked = false;
  for (const auto& name : take.names) {
    const Revoked r = revoke_holders(locker, name, owner, policy.kill_after, signals);
    switch (r.kind) {
      case Revoked::Kind::k_stopped:
        log_warning("{}", r.said);
        return ExitCode::for_signal(r.signal);
      case Revoked::Kind::k_not_held:
        break;
      case Revoked::Kind::k_given_back:
        log_notice("{} (--on-busy replace)", r.said);
        revoked = true;
        break;
      case Revoked::Kind::k_still_held:
        log_warning("{} (--on-busy replace)", r.said);
        revoked = true;
        break;
    }
  }
  // The lock was given back to the line: wait for it a little at least.
  constexpr Millis k_least_wait{5000};
  if (revoked && take.wait && *take.wait < k_least_wait) {
    take.wait = k_least_wait;
  }
  return std::nullopt;
}

}  // namespace

ExitCode run_exec(const ExecOptions& o, const GlobalOptions& g, const Cancel& stop) {
  Take take = parse_take(o.take, o.shared);
  take_history(o, take.claim, take.names.size());
  if (o.replace && take.claim.mode != lock::Claim::Mode::k_exclusive) {
    throw UsageError("--on-busy replace revokes the holder of a plain lock; it does not go with --limit or --shared");
  }
  check_hold_at_least(o.hold_at_least, take.claim);
  take.claim.min_hold = o.hold_at_least;
  exec::Policy policy{
      .on_lost = o.on_lost, .kill_after = o.kill_after, .max_runtime = o.max_runtime, .warn_after = o.warn_after};
  // The grace period must end while the lock is still ours.
  policy.kill_after = std::min(policy.kill_after, take.ttl / 3);
  std::vector<std::string> argv = command_argv(o);
  Resolved r = resolve(g);
  if (!r.credentials_warning.empty()) {
    log_warning(
        "{}, and the environment can carry only one: a redlock inside the command gets none (give it "
        "its own --redis URLs with passwords)",
        r.credentials_warning);
  }

  // Blocked before any thread or child exists; read through one descriptor.
  SignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD});
  lock::Locker locker(r.endpoints, r.options, stop);
  const lock::Owner owner = make_owner(getpid(), argv);
  if (o.replace) {
    if (const auto stopped = replace_holder(locker, take, owner, signals, policy)) {
      return *stopped;
    }
  }
  auto taken = take_with_room(locker, take, owner, signals, policy);
  if (const auto* status = std::get_if<ExitCode>(&taken)) {
    return *status;
  }
  HeldAll all = std::get<HeldAll>(std::move(taken));
  start_runs(locker, take, all, owner);
  const lock::Acquired& first = all.of(take.first);
  set_log_field("fence", std::to_string(first.fence), true);
  say_held_warnings();  // the lock is held: a server that refused is news now, not after CMD
  for (const auto& h : all.held) {
    report_abandoned(h.name, h.got);
  }

  // REDLOCK_EXEC_PID and REDLOCK_EXEC_LEVEL(S) tell a release inside CMD
  // which levels are this exec's, so that it never takes them.
  std::vector<std::pair<std::string, std::string>> add = {{"REDLOCK_NAME", take.first},
                                                          {"REDLOCK_TOKEN", all.token()},
                                                          {"REDLOCK_FENCE", std::to_string(first.fence)},
                                                          {"REDLOCK_FENCES", numbered_names(all, false)},
                                                          {"REDLOCK_URL", display_endpoints(r.endpoints)},
                                                          {"REDLOCK_PREFIX", r.options.prefix},
                                                          {"REDLOCK_EXEC_PID", std::to_string(getpid())},
                                                          {"REDLOCK_EXEC_LEVEL", std::to_string(first.count)},
                                                          {"REDLOCK_EXEC_LEVELS", numbered_names(all, true)}};
  add.insert(add.end(), r.credentials_env.begin(), r.credentials_env.end());
  exec::Command cmd{argv, command_env(add, r.credentials_unset)};
  exec::GroupGuard guard;  // reaped once the lock is released; outlives the renewer, which tells it renewals
  exec::LockerLease lease(locker, all.names(), all.token(), take.ttl);
  exec::Renewer renewer(lease, all.sent(), all.valid_until());
  exec::RevokeListener revocation(locker, all.names(), all.token());
  const exec::Finished done = exec::supervise(cmd, renewer, policy, signals, guard, &revocation);
  const ExitCode status = release_after(locker, take, all, done, signals, owner, revocation);
  guard.stop();
  return status;
}

}  // namespace redlock::cli
