// Locker's marks on a name that operators set: a suspension (suspend-3.lua),
// which acquire honours in the same step as a grant, and a revoke
// (revoke-2.lua), which the holders' execs hear of at once.

#include <fmt/format.h>

#include <algorithm>

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "lock/locker.hpp"
#include "util/exit_status.hpp"

namespace redlock::lock {
namespace {

// One server's answer to the suspend script.
struct MarkVote {
  enum class Kind { k_suspended, k_resumed, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  long long until_ms = -1;  // suspended
  long long now_ms = 0;     // suspended
  bool was = false;         // resumed: it was suspended there
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

std::optional<MarkVote> read_mark_answer(const redis::Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  MarkVote v;
  if (outcome == "suspended" && e.size() >= 3) {
    v.kind = MarkVote::Kind::k_suspended;
    v.until_ms = reply_integer(e[1]);
    v.now_ms = reply_integer(e[2]);
  } else if (outcome == "resumed" && e.size() >= 2) {
    v.kind = MarkVote::Kind::k_resumed;
    v.was = reply_integer(e[1]) != 0;
  } else if (outcome == "foreign" && e.size() >= 2) {
    v.kind = MarkVote::Kind::k_foreign;
    v.foreign_type = e[1].text();
  } else {
    return std::nullopt;
  }
  return v;
}

// A mark counts once a majority of servers have it (any quorum that could
// grant the lock then shares a server with it); a foreign key anywhere is
// reported and left alone.
std::vector<MarkVote> mark_votes(const std::string& name, const std::vector<Answer>& answers,
                                 const std::vector<std::string>& servers) {
  std::vector<MarkVote> votes = tally<MarkVote>(answers, servers, "suspend", read_mark_answer);
  for (size_t i = 0; i < votes.size(); ++i) {
    if (votes[i].kind == MarkVote::Kind::k_foreign) {
      throw Error(ExitStatus::k_protocol, foreign_message(name, votes[i].foreign_type, " on " + servers[i]));
    }
  }
  return votes;
}

// One server's answer to the revoke script.
struct RevokeVote {
  enum class Kind { k_revoking, k_free, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  long long listeners = 0;
  long long now_ms = 0;
  long long heard = 0;  // on the runs' own channels, all together
  std::vector<Revoking::Asked> asked;
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

std::optional<RevokeVote> read_revoke_answer(const redis::Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  RevokeVote v;
  if (outcome == "revoking" && e.size() >= 4 && e[3].is_array()) {
    v.kind = RevokeVote::Kind::k_revoking;
    v.listeners = std::max(0LL, reply_integer(e[1]));
    v.now_ms = reply_integer(e[2]);
    for (const auto& a : e[3].elements) {
      if (!a.is_array() || a.elements.size() < 5) {
        return std::nullopt;
      }
      // A run's own channel reached its exec (7th element; a server
      // without it told none).
      const long long heard = a.elements.size() >= 7 ? std::max(0LL, reply_integer(a.elements[6])) : 0;
      v.heard += heard;
      v.asked.push_back({a.elements[0].text(), a.elements[1].text(), a.elements[2].text(), a.elements[3].text(),
                         reply_integer(a.elements[4]), heard > 0});
    }
  } else if (outcome == "free") {
    v.kind = RevokeVote::Kind::k_free;
  } else if (outcome == "foreign" && e.size() >= 2) {
    v.kind = RevokeVote::Kind::k_foreign;
    v.foreign_type = e[1].text();
  } else {
    return std::nullopt;
  }
  return v;
}

}  // namespace

Revoking Locker::revoke(const std::string& name, const Owner& by, Millis grace) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const RevokeArgs args{.host = by.host, .pid = by.pid, .grace = grace};
  const auto answers = m_servers.round(to_args(keys, args), lock::script(ScriptName::k_revoke), {});
  const std::vector<RevokeVote> votes = tally<RevokeVote>(answers, m_servers.names(), "revoke", read_revoke_answer);
  for (size_t i = 0; i < votes.size(); ++i) {
    if (votes[i].kind == RevokeVote::Kind::k_foreign) {
      throw Error(ExitStatus::k_protocol, foreign_message(name, votes[i].foreign_type, " on " + m_servers.names()[i]));
    }
  }
  m_servers.require_majority(failures_of(votes));
  Revoking out;
  for (const RevokeVote& v : votes) {
    if (v.kind != RevokeVote::Kind::k_revoking) {
      continue;
    }
    if (out.now_ms == 0) {
      out.now_ms = v.now_ms;
    }
    out.listeners += v.listeners;
    out.unidentified += std::max(0LL, v.listeners - v.heard);
    for (const auto& a : v.asked) {
      const auto known = std::find_if(out.holders.begin(), out.holders.end(),
                                      [&a](const Revoking::Asked& h) { return h.run == a.run; });
      if (known == out.holders.end()) {
        out.holders.push_back(a);
      } else {
        known->listening = known->listening || a.listening;
      }
    }
  }
  return out;
}

std::optional<Busy> Locker::refusal(const std::string& name, const Claim& claim) {
  const std::vector<ServerView> views = inspect({name}).at(0);
  const size_t n = views.size();
  // A grant needs a quorum: refused by more servers than it can do without,
  // it is refused.
  const size_t spare = n - std::min(n, grant_quorum(n, claim));
  size_t suspended = 0;
  size_t full = 0;
  Busy out;
  for (const ServerView& v : views) {
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
      const HolderView& h = v.holders.front();
      out.host = h.host;
      out.pid = std::to_string(h.pid);
      out.cmd = h.cmd;
      out.holders = static_cast<long long>(v.holders.size());
      out.ttl_left = Millis(std::max(0LL, h.ttl_ms));
    }
  }
  if (suspended > spare) {
    Busy busy;
    busy.suspended = out.suspended;
    return busy;
  }
  out.suspended.reset();
  if (claim.skip_ok_within > Millis(0)) {
    const LastRuns runs = last_runs({name}).at(0);
    if (const auto& ok = runs.last_ok; ok && ok->end_ms && *ok->end_ms + claim.skip_ok_within.count() > runs.now_ms) {
      Busy busy;
      busy.skipped = RunSeen{ok->host, std::to_string(ok->pid), 0, *ok->end_ms, runs.now_ms};
      return busy;
    }
  }
  if (full > spare) {
    out.line_full = true;
    return out;
  }
  return std::nullopt;
}

SuspendedUntil Locker::suspend(const std::string& name, const std::string& reason, const Owner& by,
                               Millis lapse_after) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const SuspendArgs args{.reason = reason, .host = by.host, .pid = by.pid, .lapse_after = lapse_after};
  const std::vector<MarkVote> votes = mark_votes(
      name, m_servers.round(to_args(keys, args), lock::script(ScriptName::k_suspend), {}), m_servers.names());
  m_servers.require_majority(failures_of(votes));
  SuspendedUntil out;
  for (const MarkVote& v : votes) {
    if (v.kind == MarkVote::Kind::k_suspended) {
      out = SuspendedUntil{v.until_ms, v.now_ms};
      break;
    }
  }
  return out;
}

bool Locker::resume(const std::string& name, const Owner& by) {
  const Keys keys = keys_for(m_servers.options().prefix, name);
  const SuspendArgs args{.resume = true, .host = by.host, .pid = by.pid};
  const std::vector<MarkVote> votes = mark_votes(
      name, m_servers.round(to_args(keys, args), lock::script(ScriptName::k_suspend), {}), m_servers.names());
  m_servers.require_majority(failures_of(votes));
  return std::any_of(votes.begin(), votes.end(), [](const MarkVote& v) { return v.was; });
}

}  // namespace redlock::lock
