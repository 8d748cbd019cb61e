// revoke NAME: a graceful break. The holders are asked to stop (an exec
// hears it at once and ends its command), and revoke waits for the lock to
// be given back; a holder that is not an exec is broken after the grace.

#include "cli/revoke.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "cli/take/take.hpp"
#include "ledger/history.hpp"
#include "lock/layout.hpp"
#include "lock/marks.hpp"
#include "status/survey.hpp"
#include "status/verdict.hpp"
#include "util/log.hpp"
#include "util/signals.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// How long revoke waits without --grace: the holders stop after their own
// --kill-after (5s by default, at most a third of their TTL).
constexpr Millis k_default_wait{10'000};
// And beyond the grace: for a command killed at its end to be reaped and
// its lock given back.
constexpr Millis k_release_margin{1'000};
constexpr Millis k_poll{200};

// "web-3 pid 4411 (./deploy.sh)", or "no holder" for a lock kept for its
// minimum hold.
std::string describe(const lock::Revoking::Asked& a) {
  if (a.run.empty()) {
    return "nobody (it is kept for --hold-at-least)";
  }
  std::string who = fmt::format("{} pid {}", escape_for_terminal(a.host), escape_for_terminal(a.pid));
  if (!a.cmd.empty()) {
    who += fmt::format(" ({})", escape_command(a.cmd));
  }
  return who;
}

std::string describe_all(const std::vector<lock::Revoking::Asked>& asked) {
  std::vector<std::string> each;
  each.reserve(asked.size());
  for (const auto& a : asked) {
    each.push_back(describe(a));
  }
  return spoken_list(each);
}

// The runs among `runs` that still hold `name`, as a quorum sees it.
std::vector<std::string> still_holding(lock::Locker& locker, const std::string& name,
                                       const std::vector<std::string>& runs) {
  const std::vector<std::vector<lock::ServerView>> views = status::Survey(locker.servers()).inspect({name});
  const status::Verdict v = status::judge(name, views.at(0));
  std::vector<std::string> out;
  for (const lock::HolderView& h : v.holders) {
    const std::string run = h.kept ? std::string() : lock::hold_id(h.token);
    if (std::find(runs.begin(), runs.end(), run) != runs.end()) {
      out.push_back(run);
    }
  }
  return out;
}

// The holders asked whose runs are among `runs`.
std::vector<lock::Revoking::Asked> asked_among(const lock::Revoking& asked, const std::vector<std::string>& runs) {
  std::vector<lock::Revoking::Asked> out;
  for (const auto& a : asked.holders) {
    if (std::find(runs.begin(), runs.end(), a.run) != runs.end()) {
      out.push_back(a);
    }
  }
  return out;
}

// Whether holder `a` may be an exec that heard the revoke: its run's own
// channel reached it, or an exec that listens only on the lock's channel
// (a version before those) heard it, and could be any of the holders.
bool may_listen(const lock::Revoking& asked, const lock::Revoking::Asked& a) {
  return a.listening || asked.unidentified > 0;
}

}  // namespace

namespace {

// A lock only kept for --hold-at-least: no process holds it, nobody to wait
// for: its hold is broken at once.
Revoked break_kept(lock::Locker& locker, const std::string& name, const std::vector<std::string>& runs,
                   const lock::Owner& by) {
  const std::string shown = escape_for_terminal(name);
  const lock::Broken b = locker.break_runs(name, runs, by);
  return {Revoked::Kind::k_given_back, 0,
          b.decision.verdict == lock::BreakDecision::Verdict::k_broken
              ? fmt::format("revoked {}: it was only kept for --hold-at-least, with nothing running under it; "
                            "broke it",
                            shown)
              : fmt::format("revoked {}: its hold kept for --hold-at-least ended", shown)};
}

// The runs of `left` (holders asked that are still there) that no exec
// listens for.
std::vector<std::string> unheard_among(const lock::Revoking& asked, const std::vector<std::string>& left) {
  std::vector<std::string> unheard;
  for (const auto& a : asked_among(asked, left)) {
    if (!may_listen(asked, a)) {
      unheard.push_back(a.run);
    }
  }
  return unheard;
}

}  // namespace

Revoked revoke_holders(lock::Locker& locker, const std::string& name, const lock::Owner& by,
                       std::optional<Millis> grace, SignalFd& signals) {
  const std::string shown = escape_for_terminal(name);
  const lock::Revoking asked = lock::revoke(locker.servers(), name, by, grace.value_or(Millis(0)));
  say_held_warnings();
  if (asked.holders.empty()) {
    return {Revoked::Kind::k_not_held, 0, fmt::format("{} is not held: nothing to revoke", shown)};
  }
  std::vector<std::string> runs;
  runs.reserve(asked.holders.size());
  for (const auto& a : asked.holders) {
    runs.push_back(a.run);
  }
  const std::string who = describe_all(asked.holders);
  if (std::all_of(asked.holders.begin(), asked.holders.end(),
                  [](const lock::Revoking::Asked& a) { return a.run.empty(); })) {
    return break_kept(locker, name, runs, by);
  }
  log_debug("asked {} to give {} back; {} listening", who, shown, asked.listeners);
  const TimePoint start = Clock::now();
  const TimePoint deadline = start + grace.value_or(k_default_wait) + k_release_margin;
  const auto took = [&start] { return format_duration(std::chrono::ceil<Millis>(Clock::now() - start)); };
  locker.set_cancel(signals.cancel());
  while (true) {
    if (still_holding(locker, name, runs).empty()) {
      locker.reset_cancel();
      return {Revoked::Kind::k_given_back, 0, fmt::format("revoked {}: {} gave it back after {}", shown, who, took())};
    }
    if (Clock::now() >= deadline) {
      break;
    }
    if (!signals.cancel().sleep_until(std::min(deadline, Clock::now() + k_poll))) {
      const int sig = signals.take();
      locker.reset_cancel();
      return {Revoked::Kind::k_stopped, sig,
              fmt::format("interrupted by SIG{} while waiting for {} to be given back; {} was asked to stop and may "
                          "still do so",
                          sigabbrev_np(sig), shown, who)};
    }
  }
  locker.reset_cancel();
  // After the grace: the holders asked that did not leave and that no exec
  // listens for (a script's acquire, an exec of a version before revoke)
  // are broken, only their holds; an exec that heard and did not stop is
  // left to be stopped (a break would let the next holder run beside it).
  const std::vector<std::string> left = still_holding(locker, name, runs);
  const std::vector<std::string> unheard = unheard_among(asked, left);
  std::string broke;
  if (!unheard.empty() &&
      locker.break_runs(name, unheard, by).decision.verdict == lock::BreakDecision::Verdict::k_broken) {
    broke = describe_all(asked_among(asked, unheard));
  }
  // Who holds it now, of those asked: not who held it when the grace began,
  // and read again after a break rather than assumed gone (a 0 says free).
  const std::vector<std::string> still = broke.empty() && unheard.empty() ? left : still_holding(locker, name, runs);
  if (still.empty()) {
    std::vector<std::string> gone;
    for (const auto& a : asked.holders) {
      if (std::find(unheard.begin(), unheard.end(), a.run) == unheard.end()) {
        gone.push_back(a.run);
      }
    }
    if (broke.empty()) {
      return {Revoked::Kind::k_given_back, 0, fmt::format("revoked {}: {} gave it back after {}", shown, who, took())};
    }
    if (gone.empty()) {
      return {Revoked::Kind::k_given_back, 0,
              fmt::format("revoked {}: no exec of {} listens, and it was not given back within {}; broke it", shown,
                          broke, took())};
    }
    return {Revoked::Kind::k_given_back, 0,
            fmt::format("revoked {}: {} gave it back; no exec of {} listens, and it was not given back within {}; "
                        "broke its hold",
                        shown, describe_all(asked_among(asked, gone)), broke, took())};
  }
  return {Revoked::Kind::k_still_held, 0,
          fmt::format("{} is still held by {} after {}, though it was asked to stop; redlock break {} frees it{}",
                      shown, describe_all(asked_among(asked, still)), took(), shown,
                      broke.empty() ? std::string()
                                    : fmt::format(" (broke the hold of {}, which no exec listens for)", broke))};
}

ExitCode run_revoke(const RevokeOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  Resolved r = resolve(g);
  SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  lock::Locker locker(r.endpoints, r.options, stop);
  const Revoked done = revoke_holders(locker, o.name, make_owner(getpid(), {}), o.grace, signals);
  switch (done.kind) {
    case Revoked::Kind::k_given_back:
      if (!write_stdout(done.said + "\n")) {
        log_warning("could not write to standard output; the lock was revoked as asked");
        return ExitStatus::k_output;
      }
      return ExitStatus::k_ok;
    case Revoked::Kind::k_not_held:
      log_warning("{}", done.said);
      return ExitStatus::k_no;
    case Revoked::Kind::k_stopped:
      log_warning("{}", done.said);
      return ExitCode::for_signal(done.signal);
    case Revoked::Kind::k_still_held:
      break;
  }
  log_warning("{}", done.said);
  return ExitStatus::k_busy;
}

std::optional<lock::Busy> refusal(lock::Locker& locker, const std::string& name, const lock::Claim& claim) {
  const std::vector<lock::ServerView> views = status::Survey(locker.servers()).inspect({name}).at(0);
  const size_t n = views.size();
  // A grant needs a quorum: refused by more servers than it can do without,
  // it is refused.
  const size_t spare = n - std::min(n, lock::grant_quorum(n, claim));
  size_t suspended = 0;
  size_t full = 0;
  lock::Busy out;
  for (const lock::ServerView& v : views) {
    if (v.error || v.foreign) {
      continue;
    }
    if (v.suspension) {
      ++suspended;
      out.suspended = out.suspended ? out.suspended : v.suspension;
    }
    if (claim.max_waiters > 0 && v.waiting >= claim.max_waiters) {
      ++full;
      out.ahead = std::max(out.ahead, v.waiting);
    }
    if (out.host.empty() && !v.holders.empty()) {
      const lock::HolderView& h = v.holders.front();
      out.host = h.host;
      out.pid = std::to_string(h.pid);
      out.cmd = h.cmd;
      out.holders = static_cast<long long>(v.holders.size());
      out.ttl_left = Millis(std::max(0LL, h.ttl_ms));
    }
  }
  if (suspended > spare) {
    lock::Busy busy;
    busy.suspended = out.suspended;
    return busy;
  }
  out.suspended.reset();
  if (claim.skip_ok_within > Millis(0)) {
    const lock::LastRuns runs = ledger::last_runs(locker.servers(), {name}).at(0);
    if (const auto& ok = runs.last_ok; ok && ok->end_ms && *ok->end_ms + claim.skip_ok_within.count() > runs.now_ms) {
      lock::Busy busy;
      busy.skipped = lock::RunSeen{ok->host, std::to_string(ok->pid), 0, *ok->end_ms, runs.now_ms};
      return busy;
    }
  }
  if (full > spare) {
    out.line_full = true;
    return out;
  }
  return std::nullopt;
}

}  // namespace redlock::cli
