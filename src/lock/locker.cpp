#include "lock/locker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "lock/layout.hpp"
#include "redis/fanout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/number.hpp"
#include "util/text.hpp"
#include "util/token.hpp"

namespace redlock::lock {

using redis::Reply;

Keys keys_for(const std::string& prefix, const std::string& name) {
  std::string lock = prefix + "{" + name + "}";
  return Keys{lock, lock + ":fence", lock + ":released"};
}

Millis clock_drift(Millis ttl) {
  return Millis(ttl.count() / 100 + 2);
}

namespace {

// The node a Redis Cluster "MOVED <slot> <host>:<port>" error names.
std::optional<std::pair<std::string, int>> moved_to(const std::string& error) {
  if (error.rfind("MOVED ", 0) != 0) {
    return std::nullopt;
  }
  size_t space = error.find(' ', 6);
  size_t colon = error.rfind(':');
  if (space == std::string::npos || colon == std::string::npos || colon < space) {
    return std::nullopt;
  }
  try {
    std::string host = error.substr(space + 1, colon - space - 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    return std::make_pair(host, std::stoi(error.substr(colon + 1)));
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

// What one server said in one round.
struct Locker::Answer {
  std::optional<redis::Failure> failure;  // no usable answer: unreachable, refused, error reply
  Reply reply;                            // the script's reply when there is no failure
  std::string kind;                       // first element of the script's reply
  bool replicas_short = false;            // WAIT came back with fewer replicas than asked
};

Locker::Locker(std::vector<redis::Endpoint> endpoints, Options options)
    : m_endpoints(std::move(endpoints)), m_options(std::move(options)) {
  for (const auto& ep : m_endpoints) {
    m_conns.push_back(std::make_unique<redis::Connection>(ep, m_options.timeouts, m_options.tls));
  }
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
  const size_t n = m_conns.size();
  std::vector<Answer> answers(n);
  const bool wait_replicas =
      m_options.min_replicas > 0 &&
      ((&script == &lock::script(ScriptName::k_acquire) || &script == &lock::script(ScriptName::k_renew)));
  auto send = [&](size_t i, bool by_body) {
    std::vector<std::string> argv{by_body ? "EVAL" : "EVALSHA", by_body ? std::string(script.body) : script.sha1};
    argv.insert(argv.end(), args.begin(), args.end());
    m_conns[i]->queue(argv);
    if (wait_replicas) {
      // Half the round trip's budget, so that WAIT answers before we give up on it.
      m_conns[i]->queue({"WAIT", std::to_string(m_options.min_replicas),
                         std::to_string(std::max<long long>(1, m_options.timeouts.command.count() / 2))});
    }
  };
  // Takes server i's replies into answers[i], unless the server asks for
  // something first: the script's body (NOSCRIPT), or another node (a Redis
  // Cluster's MOVED, after which the connection goes there for good).
  enum class Next { k_done, k_body, k_moved };
  auto collect = [&](size_t i) {
    auto& conn = *m_conns[i];
    if (conn.failure()) {
      answers[i].failure = conn.failure();
      conn.reset();
      return Next::k_done;
    }
    auto replies = conn.take_replies();
    if (!replies.empty() && replies[0].is_error()) {
      const std::string& e = replies[0].str;
      if (e.rfind("NOSCRIPT", 0) == 0) {
        return Next::k_body;
      }
      if (auto node = moved_to(e)) {
        redis::Endpoint ep = conn.endpoint();
        ep.kind = redis::Endpoint::Kind::k_tcp;
        std::tie(ep.host, ep.port) = *node;
        log_debug("{} moved the lock's slot to {}:{}", ep.display(), node->first, node->second);
        m_conns[i] = std::make_unique<redis::Connection>(ep, m_options.timeouts, m_options.tls);
        return Next::k_moved;
      }
    }
    answers[i].reply = replies.empty() ? Reply{} : std::move(replies[0]);
    answers[i].replicas_short = wait_replicas && replies.size() > 1 && replies[1].integer < m_options.min_replicas;
    return Next::k_done;
  };
  auto run = [&](const std::vector<size_t>& which) {
    std::vector<redis::Connection*> conns;
    for (size_t i : which) {
      conns.push_back(m_conns[i].get());
    }
    redis::run_all(conns, m_cancel_fd);
  };

  std::vector<size_t> asked;
  for (size_t i = 0; i < n; ++i) {
    if (targets.empty() || targets[i]) {
      send(i, !eval_body.empty() && eval_body[i]);
      asked.push_back(i);
    } else {
      answers[i].failure = redis::Failure{ExitStatus::k_unavailable, "not asked"};
    }
  }
  // A few more rounds for the servers that asked for the script's body or
  // sent us to another node; each round goes to all of them at once.
  std::vector<size_t> pending = asked;
  for (int attempt = 0; !pending.empty(); ++attempt) {
    run(pending);
    std::vector<size_t> again;
    for (size_t i : pending) {
      Next next = collect(i);
      if (next == Next::k_done) {
        continue;
      }
      if (attempt == 3) {
        answers[i].failure = redis::Failure{ExitStatus::k_protocol, fmt::format("Redis at {} kept redirecting {}",
                                                                                m_endpoints[i].display(), script.name)};
        continue;
      }
      send(i, next == Next::k_body);
      again.push_back(i);
    }
    pending = std::move(again);
  }

  // Turn error replies and unexpected shapes into failures with an exit status.
  for (size_t i = 0; i < n; ++i) {
    auto& a = answers[i];
    if (a.failure) {
      continue;
    }
    const std::string where = m_endpoints[i].display();
    if (a.reply.is_error()) {
      const ExitStatus status = redis::classify_error(a.reply.str);
      const bool needs_auth =
          a.reply.str.rfind("NOAUTH", 0) == 0 || a.reply.str.find("unauthenticated") != std::string::npos;
      if (needs_auth) {
        a.failure = redis::Failure{status, fmt::format("Redis at {} requires a password: give it with "
                                                       "--password-file or $REDLOCK_PASSWORD",
                                                       where)};
      } else {
        a.failure = redis::Failure{
            status, fmt::format("Redis at {} answered {}: {}{}", where, script.name, a.reply.str,
                                status == ExitStatus::k_refused ? " (check the user's ACL permissions)" : "")};
      }
    } else if (!a.reply.is_array() || a.reply.elements.empty()) {
      a.failure = redis::Failure{ExitStatus::k_protocol,
                                 fmt::format("Redis at {} sent an unexpected reply to {}", where, script.name)};
    } else {
      a.kind = a.reply.elements[0].text();
    }
    log_debug("{} {}: {}", where, script.name, a.failure ? a.failure->message : a.kind);
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
    if (f.status == ExitStatus::k_refused) {
      status = f.status;
    } else if (f.status == ExitStatus::k_protocol && status != ExitStatus::k_refused) {
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
  switch (status) {
    case ExitStatus::k_unavailable:
      msg += " (is redis-server running there? see --redis and --timeout)";
      break;
    default:
      break;
  }
  throw Error(status, msg);
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

namespace {

redis::Failure unexpected_reply(const redis::Endpoint& where, const char* to) {
  return redis::Failure{ExitStatus::k_protocol,
                        fmt::format("Redis at {} sent an unexpected reply to {}", where.display(), to)};
}

// A reply element as an integer (0 if it is not one).
long long as_int(const Reply& r) {
  if (r.type == Reply::Type::k_integer) {
    return r.integer;
  }
  return parse_integer(r.str).value_or(0);
}

}  // namespace

// Turns one server's answer to the acquire script into a vote.
AcquireVote Locker::acquire_vote(size_t i, Answer& a) const {
  AcquireVote v;
  if (a.failure) {
    v.failure = std::move(a.failure);
    return v;
  }
  const auto& e = a.reply.elements;
  if ((a.kind == "acquired" || a.kind == "reentered") && e.size() >= 5) {
    if (a.replicas_short) {
      v.failure = redis::Failure{ExitStatus::k_unavailable,
                                 fmt::format("Redis at {}: fewer than {} replicas acknowledged the lock in time "
                                             "(--min-replicas)",
                                             m_endpoints[i].display(), m_options.min_replicas)};
      return v;
    }
    v.kind = a.kind == "acquired" ? AcquireVote::Kind::k_granted : AcquireVote::Kind::k_reentered;
    v.fence = as_int(e[2]);
    v.count = as_int(e[3]);
  } else if (a.kind == "busy" && e.size() >= 4) {
    v.kind = AcquireVote::Kind::k_busy;
    v.ttl_left = Millis(std::max(0LL, as_int(e[1])));
    v.host = e[2].text();
    v.pid = e[3].text();
  } else if ((a.kind == "mismatch" || a.kind == "upgrade") && e.size() >= 3) {
    v.kind = a.kind == "mismatch" ? AcquireVote::Kind::k_mismatch : AcquireVote::Kind::k_upgrade;
    v.held_mode = e[1].text();
    v.held_limit = e[2].text();
  } else if (a.kind == "foreign") {
    v.kind = AcquireVote::Kind::k_foreign;
    v.foreign_type = e.size() > 1 ? e[1].text() : "?";
  } else {
    v.failure = unexpected_reply(m_endpoints[i], "acquire");
  }
  return v;
}

AcquireOutcome Locker::try_acquire(const std::string& name, Millis ttl, const std::string& reenter, const Owner& owner,
                                   const Claim& claim) {
  const Keys keys = keys_for(m_options.prefix, name);
  const std::string token = random_token();
  const auto start = redis::Clock::now();
  auto answers = round(
      {"2", keys.lock, keys.fence, token, std::to_string(ttl.count()), owner.host, std::to_string(owner.pid), owner.cmd,
       reenter, mode_name(claim.mode), std::to_string(claim.mode == Claim::Mode::k_shared ? 0 : claim.limit)},
      lock::script(ScriptName::k_acquire), {});
  const size_t n = m_conns.size();
  std::vector<AcquireVote> votes;
  std::vector<bool> failed(n, false);
  for (size_t i = 0; i < n; ++i) {
    failed[i] = answers[i].failure.has_value();
    votes.push_back(acquire_vote(i, answers[i]));
  }
  const bool reentering = !reenter.empty();
  AcquireDecision d = decide_acquire(votes, claim, reentering, ttl);

  // Redlock fencing: servers in the quorum whose counter is below the
  // quorum's maximum are raised to it before the lock counts as held.
  if (d.verdict == AcquireDecision::Verdict::k_granted && n > 1) {
    const std::vector<bool> behind = fences_to_raise(votes, d);
    if (std::find(behind.begin(), behind.end(), true) != behind.end()) {
      const std::string& holder = d.fresh ? token : reenter;
      auto raised = round({"2", keys.lock, keys.fence, holder, std::to_string(d.fence)},
                          lock::script(ScriptName::k_raise_fence), behind);
      for (size_t i = 0; i < n; ++i) {
        if (behind[i] && (raised[i].failure || raised[i].kind != "raised")) {
          votes[i].kind = AcquireVote::Kind::k_failed;
          votes[i].failure = raised[i].failure.value_or(redis::Failure{
              ExitStatus::k_protocol, fmt::format("Redis at {} did not raise the fence", m_endpoints[i].display())});
        }
      }
    }
  }
  const auto elapsed = std::chrono::duration_cast<Millis>(redis::Clock::now() - start);
  const Millis validity = ttl - elapsed - clock_drift(ttl);
  d = decide_acquire(votes, claim, reentering, validity);

  if (std::find(d.release_fresh.begin(), d.release_fresh.end(), true) != d.release_fresh.end()) {
    undo(name, token, d.release_fresh, failed, d.announce_release);
  }
  if (std::find(d.undo_reentry.begin(), d.undo_reentry.end(), true) != d.undo_reentry.end()) {
    undo(name, reenter, d.undo_reentry, failed, false);
  }
  switch (d.verdict) {
    case AcquireDecision::Verdict::k_granted: {
      Acquired got;
      got.token = d.fresh ? token : reenter;
      got.fence = d.fence;
      got.count = d.count;
      got.ttl = ttl;
      got.validity = validity;
      got.sent = start;
      got.voted = d.voted;
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
  if (validity <= Millis(0)) {
    log_debug("acquired {} too slowly ({} elapsed of {}): released", name, format_duration(elapsed),
              format_duration(ttl));
  }
  Busy busy;
  busy.ttl_left = d.ttl_left;
  busy.host = d.host;
  busy.pid = d.pid;
  busy.lost_race = d.verdict == AcquireDecision::Verdict::k_lost_race;
  return busy;
}

void Locker::undo(const std::string& name, const std::string& token, const std::vector<bool>& targets,
                  const std::vector<bool>& just_failed, bool announce) {
  const Keys keys = keys_for(m_options.prefix, name);
  const redis::Timeouts brief{m_options.timeouts.connect, std::min(m_options.timeouts.command, Millis(250))};
  // A round cut short by the cancel descriptor (a stop signal) left its
  // connection open: the release goes on it, right behind the acquire, so
  // that a stopped server that wakes up runs both, in that order.
  std::vector<bool> fresh(m_conns.size(), false);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    if (targets[i] && just_failed[i] && !m_conns[i]->connected()) {
      fresh[i] = true;
      m_conns[i] = std::make_unique<redis::Connection>(m_conns[i]->endpoint(), brief, m_options.tls);
    }
  }
  std::vector<bool> hung(m_conns.size(), false);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    hung[i] = targets[i] && just_failed[i];
  }
  (void)round({"1", keys.lock, token, keys.channel, announce ? "" : "quiet"}, lock::script(ScriptName::k_release),
              targets, hung);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    if (fresh[i]) {
      m_conns[i] = std::make_unique<redis::Connection>(m_conns[i]->endpoint(), m_options.timeouts, m_options.tls);
    }
  }
}

ReleaseOutcome Locker::release(const std::string& name, const std::string& token) {
  const Keys keys = keys_for(m_options.prefix, name);
  auto answers = round({"1", keys.lock, token, keys.channel, ""}, lock::script(ScriptName::k_release), {});
  const size_t n = m_conns.size();
  std::vector<redis::Failure> failures;
  bool released = false;
  bool decremented = false;
  for (size_t i = 0; i < n; ++i) {
    auto& a = answers[i];
    if (a.failure) {
      failures.push_back(*a.failure);
    } else if (a.kind == "released") {
      released = true;
    } else if (a.kind == "decremented") {
      decremented = true;
    } else if (a.kind == "foreign" && n == 1) {
      throw_foreign(name, a.reply.elements.size() > 1 ? a.reply.elements[1].text() : "?", m_endpoints[i].display());
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

RenewOutcome Locker::renew(const std::string& name, const std::string& token, Millis ttl) {
  const Keys keys = keys_for(m_options.prefix, name);
  const auto start = redis::Clock::now();
  auto answers = round({"1", keys.lock, token, std::to_string(ttl.count())}, lock::script(ScriptName::k_renew), {});
  const size_t n = m_conns.size();
  std::vector<RenewVote> votes(n);
  for (size_t i = 0; i < n; ++i) {
    auto& a = answers[i];
    auto& v = votes[i];
    const auto& e = a.reply.elements;
    if (a.failure) {
      v.failure = a.failure;
    } else if (a.kind == "renewed" && e.size() >= 4) {
      if (a.replicas_short) {
        v.failure = redis::Failure{ExitStatus::k_unavailable,
                                   fmt::format("Redis at {}: fewer than {} replicas acknowledged the renewal in "
                                               "time (--min-replicas)",
                                               m_endpoints[i].display(), m_options.min_replicas)};
        continue;
      }
      v.kind = RenewVote::Kind::k_renewed;
      const std::string mode = e[2].text();
      v.claim.mode = mode == "semaphore" ? Claim::Mode::k_semaphore
                     : mode == "shared"  ? Claim::Mode::k_shared
                                         : Claim::Mode::k_exclusive;
      v.claim.limit = static_cast<int>(std::clamp<long long>(as_int(e[3]), 1, 1'000'000));
    } else if (a.kind == "notheld") {
      v.kind = RenewVote::Kind::k_not_held;
    } else if (a.kind == "foreign") {
      v.kind = RenewVote::Kind::k_foreign;
      v.foreign_type = e.size() > 1 ? e[1].text() : "?";
    } else {
      v.failure = unexpected_reply(m_endpoints[i], "renew");
    }
  }
  const auto elapsed = std::chrono::duration_cast<Millis>(redis::Clock::now() - start);
  Renewed r{ttl, ttl - elapsed - clock_drift(ttl)};
  const RenewDecision d = decide_renew(votes, r.validity);
  switch (d.verdict) {
    case RenewDecision::Verdict::k_renewed:
      return r;
    case RenewDecision::Verdict::k_unavailable:
      throw_quorum_failure(d.failures, n, quorum());
    case RenewDecision::Verdict::k_not_held:
      break;
  }
  return NotHeld{d.foreign, d.foreign_type};
}

std::vector<ServerView> Locker::inspect(const std::string& name) {
  const Keys keys = keys_for(m_options.prefix, name);
  auto answers = round({"2", keys.lock, keys.fence}, lock::script(ScriptName::k_inspect), {});
  std::vector<ServerView> views;
  std::vector<redis::Failure> failures;
  for (size_t i = 0; i < answers.size(); ++i) {
    ServerView v;
    v.endpoint = m_endpoints[i].display();
    auto& a = answers[i];
    const auto& e = a.reply.elements;
    if (a.failure || e.size() < 5) {
      redis::Failure f = a.failure.value_or(redis::Failure{ExitStatus::k_protocol, "unexpected reply to inspect"});
      v.error = f.message;
      failures.push_back(f);
    } else {
      v.type = e[0].text();
      v.now_ms = as_int(e[1]);
      v.ttl_ms = as_int(e[3]);
      std::vector<std::pair<std::string, std::string>> fields;
      for (size_t k = 0; k + 1 < e[4].elements.size(); k += 2) {
        fields.emplace_back(e[4].elements[k].text(), e[4].elements[k + 1].text());
      }
      read_holders(v, fields);
    }
    views.push_back(std::move(v));
  }
  if (failures.size() > m_conns.size() - quorum()) {
    throw_quorum_failure(failures, m_conns.size(), quorum());
  }
  return views;
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
  redis::run_all(conns, m_cancel_fd);
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
  for (auto& conn : m_conns) {
    std::string cursor = "0";
    try {
      do {
        Reply r = redis::call(*conn, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
        if (r.is_error()) {
          throw Error(redis::classify_error(r.str),
                      fmt::format("Redis at {} answered SCAN: {}", conn->endpoint().display(), r.str));
        }
        if (!r.is_array() || r.elements.size() != 2) {
          throw Error(ExitStatus::k_protocol,
                      fmt::format("Redis at {} sent an unexpected reply to SCAN", conn->endpoint().display()));
        }
        cursor = r.elements[0].text();
        for (const auto& k : r.elements[1].elements) {
          const std::string& key = k.str;
          // Lock hashes end with '}'; the fence counters end with ":fence".
          if (key.size() > prefix.size() + 2 && key.back() == '}') {
            names.push_back(key.substr(prefix.size() + 1, key.size() - prefix.size() - 2));
          }
        }
      } while (cursor != "0");
    } catch (const Error& e) {
      failures.push_back({e.status(), e.what()});
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
