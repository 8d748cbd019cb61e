// inspect-2.lua, break-2.lua, leave-2.lua and line-1.lua, row by row.

#include <gtest/gtest.h>

#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::ScriptName;

template <typename Args>
std::vector<std::string> args(const Args& a) {
  return lock::to_args(keys(), a);
}

const std::string k_released = "t:{a}:released released";

std::vector<Row> rows() {
  const auto inspect = ScriptName::k_inspect;
  const auto brk = ScriptName::k_break;
  const auto leave = ScriptName::k_leave;
  const auto line = ScriptName::k_line;
  return {
      {"AFreeLockShowsItsCounter",
       inspect,
       {k_fence5},
       args(lock::InspectArgs{}),
       "{'none', '#', '5', -2, {}}",
       {k_fence5}},
      {"AHeldLockShowsEveryField",
       inspect,
       {k_held, k_fence5},
       args(lock::InspectArgs{}),
       "{'hash', '#', '5', ~30000, {'schema', 'redlock/1', 'token', 'T0', 'count', '1', 'fence', '5', 'host', 'h0', "
       "'pid', '10', 'cmd', 'c0', 'since_ms', '#', 'ttl_ms', '30000'}}",
       {k_held_after, k_fence5}},
      {"AForeignKeyIsShownForWhatItIs",
       inspect,
       {"t:{a} = list x", "t:{a}:fence = list y"},
       args(lock::InspectArgs{}),
       "{'list', '#', '', -2, {}}",
       {"t:{a} = list x", "t:{a}:fence = list y"}},

      {"BreakingAPlainLockNamesItsHolder",
       brk,
       {k_held, k_fence5},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5},
       {k_released}},
      {"BreakingAFreeLockFindsItFree", brk, {k_fence5}, args(lock::BreakArgs{}), "{'free'}", {k_fence5}},
      {"BreakingASemaphoreNamesItsLiveHolders",
       brk,
       {"t:{a} = hash schema=redlock/1 mode=semaphore limit=2 " + holder("T0", "h0", 10) + " " +
            holder("T2", "h2", 12, "-1") + " (px 30000)",
        k_fence5},
       args(lock::BreakArgs{}),
       "{'broken', 'semaphore', '2', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5},
       {k_released}},
      {"BreakingWakesTheFirstInLine",
       brk,
       {k_held, k_fence5, k_line_w1},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5, k_line_w1_after},
       {"t:{a}:released released W1", "t:{a}:released:W1 released W1"}},
      {"BreakingPrunesTheDeadAndTellsTheOneThatComesNear",
       brk,
       {k_held, k_fence5, k_line_dead_w1_w2},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5, k_line_w2_after},
       {"t:{a}:released:W2 moved W2", "t:{a}:released released W2", "t:{a}:released:W2 released W2"}},
      {"AForeignKeyIsNotBroken",
       brk,
       {"t:{a} = string x"},
       args(lock::BreakArgs{}),
       "{'foreign', 'string'}",
       {"t:{a} = string x"}},

      {"TheLastWaiterTakesTheLineWithIt", leave, {k_line_w1}, args(lock::LeaveArgs{"W1"}), "{'left'}", {}},
      {"TheFirstLeavingWakesTheNext",
       leave,
       {k_line_w1_w2},
       args(lock::LeaveArgs{"W1"}),
       "{'left'}",
       {k_line_w2_after},
       // W2 came near the head with a long lease: it is cut, and W2 told.
       {"t:{a}:released released W2", "t:{a}:released:W2 released W2", "t:{a}:released:W2 moved W2"}},
      {"BehindAHeldLockNobodyIsWoken",
       leave,
       {k_held, k_line_w1_w2},
       args(lock::LeaveArgs{"W1"}),
       "{'left'}",
       {k_held_after, k_line_w2_after},
       {"t:{a}:released:W2 moved W2"}},
      {"LeavingALineThatIsNotRedlocksIsRefused",
       leave,
       {"t:{a}:waiters = list x"},
       args(lock::LeaveArgs{"W1"}),
       "{'foreign', 'list at t:{a}:waiters'}",
       {"t:{a}:waiters = list x"}},

      {"TheLineIsReadAsItIs",
       line,
       {k_line_w1},
       args(lock::LineArgs{}),
       // The first entries with their expiry, and how many are alive.
       R"({'hash', '#', {'schema', 'redlock/1', 'w:W1', '{*"ticket":1*}'}, 1})",
       {k_line_w1_after}},
      {"NoLineReadsAsNone", line, {}, args(lock::LineArgs{}), "{'none', '#', {}, 0}", {}},
  };
}

class OtherScripts : public testing::TestWithParam<Row> {};

TEST_P(OtherScripts, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, OtherScripts, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
