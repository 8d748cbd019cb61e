// inspect-4n.lua, break-7.lua, leave-6.lua and line-3n.lua, row by row.

#include <gtest/gtest.h>

#include "lock/keys.hpp"
#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::ScriptName;

template <typename Args>
std::vector<std::string> args(const Args& a) {
  return lock::to_args(keys(), a);
}

// The arguments of a script that reads many locks, for lock "a" alone or
// for "a" and then "b".
template <typename Args>
std::vector<std::string> args_of_a(const Args& a) {
  return lock::to_args(std::vector<lock::Keys>{keys()}, a);
}
template <typename Args>
std::vector<std::string> args_of_a_b(const Args& a) {
  return lock::to_args(std::vector<lock::Keys>{keys(), lock::keys_for("t:", "b")}, a);
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
       args_of_a(lock::InspectArgs{}),
       "{'locks', {'none', '#', '5', -2, {}, {}, {}}}",
       {k_fence5}},
      {"AHeldLockShowsEveryField",
       inspect,
       {k_held, k_fence5},
       args_of_a(lock::InspectArgs{}),
       "{'locks', {'hash', '#', '5', ~30000, {'schema', 'redlock/1', 'token', 'T0', 'count', '1', 'fence', '5', "
       "'host', 'h0', 'pid', '10', 'cmd', 'c0', 'since_ms', '#', 'ttl_ms', '30000'}, {}, {}}}",
       {k_held_after, k_fence5}},
      {"AForeignKeyIsShownForWhatItIs",
       inspect,
       {"t:{a} = list x", "t:{a}:fence = list y"},
       args_of_a(lock::InspectArgs{}),
       "{'locks', {'list', '#', '', -2, {}, {}, {}}}",
       {"t:{a} = list x", "t:{a}:fence = list y"}},
      {"SeveralLocksAreReadInOneCallInTheirOrder",
       inspect,
       {"t:{b} = hash schema=redlock/1 token=T1 count=1 fence=7 host=h1 pid=11 cmd=c1 since_ms=NOW ttl_ms=9000 (px "
        "9000)",
        k_fence5},
       args_of_a_b(lock::InspectArgs{}),
       "{'locks', {'none', '#', '5', -2, {}, {}, {}}, {'hash', '#', '', ~9000, {'schema', 'redlock/1', 'token', 'T1', "
       "'count', '1', 'fence', '7', 'host', 'h1', 'pid', '11', 'cmd', 'c1', 'since_ms', '#', 'ttl_ms', '9000'}, {}, "
       "{}}}",
       {"t:{b} = hash cmd=c1 count=1 fence=7 host=h1 pid=11 schema=redlock/1 since_ms=# token=T1 ttl_ms=9000 "
        "(px ~9000)",
        k_fence5}},
      {"AFullReplyLeavesTheRestForTheNextCall",
       inspect,
       // Some 300 KB in the first lock: more than one reply holds (256 KiB).
       {"t:{a} = hash schema=redlock/1 mode=semaphore limit=2 h:T0=" + std::string(300'000, 'x') + " (px 30000)",
        "t:{b} = hash schema=redlock/1 token=T1 count=1 (px 9000)"},
       args_of_a_b(lock::InspectArgs{}),
       "{'locks', {'hash', '#', '', ~30000, {*}, {}, {}}}",
       {"t:{a} = hash *", "t:{b} = hash count=1 schema=redlock/1 token=T1 (px ~9000)"}},

      {"BreakingAPlainLockNamesItsHolder",
       brk,
       {k_held, k_fence5},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5},
       {k_told_broken_t0, k_released}},
      {"BreakingAFreeLockFindsItFree", brk, {k_fence5}, args(lock::BreakArgs{}), "{'free'}", {k_fence5}},
      {"BreakingASemaphoreNamesItsLiveHolders",
       brk,
       {"t:{a} = hash schema=redlock/1 mode=semaphore limit=2 " + holder("T0", "h0", 10) + " " +
            holder("T2", "h2", 12, "-1") + " (px 30000)",
        k_fence5},
       args(lock::BreakArgs{}),
       "{'broken', 'semaphore', '2', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5},
       {k_told_broken_t0, k_released}},
      {"BreakingWakesTheFirstInLine",
       brk,
       {k_held, k_fence5, k_line_w1},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5, k_line_w1_after},
       {k_told_broken_t0, "t:{a}:released released W1", "t:{a}:released:W1 released W1"}},
      {"BreakingPrunesTheDeadAndTellsTheOneThatComesNear",
       brk,
       {k_held, k_fence5, k_line_dead_w1_w2},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5, k_line_w2_after},
       {k_told_broken_t0, "t:{a}:released:W2 moved W2", "t:{a}:released released W2", "t:{a}:released:W2 released W2"}},
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
       args_of_a(lock::LineArgs{}),
       // The first entries with their expiry, and how many are alive.
       R"({'lines', {'hash', '#', {'schema', 'redlock/1', 'w:W1', '{*"ticket":1*}'}, 1}})",
       {k_line_w1_after}},
      {"NoLineReadsAsNone", line, {}, args_of_a(lock::LineArgs{}), "{'lines', {'none', '#', {}, 0}}", {}},
      {"SeveralLinesAreReadInOneCallInTheirOrder",
       line,
       {k_line_w1},
       args_of_a_b(lock::LineArgs{}),
       R"({'lines', {'hash', '#', {'schema', 'redlock/1', 'w:W1', '{*"ticket":1*}'}, 1}, {'none', '#', {}, 0}})",
       {k_line_w1_after}},
      {"OnlyTheHeadOfALineIsListedAndAllAreCounted",
       line,
       {k_line_w1_w2},
       args_of_a(lock::LineArgs{.listed = 1}),
       R"({'lines', {'hash', '#', {'schema', 'redlock/1', 'w:W1', '{*"ticket":1*}'}, 2}})",
       {"t:{a}:beats = zset W1=# W2=# (px ~10000)\n"
        "t:{a}:line = zset W1=1 W2=2 (px ~10000)\n"
        "t:{a}:waiters = hash " +
        entry_after("W1", 1) + " " + entry_after("W2", 2) +
        " schema=redlock/1 seq=2 (px ~10000)\n"
        "t:{a}:writers = zset W1=1 W2=2 (px ~10000)"}},
  };
}

class OtherScripts : public testing::TestWithParam<Row> {};

TEST_P(OtherScripts, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, OtherScripts, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
