#pragma once

// Every server's ledger of one name made one list, and the decisions
// `history`, `overdue` and `status` make from it. Pure functions, tested
// table-driven in tests/unit/lock/ledger_test.cpp.

#include <optional>
#include <vector>

#include "lock/ledger.hpp"
#include "util/duration.hpp"

namespace redlock::ledger {

// Every server's runs (each newest first) as one list, newest first by
// start: a run seen on several servers once, as the most servers recorded
// its end (an ended run beats a running or abandoned one; a tie goes to the
// server listed first), with the largest fence any of them has.
[[nodiscard]] std::vector<lock::Run> merge_runs(const std::vector<std::vector<lock::Run>>& servers);

// The newest ok run by its end, or nullopt.
[[nodiscard]] std::optional<lock::Run> last_ok(const std::vector<lock::Run>& runs);

// overdue's decision: whether the last ok run ended within `max_age` of
// `now_ms` (server time), and which run that is.
struct Overdue {
  bool overdue = true;
  std::optional<lock::Run> last_ok;  // nullopt: never ran ok (as far as the ledger keeps)
  Millis age{0};                     // how long ago the last ok run ended
};
[[nodiscard]] Overdue decide_overdue(const std::vector<lock::Run>& runs, long long now_ms, Millis max_age);

}  // namespace redlock::ledger
