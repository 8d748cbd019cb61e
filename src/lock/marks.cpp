#include "lock/marks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "util/exit_status.hpp"

namespace redlock::lock {
namespace {

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

}  // namespace

Revoking revoke(Servers& servers, const std::string& name, const Owner& by, Millis grace) {
  const Keys keys = keys_for(servers.options().prefix, name);
  const RevokeArgs args{.host = by.host, .pid = by.pid, .grace = grace};
  const auto answers = servers.round(to_args(keys, args), lock::script(ScriptName::k_revoke), {});
  const std::vector<RevokeVote> votes = tally<RevokeVote>(answers, servers.names(), "revoke", read_revoke_answer);
  for (size_t i = 0; i < votes.size(); ++i) {
    if (votes[i].kind == RevokeVote::Kind::k_foreign) {
      throw Error(ExitStatus::k_protocol, foreign_message(name, votes[i].foreign_type, " on " + servers.names()[i]));
    }
  }
  servers.require_majority(failures_of(votes));
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

SuspendedUntil suspend(Servers& servers, const std::string& name, const std::string& reason, const Owner& by,
                       Millis lapse_after) {
  const Keys keys = keys_for(servers.options().prefix, name);
  const SuspendArgs args{.reason = reason, .host = by.host, .pid = by.pid, .lapse_after = lapse_after};
  const std::vector<MarkVote> votes =
      mark_votes(name, servers.round(to_args(keys, args), lock::script(ScriptName::k_suspend), {}), servers.names());
  servers.require_majority(failures_of(votes));
  SuspendedUntil out;
  for (const MarkVote& v : votes) {
    if (v.kind == MarkVote::Kind::k_suspended) {
      out = SuspendedUntil{v.until_ms, v.now_ms};
      break;
    }
  }
  return out;
}

bool resume(Servers& servers, const std::string& name, const Owner& by) {
  const Keys keys = keys_for(servers.options().prefix, name);
  const SuspendArgs args{.resume = true, .host = by.host, .pid = by.pid};
  const std::vector<MarkVote> votes =
      mark_votes(name, servers.round(to_args(keys, args), lock::script(ScriptName::k_suspend), {}), servers.names());
  servers.require_majority(failures_of(votes));
  return std::any_of(votes.begin(), votes.end(), [](const MarkVote& v) { return v.was; });
}

}  // namespace redlock::lock
