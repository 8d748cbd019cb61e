#include "lock/locker.hpp"

#include <algorithm>

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"
#include "util/token.hpp"

namespace redlock::lock {

Locker::Locker(std::vector<redis::Endpoint> endpoints, Options options, Cancel cancel)
    : m_servers(std::move(endpoints), std::move(options), cancel) {}

Locker::~Locker() = default;

std::vector<RaiseVote> Locker::raise_fences(const Keys& keys, const std::string& holder, long long fence,
                                            const std::vector<bool>& behind) {
  if (std::find(behind.begin(), behind.end(), true) == behind.end()) {
    return {};
  }
  auto raised = m_servers.round(to_args(keys, RaiseFenceArgs{.token = holder, .fence = fence}),
                                lock::script(ScriptName::k_raise_fence), behind);
  return tally<RaiseVote>(raised, m_servers.names(), "raise-fence", read_raise_answer);
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
  const std::vector<AcquireVote> votes = acquire_votes(answers, m_servers.names(), m_servers.options().min_replicas);
  std::vector<bool> failed(n, false);
  for (size_t i = 0; i < n; ++i) {
    failed[i] = answers[i].failure.has_value();
  }
  if (const auto why = m_servers.shared_node(answers)) {
    undo_votes(name, token, reenter, votes, failed, claim.starts_run());
    throw UsageError(*why);
  }
  // Redlock fencing: the servers of the quorum whose counter is below its
  // largest fence are raised to it before the lock counts as held.
  const AcquireDecision round = acquire_verdict(votes, claim, reentering, ttl);
  const std::vector<RaiseVote> raised =
      raise_fences(keys, round.fresh ? token : reenter, round.fence, fences_to_raise(votes, round));
  const AcquireResult result = decide_acquire(votes, raised,
                                              {.name = name,
                                               .claim = claim,
                                               .token = token,
                                               .reenter = reenter,
                                               .ttl = ttl,
                                               .sent = start,
                                               .elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start),
                                               .servers = m_servers.names()});
  const auto any = [](const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); };
  if (any(result.release_fresh)) {
    undo(name, token, result.release_fresh, failed, result.announce_release, claim.starts_run());
  }
  if (any(result.undo_reentry)) {
    undo(name, reenter, result.undo_reentry, failed, false);
  }
  if (result.error) {
    throw Error(*result.error);
  }
  return result.outcome;
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
    throw Error(ExitStatus::k_protocol, foreign_message(name, votes[0].foreign_type, " on " + m_servers.names()[0]));
  }
  return votes;
}

Ended Locker::finish(const std::string& name, const std::string& token, Millis min_hold, bool whole, long long floor,
                     const std::optional<RunEnd>& run) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  // EVALSHA, and EVAL on NOSCRIPT, as every script is sent: a stop signal
  // that cuts the round short abandons it whichever went (exec's end: the
  // TTL frees the lock), and the body is 19 KB that Redis would read and
  // hash at every exec. Over several servers (Redlock) the round ends once
  // a majority decides it, and a NOSCRIPT from a server still out would go
  // unread and leave its hold in place: those get EVAL with the body.
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
  auto answers =
      m_servers.round(to_args(keys, args), lock::script(ScriptName::k_release), {},
                      std::vector<bool>(m_servers.size(), m_servers.size() > 1), true, release_round_decided());
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
