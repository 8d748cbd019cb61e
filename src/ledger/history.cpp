// The run ledger read back (lock/ledger.hpp says what a run is): every
// server's newest runs of a name, as one list, and status's last runs of
// many names.

#include "ledger/history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "ledger/runs.hpp"
#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "lock/scripts.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::ledger {

// The reading is the lock's scripts and their readers, all in lock::.
using namespace lock;

History history(lock::Servers& servers, const std::string& name, long long limit) {
  const Keys keys = keys_for(servers.options().prefix, name);
  auto answers = servers.round(to_args(keys, HistoryArgs{.count = limit}), lock::script(ScriptName::k_history), {});
  servers.refuse_shared_node(answers);
  const std::vector<HistoryVote> votes = tally<HistoryVote>(answers, servers.names(), "history", read_history_answer);
  servers.require_majority(failures_of(votes));
  History out;
  std::vector<std::vector<Run>> seen;
  size_t foreign = 0;
  std::string foreign_type;
  for (const HistoryVote& v : votes) {
    if (v.kind == HistoryVote::Kind::k_foreign) {
      ++foreign;
      foreign_type = v.foreign_type;
    } else if (v.kind == HistoryVote::Kind::k_runs) {
      if (seen.empty()) {
        out.now_ms = v.now_ms;
      }
      seen.push_back(v.runs);
    }
  }
  if (foreign > 0 && (foreign >= servers.quorum() || seen.empty())) {
    const std::string what = foreign_type + " where its run ledger (" + keys.runs + ") belongs";
    throw Error(ExitStatus::k_protocol,
                foreign_message(name, what,
                                servers.size() == 1 ? " on " + servers.names()[0]
                                                    : fmt::format(" on {} of {} servers", foreign, servers.size())));
  }
  out.runs = merge_runs(seen);
  if (out.runs.size() > static_cast<size_t>(limit)) {
    out.runs.resize(static_cast<size_t>(limit));
  }
  return out;
}

namespace {

// How many names one call of the runs script reads.
constexpr size_t k_runs_batch = 50;

// Files one call's answer (`count` names from `from`) under server `i`;
// false when it is not the runs script's answer.
bool take_runs(std::vector<std::vector<std::optional<LastRuns>>>& seen, size_t i, size_t from, size_t count,
               redis::Reply reply) {
  auto parts = per_lock_replies(std::move(reply), "runs", count);
  if (!parts || parts->size() != count) {
    return false;
  }
  for (size_t k = 0; k < count; ++k) {
    seen[from + k][i] = read_runs_answer((*parts)[k]);
  }
  return true;
}

// One name's last runs from what each server said of it (nullopt: nothing).
LastRuns merged_last(const std::vector<std::optional<LastRuns>>& servers) {
  LastRuns out;
  out.read = true;
  std::vector<std::vector<Run>> runs;
  for (const auto& s : servers) {
    if (!s) {
      continue;
    }
    out.now_ms = out.now_ms ? out.now_ms : s->now_ms;
    std::vector<Run> some;
    for (const auto& r : {s->last, s->last_ok}) {
      if (r) {
        some.push_back(*r);
      }
    }
    runs.push_back(std::move(some));
  }
  const std::vector<Run> merged = merge_runs(runs);
  if (!merged.empty()) {
    out.last = merged.front();
  }
  out.last_ok = last_ok(merged);
  return out;
}

void read_runs_one_by_one(lock::Servers& servers, size_t i, const std::vector<Keys>& keys, size_t from, size_t count,
                          std::vector<std::vector<std::optional<LastRuns>>>& seen) {
  std::vector<bool> only(servers.size(), false);
  only[i] = true;
  for (size_t j = from; j < from + count; ++j) {
    Answer a =
        servers.round(to_args(std::span<const Keys>(&keys[j], 1), RunsArgs{}), script(ScriptName::k_runs), only)[i];
    if (!a.failure) {
      (void)take_runs(seen, i, j, 1, std::move(a.reply));
    }
  }
}

}  // namespace

std::vector<LastRuns> last_runs(lock::Servers& servers, const std::vector<std::string>& names) {
  std::vector<Keys> keys;
  keys.reserve(names.size());
  for (const auto& name : names) {
    keys.push_back(keys_for(servers.options().prefix, name));
  }
  const size_t n = servers.size();
  // seen[j][i]: what server i said of name j.
  std::vector<std::vector<std::optional<LastRuns>>> seen(names.size(), std::vector<std::optional<LastRuns>>(n));
  std::vector<std::vector<redis::PipelinedCall>> calls(n);
  for (size_t from = 0; from < keys.size(); from += k_runs_batch) {
    const size_t to = std::min(keys.size(), from + k_runs_batch);
    for (size_t i = 0; i < n; ++i) {
      calls[i].push_back(
          {&script(ScriptName::k_runs), to_args(std::span<const Keys>(keys.data() + from, to - from), RunsArgs{})});
    }
  }
  auto said = servers.pipelined(calls);
  for (size_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < said[i].size(); ++b) {
      const size_t from = b * k_runs_batch;
      const size_t count = std::min(keys.size(), from + k_runs_batch) - from;
      if (said[i][b].failure || !take_runs(seen, i, from, count, std::move(said[i][b].reply))) {
        // A Redis Cluster (its names lie in several slots), or a refusal:
        // one name a call, each following the cluster's redirections.
        read_runs_one_by_one(servers, i, keys, from, count, seen);
      }
    }
  }
  std::vector<LastRuns> out;
  out.reserve(names.size());
  for (const auto& per_server : seen) {
    out.push_back(merged_last(per_server));
  }
  return out;
}

}  // namespace redlock::ledger
