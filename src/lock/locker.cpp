#include "lock/locker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "lock/answers.hpp"
#include "lock/layout.hpp"
#include "redis/cluster.hpp"
#include "redis/fanout.hpp"
#include "redis/script.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"
#include "util/token.hpp"

namespace redlock::lock {

using redis::Reply;

Keys keys_for(const std::string& prefix, const std::string& name) {
  std::string lock = prefix + "{" + name + "}";
  return Keys{lock, lock + ":fence", lock + ":released", lock + ":queue"};
}

Millis clock_drift(Millis ttl) {
  return Millis(ttl.count() / 100 + 2);
}

namespace {

// The lease a hold has after a round: never shorter than the TTL asked for
// (re-entry and renewal never shorten one), and where every server that
// counted kept a longer one, the shortest of those.
template <typename Vote, typename Counted>
Millis held_lease(Millis ttl, const std::vector<Vote>& votes, Counted counted) {
  std::optional<Millis> shortest;
  for (const auto& v : votes) {
    if (counted(v)) {
      shortest = shortest ? std::min(*shortest, v.lease) : v.lease;
    }
  }
  return std::max(ttl, shortest.value_or(ttl));
}

redis::Failure unexpected_reply(const redis::Endpoint& where, std::string_view to) {
  return redis::Failure{ExitStatus::k_protocol,
                        fmt::format("Redis at {} sent an unexpected reply to {} (is it a Redis server, and are the "
                                    "keys under --prefix redlock's alone?)",
                                    where.display(), to)};
}

}  // namespace

namespace {

constexpr std::string_view k_replicas_hint = "lower --min-replicas or attach replicas";

// A server that answered, but whose replicas did not all acknowledge.
redis::Failure replicas_failure(const redis::Endpoint& where, int wanted, const char* what) {
  return redis::Failure{ExitStatus::k_unavailable,
                        fmt::format("Redis at {}: fewer than {} replica{} acknowledged the {} in time "
                                    "(--min-replicas {}; see INFO replication there): {}",
                                    where.display(), wanted, wanted == 1 ? "" : "s", what, wanted, k_replicas_hint)};
}

}  // namespace

// What one server said in one round.
struct Locker::Answer {
  std::optional<redis::Failure> failure;  // no usable answer: unreachable, refused, error reply
  Reply reply;                            // the script's reply when there is no failure
  std::string kind;                       // first element of the script's reply
  bool replicas_short = false;            // WAIT came back with fewer replicas than asked
  std::string node;                       // the node that ran the script, "" if unknown
};

Locker::Locker(std::vector<redis::Endpoint> endpoints, Options options, Cancel cancel)
    : m_endpoints(std::move(endpoints)), m_options(std::move(options)), m_stop(cancel), m_cancel(cancel) {
  for (const auto& ep : m_endpoints) {
    m_conns.push_back(std::make_unique<redis::Connection>(ep, m_options.timeouts, m_options.tls, m_cancel));
  }
  m_warned.assign(m_endpoints.size(), false);
}

void Locker::set_cancel(Cancel cancel) {
  m_cancel = cancel;
  for (auto& c : m_conns) {
    c->set_cancel(cancel);
  }
}

void Locker::warn_refused(size_t i, const redis::Failure& failure) {
  if (m_conns.size() < 2 || failure.status != ExitStatus::k_refused || m_warned[i]) {
    return;
  }
  m_warned[i] = true;
  // The message is redlock's own sentence (endpoints as display() shows
  // them, the server's error, a hint naming options): not a command line,
  // whose words after --password-file would be taken for secrets. Only a
  // URL's password could be in it, and that stays hidden.
  hold_warning(fmt::format("{}; it does not count towards the quorum of the {} servers",
                           redact_url_passwords(failure.message), m_conns.size()));
}

std::vector<bool> Locker::failed_over() {
  std::vector<bool> moved(m_conns.size(), false);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    const std::string before = m_conns[i]->master_address();
    if (m_conns[i]->master_changed()) {
      moved[i] = true;
      log_warning("the sentinels of {} have failed over from {}: the lock held on the old master cannot be trusted",
                  m_endpoints[i].display(), before);
    }
  }
  return moved;
}

Locker::~Locker() = default;

std::vector<std::string> Locker::endpoint_names() const {
  std::vector<std::string> out;
  for (const auto& ep : m_endpoints) {
    out.push_back(ep.display());
  }
  return out;
}

std::vector<Locker::Answer> Locker::round(const std::vector<std::string>& args, const Script& script,
                                          const std::vector<bool>& targets, const std::vector<bool>& eval_body) {
  const bool wait_replicas =
      &script == &lock::script(ScriptName::k_acquire) || &script == &lock::script(ScriptName::k_renew);
  redis::ScriptCall call;
  call.script = &script;
  call.args = args;
  call.eval_body = eval_body;
  call.min_replicas = wait_replicas ? m_options.min_replicas : 0;
  call.timeouts = m_options.timeouts;
  call.tls = m_options.tls;
  call.cancel = m_cancel;
  auto said = redis::run_script(m_conns, call, targets);

  // Every script answers an array whose first element says what happened.
  std::vector<Answer> answers(said.size());
  for (size_t i = 0; i < said.size(); ++i) {
    auto& a = answers[i];
    a.failure = std::move(said[i].failure);
    a.reply = std::move(said[i].reply);
    a.replicas_short = said[i].replicas_short;
    a.node = std::move(said[i].node);
    if (!a.failure && (!a.reply.is_array() || a.reply.elements.empty())) {
      a.failure = unexpected_reply(m_endpoints[i], script.name);
    } else if (!a.failure) {
      a.kind = a.reply.elements[0].text();
    }
    if (a.failure) {
      warn_refused(i, *a.failure);
    }
    log_debug("{} {}: {}", m_endpoints[i].display(), script.name, a.failure ? a.failure->message : a.kind);
  }
  return answers;
}

namespace {

// The failure to report when too few servers gave a usable answer: the most
// specific status (refused > protocol error > unavailable) with every
// server's reason, so the user knows which ones to look at.
[[noreturn]] void throw_quorum_failure(const std::vector<redis::Failure>& failures, size_t n, size_t quorum) {
  ExitStatus status = ExitStatus::k_unavailable;
  for (const auto& f : failures) {
    const bool more_specific =
        f.status == ExitStatus::k_refused || (f.status == ExitStatus::k_protocol && status != ExitStatus::k_refused);
    if (more_specific) {
      status = f.status;
    }
  }
  std::string msg;
  if (n == 1) {
    msg = failures.front().message;
  } else {
    msg = fmt::format("only {} of {} Redis servers answered (a quorum is {}): ", n - failures.size(), n, quorum);
    for (size_t i = 0; i < failures.size(); ++i) {
      msg += (i ? "; " : "") + failures[i].message;
    }
  }
  // Servers that answered but lack the replicas --min-replicas asks for are
  // running: the hint for them is in their own message.
  const bool replicas_only = std::all_of(failures.begin(), failures.end(), [](const redis::Failure& f) {
    return f.message.find(k_replicas_hint) != std::string::npos;
  });
  // Servers that answered with an error (LOADING...) are running: their
  // own message says what to do.
  const bool all_answered =
      std::all_of(failures.begin(), failures.end(), [](const redis::Failure& f) { return f.answered; });
  if (status == ExitStatus::k_unavailable && !replicas_only && !all_answered) {
    msg += " (is redis-server running there? see --redis and --timeout)";
  }
  throw Error(status, msg, all_answered);
}

[[noreturn]] void throw_foreign(const std::string& name, const std::string& what, const std::string& where) {
  throw Error(ExitStatus::k_protocol, foreign_message(name, what, " on " + where));
}

}  // namespace

namespace {

// A NAME held in another mode than asked for: say what it is and how to ask.
[[noreturn]] void throw_mismatch(const std::string& name, const Claim& claim, const std::string& held_mode,
                                 const std::string& held_limit) {
  std::string held = held_mode == "semaphore" ? fmt::format("a semaphore with --limit {}", held_limit)
                     : held_mode == "shared"  ? std::string("shared by readers (--shared)")
                                              : std::string("a plain lock (--limit 1)");
  std::string asked = claim.mode == Claim::Mode::k_semaphore ? fmt::format("--limit {}", claim.limit)
                      : claim.mode == Claim::Mode::k_shared  ? std::string("--shared")
                                                             : std::string("a plain lock");
  throw UsageError(fmt::format("{} is held as {}, but {} was asked for; use the same options as its holders",
                               escape_for_terminal(name), held, asked));
}

}  // namespace

// Turns one server's answer to the acquire script into a vote.
AcquireVote Locker::acquire_vote(size_t i, Answer& a) const {
  AcquireVote v;
  if (a.failure) {
    v.failure = std::move(a.failure);
    return v;
  }
  std::optional<AcquireVote> read = read_acquire_answer(a.reply);
  if (!read) {
    v.failure = unexpected_reply(m_endpoints[i], "acquire");
    return v;
  }
  if (read->kind == AcquireVote::Kind::k_failed) {
    // A grant with a fence that cannot be used is a bad reply: the hold is
    // given back, and that fence is never raised to on the other servers.
    read->failure = redis::Failure{
        ExitStatus::k_protocol,
        fmt::format("Redis at {} {} the lock with a fence redlock cannot use ({}; a fence is a whole number from 1 to "
                    "{}): it was given back there, and that server does not count; check what answers at that address",
                    m_endpoints[i].display(), read->taken == AcquireVote::Kind::k_reentered ? "re-entered" : "granted",
                    read->bad_fence, k_max_fence)};
    return *read;
  }
  const bool holds = read->kind == AcquireVote::Kind::k_granted || read->kind == AcquireVote::Kind::k_reentered;
  if (holds && a.replicas_short) {
    v.failure = replicas_failure(m_endpoints[i], m_options.min_replicas, "lock");
    return v;
  }
  return *read;
}

// Redlock fencing: servers in the quorum whose counter is below the
// quorum's maximum are raised to it before the lock counts as held; a server
// that cannot be raised no longer counts.
void Locker::raise_fences(const Keys& keys, const std::string& holder, const AcquireDecision& d,
                          std::vector<AcquireVote>& votes) {
  const std::vector<bool> behind = fences_to_raise(votes, d);
  if (std::find(behind.begin(), behind.end(), true) == behind.end()) {
    return;
  }
  auto raised = round({"2", keys.lock, keys.fence, holder, std::to_string(d.fence)},
                      lock::script(ScriptName::k_raise_fence), behind);
  for (size_t i = 0; i < votes.size(); ++i) {
    if (behind[i] && (raised[i].failure || raised[i].kind != "raised")) {
      votes[i].kind = AcquireVote::Kind::k_failed;
      votes[i].failure = raised[i].failure.value_or(redis::Failure{
          ExitStatus::k_protocol, fmt::format("Redis at {} did not raise the fence", m_endpoints[i].display())});
    }
  }
}

void Locker::undo_votes(const std::string& name, const std::string& token, const std::string& reenter,
                        const std::vector<AcquireVote>& votes, const std::vector<bool>& failed) {
  const size_t n = votes.size();
  std::vector<bool> fresh(n, false);
  std::vector<bool> reentered(n, false);
  for (size_t i = 0; i < n; ++i) {
    fresh[i] = votes[i].kind == AcquireVote::Kind::k_granted || votes[i].taken == AcquireVote::Kind::k_granted;
    reentered[i] = votes[i].kind == AcquireVote::Kind::k_reentered || votes[i].taken == AcquireVote::Kind::k_reentered;
  }
  undo(name, token, fresh, failed, false);
  if (!reenter.empty()) {
    undo(name, reenter, reentered, failed, false);
  }
}

void Locker::refuse_shared_node(const std::vector<Answer>& answers) const {
  if (const auto why = shared_node(answers)) {
    throw UsageError(*why);
  }
}

std::optional<std::string> Locker::shared_node(const std::vector<Answer>& answers) const {
  for (size_t i = 0; i < answers.size(); ++i) {
    for (size_t j = i + 1; j < answers.size(); ++j) {
      if (!answers[i].node.empty() && answers[i].node == answers[j].node) {
        return fmt::format(
            "{} and {} reach the same Redis node ({}): nodes of one Redis Cluster, or one server named twice, are "
            "one server, not independent Redlock masters; give it once with --redis",
            m_endpoints[i].display(), m_endpoints[j].display(), answers[i].node);
      }
    }
  }
  return std::nullopt;
}

AcquireOutcome Locker::try_acquire(const std::string& name, Millis ttl, const std::string& reenter, const Owner& owner,
                                   const Claim& claim, const Place& place) {
  const Keys keys = keys_for(m_options.prefix, name);
  const std::string token = random_token();
  const auto start = Clock::now();
  auto answers = round(
      {"3", keys.lock, keys.fence, keys.queue, token, std::to_string(ttl.count()), owner.host,
       std::to_string(owner.pid), owner.cmd, reenter, mode_name(claim.mode),
       std::to_string(claim.mode == Claim::Mode::k_shared ? 0 : claim.limit), std::to_string(claim.min_hold.count()),
       place.id, place.fair ? "fair" : "unfair", std::to_string(place.lease.count()),
       std::to_string(place.wait_left ? place.wait_left->count() : -1), place.ticket},
      lock::script(ScriptName::k_acquire), {});
  const size_t n = m_conns.size();
  std::vector<AcquireVote> votes;
  std::vector<bool> failed(n, false);
  for (size_t i = 0; i < n; ++i) {
    failed[i] = answers[i].failure.has_value();
    votes.push_back(acquire_vote(i, answers[i]));
  }
  if (const auto why = shared_node(answers)) {
    undo_votes(name, token, reenter, votes, failed);
    throw UsageError(*why);
  }
  const bool reentering = !reenter.empty();
  AcquireDecision d = decide_acquire(votes, claim, reentering, ttl);

  const bool granted = d.verdict == AcquireDecision::Verdict::k_granted;
  if (granted && n > 1) {
    raise_fences(keys, d.fresh ? token : reenter, d, votes);
  }
  const auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start);
  const Millis validity = ttl - elapsed - clock_drift(ttl);
  d = decide_acquire(votes, claim, reentering, validity);

  if (std::find(d.release_fresh.begin(), d.release_fresh.end(), true) != d.release_fresh.end()) {
    undo(name, token, d.release_fresh, failed, d.announce_release);
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
  switch (d.verdict) {
    case AcquireDecision::Verdict::k_granted: {
      Acquired got;
      got.token = d.fresh ? token : reenter;
      got.fence = d.fence;
      got.count = d.count;
      got.ttl = held_lease(ttl, votes, [](const AcquireVote& v) {
        return v.kind == AcquireVote::Kind::k_granted || v.kind == AcquireVote::Kind::k_reentered;
      });
      got.validity = validity;
      got.sent = start;
      got.valid_until = start + ttl - clock_drift(ttl);
      got.voted = d.voted;
      for (const auto& v : votes) {
        got.busy.push_back(v.kind == AcquireVote::Kind::k_busy);
      }
      return got;
    }
    case AcquireDecision::Verdict::k_mismatch:
      throw_mismatch(name, claim, d.held_mode, d.held_limit);
    case AcquireDecision::Verdict::k_upgrade:
      throw UsageError(
          fmt::format("{} is held by this token as a reader's share (--shared); a reader cannot "
                      "upgrade to exclusive: release the share first, or take it with --shared",
                      escape_for_terminal(name)));
    case AcquireDecision::Verdict::k_unavailable:
      throw_quorum_failure(d.failures, n, grant_quorum(n, claim));
    case AcquireDecision::Verdict::k_foreign:
      if (n == 1) {
        throw_foreign(name, d.foreign_type, m_endpoints[0].display());
      }
      throw Error(ExitStatus::k_protocol,
                  foreign_message(name, d.foreign_type, fmt::format(" on {} of {} servers", d.foreign, n)));
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
  busy.place = d.place;
  busy.ahead = d.ahead;
  busy.ticket = d.ticket;
  busy.lost_race = d.verdict == AcquireDecision::Verdict::k_lost_race;
  return busy;
}

void Locker::undo(const std::string& name, const std::string& token, const std::vector<bool>& targets,
                  const std::vector<bool>& just_failed, bool announce) {
  const Keys keys = keys_for(m_options.prefix, name);
  const redis::Timeouts brief{m_options.timeouts.connect, std::min(m_options.timeouts.command, Millis(250))};
  // A round cut short by the Cancel (a stop signal) left its
  // connection open: the release goes on it, right behind the acquire, so
  // that a stopped server that wakes up runs both, in that order.
  std::vector<bool> fresh(m_conns.size(), false);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    if (targets[i] && just_failed[i] && !m_conns[i]->connected()) {
      fresh[i] = true;
      m_conns[i] = std::make_unique<redis::Connection>(m_conns[i]->endpoint(), brief, m_options.tls, m_cancel);
    } else if (targets[i] && just_failed[i]) {
      m_conns[i]->keep_for_follow_up(brief.command);  // a round that timed out: right behind its request
      fresh[i] = true;                                // and a new connection after it
    }
  }
  std::vector<bool> hung(m_conns.size(), false);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    hung[i] = targets[i] && just_failed[i];
  }
  (void)round({"2", keys.lock, keys.queue, token, keys.channel, "0", "one", announce ? "" : "quiet"},
              lock::script(ScriptName::k_finish), targets, hung);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    if (fresh[i]) {
      m_conns[i] =
          std::make_unique<redis::Connection>(m_conns[i]->endpoint(), m_options.timeouts, m_options.tls, m_cancel);
    }
  }
}

ReleaseOutcome Locker::release(const std::string& name, const std::string& token) {
  const Keys keys = keys_for(m_options.prefix, name);
  // One level, with no minimum hold: the finish script's simplest case.
  auto answers =
      round({"2", keys.lock, keys.queue, token, keys.channel, "0", "one", ""}, lock::script(ScriptName::k_finish), {});
  refuse_shared_node(answers);
  const size_t n = m_conns.size();
  std::vector<redis::Failure> failures;
  bool released = false;
  bool decremented = false;
  for (size_t i = 0; i < n; ++i) {
    auto& a = answers[i];
    std::optional<ReleaseAnswer> read = a.failure ? std::nullopt : read_release_answer(a.reply);
    if (a.failure) {
      failures.push_back(*a.failure);
    } else if (!read) {
      failures.push_back(unexpected_reply(m_endpoints[i], "release"));
    } else if (read->kind == ReleaseAnswer::Kind::k_released) {
      released = true;
    } else if (read->kind == ReleaseAnswer::Kind::k_decremented) {
      decremented = true;
    } else if (read->kind == ReleaseAnswer::Kind::k_foreign && n == 1) {
      throw_foreign(name, read->foreign_type, m_endpoints[i].display());
    }
  }
  if (decremented) {
    return ReleaseOutcome::k_decremented;
  }
  if (released) {
    return ReleaseOutcome::k_released;
  }
  if (failures.size() > n - quorum()) {
    throw_quorum_failure(failures, n, quorum());
  }
  return ReleaseOutcome::k_not_held;
}

namespace {

// One server's answer to the finish script: what it did, the levels it
// dropped, and what is left of a kept hold.
Ended ended_on_one(const std::string& kind, const std::vector<Reply>& e) {
  Ended one;
  if (e.size() < 3 || (kind != "kept" && kind != "released" && kind != "decremented")) {
    return one;
  }
  one.kind = kind == "kept"       ? Ended::Kind::k_kept
             : kind == "released" ? Ended::Kind::k_released
                                  : Ended::Kind::k_decremented;
  one.levels = reply_integer(e[1]);
  one.kept = one.kind == Ended::Kind::k_kept ? Millis(reply_integer(e[2])) : Millis(0);
  return one;
}

// Across servers the strongest answer wins: a hold kept anywhere is kept,
// then released, then decremented (a server that missed a level).
int strength(Ended::Kind k) {
  switch (k) {
    case Ended::Kind::k_kept:
      return 3;
    case Ended::Kind::k_released:
      return 2;
    case Ended::Kind::k_decremented:
      return 1;
    case Ended::Kind::k_not_held:
      break;
  }
  return 0;
}

}  // namespace

Ended Locker::finish(const std::string& name, const std::string& token, Millis min_hold, bool whole) {
  const Keys keys = keys_for(m_options.prefix, name);
  // EVAL with the body at once: a stop signal may cut this round short (exec's
  // end), and a NOSCRIPT answer nobody reads would leave the hold in place.
  auto answers = round(
      {"2", keys.lock, keys.queue, token, keys.channel, std::to_string(min_hold.count()), whole ? "all" : "one", ""},
      lock::script(ScriptName::k_finish), {}, std::vector<bool>(m_conns.size(), true));
  const size_t n = m_conns.size();
  std::vector<redis::Failure> failures;
  Ended ended;
  for (size_t i = 0; i < n; ++i) {
    const auto& a = answers[i];
    if (a.failure) {
      failures.push_back(*a.failure);
      continue;
    }
    if (a.kind == "foreign" && n == 1) {
      throw_foreign(name, a.reply.elements.size() > 1 ? a.reply.elements[1].text() : "?", m_endpoints[i].display());
    }
    const Ended one = ended_on_one(a.kind, a.reply.elements);
    ended.levels = std::max(ended.levels, one.levels);
    ended.kept = std::max(ended.kept, one.kept);
    if (strength(one.kind) > strength(ended.kind)) {
      ended.kind = one.kind;
    }
  }
  if (ended.kind == Ended::Kind::k_not_held && failures.size() > n - quorum()) {
    throw_quorum_failure(failures, n, quorum());
  }
  return ended;
}

RenewOutcome Locker::renew(const std::string& name, const std::string& token, Millis ttl) {
  const Keys keys = keys_for(m_options.prefix, name);
  const auto start = Clock::now();
  // A lock taken on a master that Sentinel has since replaced is lost: the
  // new master may not have it, and another client may take it there while
  // the old master still accepts our renewals.
  const std::vector<bool> moved = failed_over();
  std::vector<bool> targets(moved.size());
  std::transform(moved.begin(), moved.end(), targets.begin(), [](bool m) { return !m; });
  auto answers =
      round({"1", keys.lock, token, std::to_string(ttl.count())}, lock::script(ScriptName::k_renew), targets);
  refuse_shared_node(answers);
  const size_t n = m_conns.size();
  std::vector<RenewVote> votes(n);
  for (size_t i = 0; i < n; ++i) {
    auto& a = answers[i];
    std::optional<RenewVote> read = a.failure ? std::nullopt : read_renew_answer(a.reply);
    if (moved[i]) {
      votes[i].kind = RenewVote::Kind::k_not_held;
    } else if (a.failure) {
      votes[i].failure = a.failure;
    } else if (!read) {
      votes[i].failure = unexpected_reply(m_endpoints[i], "renew");
    } else if (read->kind == RenewVote::Kind::k_renewed && a.replicas_short) {
      votes[i].failure = replicas_failure(m_endpoints[i], m_options.min_replicas, "renewal");
    } else {
      votes[i] = std::move(*read);
    }
  }
  const auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start);
  Renewed r{ttl, ttl - elapsed - clock_drift(ttl), start + ttl - clock_drift(ttl)};
  const RenewDecision d = decide_renew(votes, r.validity);
  switch (d.verdict) {
    case RenewDecision::Verdict::k_renewed:
      r.ttl = held_lease(ttl, votes, [](const RenewVote& v) { return v.kind == RenewVote::Kind::k_renewed; });
      return r;
    case RenewDecision::Verdict::k_unavailable:
      throw_quorum_failure(d.failures, n, quorum());
    case RenewDecision::Verdict::k_not_held:
      break;
  }
  return NotHeld{d.foreign, d.foreign_type};
}

void Locker::leave(const std::string& name, const std::string& id, const std::vector<bool>& targets) {
  if (id.empty()) {
    return;
  }
  const Keys keys = keys_for(m_options.prefix, name);
  try {
    (void)round({"2", keys.lock, keys.queue, id, keys.channel}, lock::script(ScriptName::k_leave), targets);
  } catch (const Error& e) {
    log_debug("could not leave the line for {}: {}", name, e.what());
  }
}

Broken Locker::break_lock(const std::string& name) {
  const Keys keys = keys_for(m_options.prefix, name);
  auto answers = round({"2", keys.lock, keys.queue, keys.channel}, lock::script(ScriptName::k_break), {});
  std::vector<BreakVote> votes(answers.size());
  Broken out;
  for (size_t i = 0; i < answers.size(); ++i) {
    auto& a = answers[i];
    std::optional<BreakVote> read = a.failure ? std::nullopt : read_break_answer(a.reply);
    if (a.failure) {
      votes[i].failure = a.failure;
    } else if (!read) {
      votes[i].failure = unexpected_reply(m_endpoints[i], "break");
    } else {
      votes[i] = std::move(*read);
    }
    const BreakVote& v = votes[i];
    out.servers.push_back(v.failure                              ? "unreachable"
                          : v.kind == BreakVote::Kind::k_broken  ? "broken"
                          : v.kind == BreakVote::Kind::k_foreign ? "foreign"
                                                                 : "free");
  }
  out.decision = decide_break(votes);
  if (out.decision.verdict == BreakDecision::Verdict::k_unavailable) {
    throw_quorum_failure(out.decision.failures, m_conns.size(), quorum());
  }
  return out;
}

std::vector<ServerView> Locker::inspect(const std::string& name) {
  const Keys keys = keys_for(m_options.prefix, name);
  auto answers = round({"2", keys.lock, keys.fence}, lock::script(ScriptName::k_inspect), {});
  refuse_shared_node(answers);
  std::vector<ServerView> views;
  std::vector<redis::Failure> failures;
  for (size_t i = 0; i < answers.size(); ++i) {
    ServerView v;
    v.endpoint = m_endpoints[i].display();
    auto& a = answers[i];
    if (!a.failure && !read_inspect_answer(a.reply, v)) {
      a.failure = redis::Failure{ExitStatus::k_protocol, "unexpected reply to inspect"};
    }
    if (a.failure) {
      v.error = a.failure->message;
      failures.push_back(*a.failure);
    }
    views.push_back(std::move(v));
  }
  if (failures.size() > m_conns.size() - quorum()) {
    throw_quorum_failure(failures, m_conns.size(), quorum());
  }
  read_line(keys, views);
  return views;
}

void Locker::read_line(const Keys& keys, std::vector<ServerView>& views) {
  std::vector<bool> targets(views.size());
  std::transform(views.begin(), views.end(), targets.begin(), [](const ServerView& v) { return !v.error; });
  auto answers = round({"1", keys.queue}, lock::script(ScriptName::k_line), targets);
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!targets[i] || answers[i].failure) {
      continue;  // the line is news for status, never a reason to fail it
    }
    if (auto line = read_line_answer(answers[i].reply)) {
      views[i].waiters = std::move(*line);
    }
  }
}

namespace {

std::string glob_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<std::string> Locker::eviction_risks() {
  std::vector<redis::Connection*> conns;
  for (auto& c : m_conns) {
    c->queue({"CONFIG", "GET", "maxmemory"});
    c->queue({"CONFIG", "GET", "maxmemory-policy"});
    conns.push_back(c.get());
  }
  redis::run_all(conns, m_cancel);
  std::vector<std::string> out;
  for (auto& c : m_conns) {
    if (c->failure()) {
      c->reset();
      continue;
    }
    auto replies = c->take_replies();
    auto value = [&](size_t k) {
      const bool ok = k < replies.size() && replies[k].is_array() && replies[k].elements.size() == 2;
      return ok ? replies[k].elements[1].text() : std::string();
    };
    const std::string limit = value(0);
    const std::string policy = value(1);
    if (!limit.empty() && limit != "0" && !policy.empty() && policy != "noeviction") {
      out.push_back(fmt::format("{} has maxmemory-policy {}", c->endpoint().display(), policy));
    }
  }
  return out;
}

std::vector<std::string> Locker::list() {
  const std::string& prefix = m_options.prefix;
  const std::string pattern = glob_escape(prefix) + "{*}";
  std::vector<std::string> names;
  std::vector<redis::Failure> failures;
  std::vector<std::vector<std::string>> clusters(m_conns.size());  // node IDs, for a Cluster node
  for (size_t i = 0; i < m_conns.size(); ++i) {
    try {
      for (const auto& key : redis::scan_keys(*m_conns[i], pattern, m_options.timeouts, m_options.tls, clusters[i])) {
        // Lock hashes end with '}'; the fence counters end with ":fence".
        if (key.size() > prefix.size() + 2 && key.back() == '}') {
          names.push_back(key.substr(prefix.size() + 1, key.size() - prefix.size() - 2));
        }
      }
    } catch (const Error& e) {
      failures.push_back({e.status(), e.what()});
    }
  }
  for (size_t i = 0; i < clusters.size(); ++i) {
    for (size_t j = i + 1; j < clusters.size(); ++j) {
      std::vector<std::string> common;
      std::set_intersection(clusters[i].begin(), clusters[i].end(), clusters[j].begin(), clusters[j].end(),
                            std::back_inserter(common));
      if (!common.empty()) {
        throw UsageError(
            fmt::format("{} and {} are nodes of one Redis Cluster, not independent masters: give "
                        "one of them with --redis (redlock finds the others)",
                        m_endpoints[i].display(), m_endpoints[j].display()));
      }
    }
  }
  if (failures.size() > m_conns.size() - quorum()) {
    throw_quorum_failure(failures, m_conns.size(), quorum());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace redlock::lock
