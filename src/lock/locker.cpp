#include "lock/locker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "redis/cluster.hpp"
#include "redis/fanout.hpp"
#include "redis/script.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"
#include "util/token.hpp"

namespace redlock::lock {

Millis clock_drift(Millis ttl) {
  return Millis(ttl.count() / 100 + 2);
}

Locker::Locker(std::vector<redis::Endpoint> endpoints, Options options, Cancel cancel)
    : m_servers(std::move(endpoints), std::move(options), cancel) {}

Locker::~Locker() = default;

namespace {

[[noreturn]] void throw_foreign(const std::string& name, const std::string& what, const std::string& where) {
  throw Error(ExitStatus::k_protocol, foreign_message(name, what, " on " + where));
}

// A NAME held in another mode than asked for: say what it is and how to ask.
[[noreturn]] void throw_mismatch(const std::string& name, const Claim& claim, Claim::Mode held_mode,
                                 const std::string& held_limit) {
  std::string held = held_mode == Claim::Mode::k_semaphore ? fmt::format("a semaphore with --limit {}", held_limit)
                     : held_mode == Claim::Mode::k_shared  ? std::string("shared by readers (--shared)")
                                                           : std::string("a plain lock (--limit 1)");
  std::string asked = claim.mode == Claim::Mode::k_semaphore ? fmt::format("--limit {}", claim.limit)
                      : claim.mode == Claim::Mode::k_shared  ? std::string("--shared")
                                                             : std::string("a plain lock");
  throw UsageError(fmt::format("{} is held as {}, but {} was asked for; use the same options as its holders",
                               escape_for_terminal(name), held, asked));
}

// What an acquire round comes to, apart from its decision.
struct Round {
  const std::string& name;
  const Claim& claim;
  std::string token;  // the token that holds the lock if granted
  Millis ttl;
  Millis validity;
  TimePoint sent;
  const std::vector<std::string>& servers;
};

// The round's result once its decision is final: a grant with what it
// holds, a busy answer, or the error it comes to (thrown).
AcquireOutcome acquire_outcome(const AcquireDecision& d, const std::vector<AcquireVote>& votes, const Round& r) {
  const size_t n = votes.size();
  switch (d.verdict) {
    case AcquireDecision::Verdict::k_granted: {
      Acquired got;
      got.token = r.token;
      got.fence = d.fence;
      got.count = d.count;
      got.ttl = held_lease(r.ttl, votes);
      got.validity = r.validity;
      got.sent = r.sent;
      got.valid_until = r.sent + r.ttl - clock_drift(r.ttl);
      got.voted = d.voted;
      for (const auto& v : votes) {
        got.busy.push_back(v.kind == AcquireVote::Kind::k_busy);
      }
      got.abandoned = d.abandoned;
      return got;
    }
    case AcquireDecision::Verdict::k_mismatch:
      throw_mismatch(r.name, r.claim, d.held_mode, d.held_limit);
    case AcquireDecision::Verdict::k_upgrade:
      throw UsageError(
          fmt::format("{} is held by this token as a reader's share (--shared); a reader cannot "
                      "upgrade to exclusive: release the share first, or take it with --shared",
                      escape_for_terminal(r.name)));
    case AcquireDecision::Verdict::k_unavailable:
      throw quorum_failure(d.failures, n, grant_quorum(n, r.claim));
    case AcquireDecision::Verdict::k_foreign:
      if (n == 1) {
        throw_foreign(r.name, d.foreign_type, r.servers[0]);
      }
      throw Error(ExitStatus::k_protocol,
                  foreign_message(r.name, d.foreign_type, fmt::format(" on {} of {} servers", d.foreign, n)));
    case AcquireDecision::Verdict::k_skipped: {
      Busy skipped;
      skipped.skipped = d.last_ok;
      return skipped;
    }
    case AcquireDecision::Verdict::k_suspended: {
      Busy suspended;
      suspended.suspended = d.suspension;
      return suspended;
    }
    case AcquireDecision::Verdict::k_busy:
    case AcquireDecision::Verdict::k_lost_race:
      break;
  }
  Busy busy;
  busy.ttl_left = d.ttl_left;
  busy.host = d.host;
  busy.pid = d.pid;
  busy.cmd = d.cmd;
  busy.holders = d.holders;
  busy.kept = d.kept;
  busy.held = d.held;
  busy.line_full = d.line_full;
  busy.place = d.place;
  busy.ahead = d.ahead;
  busy.ticket = d.ticket;
  busy.lost_race = d.verdict == AcquireDecision::Verdict::k_lost_race;
  return busy;
}

}  // namespace

// Redlock fencing: servers in the quorum whose counter is below the
// quorum's maximum are raised to it before the lock counts as held; a server
// that cannot be raised no longer counts.
void Locker::raise_fences(const Keys& keys, const std::string& holder, const AcquireDecision& d,
                          std::vector<AcquireVote>& votes) {
  const std::vector<bool> behind = fences_to_raise(votes, d);
  if (std::find(behind.begin(), behind.end(), true) == behind.end()) {
    return;
  }
  auto raised = m_servers.round(to_args(keys, RaiseFenceArgs{.token = holder, .fence = d.fence}),
                                lock::script(ScriptName::k_raise_fence), behind);
  const auto said = tally<RaiseVote>(raised, m_servers.names(), "raise-fence", read_raise_answer);
  for (size_t i = 0; i < votes.size(); ++i) {
    if (behind[i] && said[i].failure) {
      votes[i].kind = AcquireVote::Kind::k_failed;
      votes[i].failure = said[i].failure;
    }
  }
}

void Locker::undo_votes(const std::string& name, const std::string& token, const std::string& reenter,
                        const std::vector<AcquireVote>& votes, const std::vector<bool>& failed, bool drop_run) {
  const size_t n = votes.size();
  std::vector<bool> fresh(n, false);
  std::vector<bool> reentered(n, false);
  for (size_t i = 0; i < n; ++i) {
    fresh[i] = votes[i].kind == AcquireVote::Kind::k_granted || votes[i].taken == AcquireVote::Kind::k_granted;
    reentered[i] = votes[i].kind == AcquireVote::Kind::k_reentered || votes[i].taken == AcquireVote::Kind::k_reentered;
  }
  undo(name, token, fresh, failed, false, drop_run);
  if (!reenter.empty()) {
    undo(name, reenter, reentered, failed, false);
  }
}

AcquireOutcome Locker::try_acquire(const std::string& name, Millis ttl, const std::string& reenter, const Owner& owner,
                                   const Claim& claim, const Place& place) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const std::string token = claim.token.empty() ? random_token() : claim.token;
  const auto start = Clock::now();
  const AcquireArgs args{.token = token,
                         .ttl = ttl,
                         .host = owner.host,
                         .pid = owner.pid,
                         .cmd = owner.cmd,
                         .reenter = reenter,
                         .mode = claim.mode,
                         .limit = claim.limit,
                         .min_hold = claim.min_hold,
                         .waiter = place.id,
                         .fair = place.fair,
                         .lease = place.lease,
                         .wait_left = place.wait_left,
                         .ticket = place.ticket,
                         .max_waiters = claim.max_waiters,
                         .record_run = claim.record_run,
                         .run_later = claim.run_later,
                         .skip_ok_within = claim.skip_ok_within,
                         .note = owner.note};
  const bool reentering = !reenter.empty();
  // The round ends once a quorum granted (or can no longer). A server still
  // out then may grant later (a stopped server runs the script when it
  // wakes up, with its full TTL). Granted, that hold is under this token,
  // which renews and releases it with the others; not granted, the release
  // below goes to it too, on the socket the acquire went out on (so that it
  // runs after it), or on a new one if the acquire never left. Either way
  // its TTL bounds it, were it to miss both.
  const Servers::Decided decided = [&](const std::vector<Answer>& in_so_far, const std::vector<bool>& in) {
    return acquire_decided(votes_in(acquire_votes(in_so_far, m_servers.names(), m_servers.options().min_replicas), in),
                           claim, reentering);
  };
  auto answers = m_servers.round(to_args(keys, args), lock::script(ScriptName::k_acquire), {}, {}, true, decided);
  const size_t n = m_servers.size();
  std::vector<AcquireVote> votes = acquire_votes(answers, m_servers.names(), m_servers.options().min_replicas);
  std::vector<bool> failed(n, false);
  for (size_t i = 0; i < n; ++i) {
    failed[i] = answers[i].failure.has_value();
  }
  if (const auto why = m_servers.shared_node(answers)) {
    undo_votes(name, token, reenter, votes, failed, claim.starts_run());
    throw UsageError(*why);
  }
  AcquireDecision d = decide_acquire(votes, claim, reentering, ttl);

  const bool granted = d.verdict == AcquireDecision::Verdict::k_granted;
  if (granted && n > 1) {
    raise_fences(keys, d.fresh ? token : reenter, d, votes);
  }
  const auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start);
  const Millis validity = ttl - elapsed - clock_drift(ttl);
  d = decide_acquire(votes, claim, reentering, validity);

  if (std::find(d.release_fresh.begin(), d.release_fresh.end(), true) != d.release_fresh.end()) {
    undo(name, token, d.release_fresh, failed, d.announce_release, claim.starts_run());
  }
  if (std::find(d.undo_reentry.begin(), d.undo_reentry.end(), true) != d.undo_reentry.end()) {
    undo(name, reenter, d.undo_reentry, failed, false);
  }
  if (granted && d.verdict != AcquireDecision::Verdict::k_granted && validity <= Millis(0)) {
    // Granted, but the answers came after the lease they granted had run
    // out: Redis is too slow for this TTL, nobody else holds the lock.
    throw Error(ExitStatus::k_unavailable,
                fmt::format("acquiring {} took {}, and its {} TTL had run out by then: it was given back (is "
                            "Redis slow or far away? a longer --ttl helps)",
                            escape_for_terminal(name), format_duration(elapsed), format_duration(ttl)),
                true);
  }
  return acquire_outcome(d, votes,
                         {.name = name,
                          .claim = claim,
                          .token = d.fresh ? token : reenter,
                          .ttl = ttl,
                          .validity = validity,
                          .sent = start,
                          .servers = m_servers.names()});
}

void Locker::undo(const std::string& name, const std::string& token, const std::vector<bool>& targets,
                  const std::vector<bool>& just_failed, bool announce, bool drop_run) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const redis::Timeouts brief{m_servers.options().timeouts.connect,
                              std::min(m_servers.options().timeouts.command, Millis(250))};
  // A round cut short by the Cancel (a stop signal) left its
  // connection open: the release goes on it, right behind the acquire, so
  // that a stopped server that wakes up runs both, in that order.
  std::vector<bool> fresh(m_servers.size(), false);
  for (size_t i = 0; i < m_servers.size(); ++i) {
    if (targets[i] && just_failed[i] && !m_servers.connection(i).connected()) {
      fresh[i] = true;
      m_servers.reconnect(i, brief);
    } else if (targets[i] && just_failed[i]) {
      m_servers.connection(i).keep_for_follow_up(brief.command);  // a round that timed out: right behind its request
      fresh[i] = true;                                            // and a new connection after it
    }
  }
  std::vector<bool> hung(m_servers.size(), false);
  for (size_t i = 0; i < m_servers.size(); ++i) {
    hung[i] = targets[i] && just_failed[i];
  }
  (void)m_servers.round(
      to_args(keys, ReleaseArgs{.token = token, .quiet = !announce, .run_end = drop_run ? "drop" : ""}),
      lock::script(ScriptName::k_release), targets, hung);
  for (size_t i = 0; i < m_servers.size(); ++i) {
    if (fresh[i]) {
      m_servers.reconnect(i, m_servers.options().timeouts);
    }
  }
}

ReleaseOutcome Locker::release(const std::string& name, const std::string& token, long long floor, bool drop_run) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  // One level, with no minimum hold: the release script's simplest case.
  auto answers =
      m_servers.round(to_args(keys, ReleaseArgs{.token = token, .floor = floor, .run_end = drop_run ? "drop" : ""}),
                      lock::script(ScriptName::k_release), {}, {}, true, release_round_decided());
  m_servers.refuse_shared_node(answers);
  const std::vector<ReleaseVote> votes = release_votes(name, answers);
  const ReleaseOutcome out = decide_release(votes);
  if (out == ReleaseOutcome::k_not_held) {
    m_servers.require_majority(failures_of(votes));
  }
  return out;
}

Servers::Decided Locker::release_round_decided() const {
  return [this](const std::vector<Answer>& in_so_far, const std::vector<bool>& in) {
    return release_decided(
        votes_in(tally<ReleaseVote>(in_so_far, m_servers.names(), "release", read_release_answer), in));
  };
}

std::vector<ReleaseVote> Locker::release_votes(const std::string& name, const std::vector<Answer>& answers) const {
  std::vector<ReleaseVote> votes = tally<ReleaseVote>(answers, m_servers.names(), "release", read_release_answer);
  if (votes.size() == 1 && votes[0].kind == ReleaseVote::Kind::k_foreign) {
    throw_foreign(name, votes[0].foreign_type, m_servers.names()[0]);
  }
  return votes;
}

Ended Locker::finish(const std::string& name, const std::string& token, Millis min_hold, bool whole, long long floor,
                     const std::optional<RunEnd>& run) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  // EVAL with the body at once: a stop signal may cut this round short (exec's
  // end), and a NOSCRIPT answer nobody reads would leave the hold in place.
  ReleaseArgs args{.token = token,
                   .min_hold = min_hold,
                   .levels = whole ? ReleaseArgs::Levels::k_all : ReleaseArgs::Levels::k_one,
                   .floor = floor};
  if (run) {
    args.run_end = outcome_name(run->outcome);
    args.exit = run->exit ? std::to_string(*run->exit) : "";
    args.host = run->owner.host;
    args.pid = run->owner.pid;
    args.cmd = run->owner.cmd;
    args.fence = run->fence;
  }
  auto answers = m_servers.round(to_args(keys, args), lock::script(ScriptName::k_release), {},
                                 std::vector<bool>(m_servers.size(), true), true, release_round_decided());
  const std::vector<ReleaseVote> votes = release_votes(name, answers);
  const Ended ended = decide_finish(votes);
  if (ended.kind == Ended::Kind::k_not_held) {
    m_servers.require_majority(failures_of(votes));
  }
  return ended;
}

std::optional<RunSeen> Locker::start_run(const std::string& name, const std::string& token, const Owner& owner) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const auto answers = m_servers.round(
      to_args(keys, StartRunArgs{.token = token, .host = owner.host, .pid = owner.pid, .cmd = owner.cmd}),
      lock::script(ScriptName::k_start_run), {});
  for (size_t i = 0; i < answers.size(); ++i) {
    if (answers[i].failure) {
      log_debug("{}: the run of {} did not begin there: {}", m_servers.names()[i], escape_for_terminal(name),
                answers[i].failure->message);
      continue;
    }
    if (const auto started = read_start_run_answer(answers[i].reply); started && started->abandoned) {
      return started->abandoned;
    }
  }
  return std::nullopt;
}

RenewOutcome Locker::renew(const std::string& name, const std::string& token, Millis ttl) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const auto start = Clock::now();
  // A lock taken on a master that Sentinel has since replaced is lost: the
  // new master may not have it, and another client may take it there while
  // the old master still accepts our renewals.
  const std::vector<bool> moved = m_servers.failed_over();
  std::vector<bool> targets(moved.size());
  std::transform(moved.begin(), moved.end(), targets.begin(), [](bool m) { return !m; });
  // A renewal a straggler confirms too late counts at the next round,
  // which asks it again.
  const Servers::Decided decided = [&](const std::vector<Answer>& in_so_far, const std::vector<bool>& in) {
    return renew_decided(
        votes_in(renew_votes(in_so_far, m_servers.names(), m_servers.options().min_replicas, moved), in));
  };
  auto answers = m_servers.round(to_args(keys, RenewArgs{.token = token, .ttl = ttl}),
                                 lock::script(ScriptName::k_renew), targets, {}, true, decided);
  m_servers.refuse_shared_node(answers);
  const std::vector<RenewVote> votes = renew_votes(answers, m_servers.names(), m_servers.options().min_replicas, moved);
  const auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start);
  Renewed r{ttl, ttl - elapsed - clock_drift(ttl), start + ttl - clock_drift(ttl)};
  const RenewDecision d = decide_renew(votes, r.validity);
  switch (d.verdict) {
    case RenewDecision::Verdict::k_renewed:
      r.ttl = held_lease(ttl, votes);
      return r;
    case RenewDecision::Verdict::k_unavailable:
      throw quorum_failure(d.failures, m_servers.size(), quorum());
    case RenewDecision::Verdict::k_not_held:
      break;
  }
  return NotHeld{d.foreign, d.foreign_type};
}

void Locker::leave(const std::string& name, const std::string& id, const std::vector<bool>& targets) {
  if (id.empty()) {
    return;
  }
  const Keys keys = keys_for(m_servers.options().prefix, name);
  try {
    (void)m_servers.round(to_args(keys, LeaveArgs{.waiter = id}), lock::script(ScriptName::k_leave), targets);
  } catch (const Error& e) {
    log_debug("could not leave the line for {}: {}", name, e.what());
  }
}

Broken Locker::break_lock(const std::string& name, const Owner& by) {
  return break_runs(name, {}, by);
}

Broken Locker::break_runs(const std::string& name, const std::vector<std::string>& runs, const Owner& by) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  std::string only;
  for (const auto& run : runs) {
    only += (only.empty() ? "" : " ") + (run.empty() ? std::string("-") : run);
  }
  if (!runs.empty() && only.empty()) {
    only = "-";
  }
  auto answers = m_servers.round(to_args(keys, BreakArgs{.runs = only, .host = by.host, .pid = by.pid}),
                                 lock::script(ScriptName::k_break), {});
  const std::vector<BreakVote> votes = tally<BreakVote>(answers, m_servers.names(), "break", read_break_answer);
  Broken out;
  for (const BreakVote& v : votes) {
    out.servers.push_back(v.failure                              ? "unreachable"
                          : v.kind == BreakVote::Kind::k_broken  ? "broken"
                          : v.kind == BreakVote::Kind::k_foreign ? "foreign"
                                                                 : "free");
  }
  out.decision = decide_break(votes);
  if (out.decision.verdict == BreakDecision::Verdict::k_unavailable) {
    throw quorum_failure(out.decision.failures, m_servers.size(), quorum());
  }
  return out;
}

}  // namespace redlock::lock
