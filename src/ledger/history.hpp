#pragma once

// The run ledger read back: what lock/ledger.hpp says a run is, read from
// every server (history-2.lua for one name, runs-1n.lua for many) and made
// one list. The ledger is written by the lock's own scripts (acquire,
// start-run, release), never from here.

#include <string>
#include <vector>

#include "lock/ledger.hpp"
#include "lock/servers.hpp"

namespace redlock::ledger {

// The runs of a name across servers: the union of every ledger that
// answered, newest first, and the clock of the first server that answered
// (server ms).
struct History {
  std::vector<lock::Run> runs;
  long long now_ms = 0;
};

// The newest `limit` runs of `name` in the ledgers, as one list. Fewer
// than a majority of servers answering is an Error; so is a ledger that
// is not redlock's (76) on the only server, or on a majority.
[[nodiscard]] History history(lock::Servers& servers, const std::string& name, long long limit);

// The last run and the last ok run of each of `names` (in their order),
// from every server's ledger that answers, many names a call; what no
// server says is none (status shows runs, and never fails for them).
[[nodiscard]] std::vector<lock::LastRuns> last_runs(lock::Servers& servers, const std::vector<std::string>& names);

}  // namespace redlock::ledger
