// Locker's reading of the run ledger (ledger.hpp): every server's newest
// runs of a name, as one list.

#include <fmt/format.h>

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "lock/locker.hpp"
#include "util/exit_status.hpp"

namespace redlock::lock {

History Locker::history(const std::string& name, long long limit) {
  const Keys keys = keys_for(m_options.prefix, name);
  auto answers = round(to_args(keys, HistoryArgs{.count = limit}), lock::script(ScriptName::k_history), {});
  refuse_shared_node(answers);
  const std::vector<HistoryVote> votes = tally<HistoryVote>(answers, m_names, "history", read_history_answer);
  require_majority(failures_of(votes));
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
  if (foreign > 0 && (foreign >= quorum() || seen.empty())) {
    const std::string what = foreign_type + " where its run ledger (" + keys.runs + ") belongs";
    throw Error(ExitStatus::k_protocol,
                foreign_message(name, what,
                                m_conns.size() == 1 ? " on " + m_names[0]
                                                    : fmt::format(" on {} of {} servers", foreign, m_conns.size())));
  }
  out.runs = merge_runs(seen);
  if (out.runs.size() > static_cast<size_t>(limit)) {
    out.runs.resize(static_cast<size_t>(limit));
  }
  return out;
}

}  // namespace redlock::lock
