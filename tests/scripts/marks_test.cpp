// suspend-3.lua, revoke-2.lua, and what acquire-10.lua and break-7.lua do
// with them (a suspension, a revoke of some runs only, a note), and what
// revoke and break tell a run's exec on its own channel, row by row.

#include <gtest/gtest.h>

#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::ScriptName;
using namespace std::chrono_literals;

template <typename Args>
std::vector<std::string> args(const Args& a) {
  return lock::to_args(keys(), a);
}

// The run ids of tokens T0 and T2: the first 16 hex digits of their SHA-1.
const std::string k_run_t0 = "8878120356066db1";
const std::string k_run_t2 = "f8cf5510c304dce7";

lock::AcquireArgs take(const std::string& token) {
  lock::AcquireArgs a;
  a.token = token;
  a.ttl = 30s;
  a.host = "h1";
  a.pid = 11;
  a.cmd = "c1";
  a.lease = 10s;
  return a;
}

const std::string k_suspended =
    "t:{a}:suspended = hash schema=redlock/1 reason=maint host=h9 pid=99 since_ms=NOW-1000 until_ms=-1";
const std::string k_suspended_after =
    "t:{a}:suspended = hash host=h9 pid=99 reason=maint schema=redlock/1 since_ms=# until_ms=-1";
const std::string k_suspended_reply = "{'suspended', 'maint', 'h9', '99', '#', '-1', '#'}";

std::vector<Row> rows() {
  const auto suspend = ScriptName::k_suspend;
  const auto revoke = ScriptName::k_revoke;
  const auto acquire = ScriptName::k_acquire;
  const auto brk = ScriptName::k_break;
  const lock::SuspendArgs maint{.reason = "maint", .host = "h9", .pid = 99};
  return {
      {"ASuspensionIsMarkedAndListedInTheIndex",
       suspend,
       {},
       args(maint),
       "{'suspended', '-1', '#'}",
       {k_suspended_after, "t:index = zset t:{a}:suspended=# redlock/1=inf"}},
      {"ASuspensionForAWhileExpiresByItself",
       suspend,
       {},
       args(lock::SuspendArgs{.reason = "maint", .host = "h9", .pid = 99, .lapse_after = 60s}),
       "{'suspended', '#', '#'}",
       {"t:{a}:suspended = hash host=h9 pid=99 reason=maint schema=redlock/1 since_ms=# until_ms=# (px ~60000)",
        "t:index = zset t:{a}:suspended=# redlock/1=inf"}},
      {"ResumingLiftsItAndLeavesTheIndex",
       suspend,
       {k_suspended, "t:index = zset t:{a}:suspended=9000000000000000 redlock/1=inf"},
       args(lock::SuspendArgs{.resume = true}),
       "{'resumed', 1}",
       {"t:index = zset redlock/1=inf"}},
      {"ResumingANameNotSuspendedSaysSo", suspend, {}, args(lock::SuspendArgs{.resume = true}), "{'resumed', 0}", {}},
      {"AForeignMarkIsLeftAlone",
       suspend,
       {"t:{a}:suspended = string x"},
       args(maint),
       "{'foreign', 'string where the suspension of t:{a} (t:{a}:suspended) belongs'}",
       {"t:{a}:suspended = string x"}},

      {"ASuspendedNameIsNotTaken", acquire, {k_suspended}, args(take("T1")), k_suspended_reply, {k_suspended_after}},
      {"ASuspendedNameIsNotTakenWhileHeldEither",
       acquire,
       {k_held, k_fence5, k_suspended},
       args(take("T1")),
       k_suspended_reply,
       {k_held_after, k_fence5, k_suspended_after}},
      {"ItsHolderReEntersASuspendedName",
       acquire,
       {k_held, k_fence5, k_suspended},
       args([] {
         lock::AcquireArgs a = take("T1");
         a.reenter = "T0";
         return a;
       }()),
       "{'reentered', 'T0', 5, 2, ~30000}",
       {"t:{a} = hash cmd=c0 count=2 fence=5 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=30000 "
        "(px ~30000)",
        k_fence5, k_suspended_after, k_indexed}},
      {"AWaiterInLineLeavesItWhenSuspended",
       acquire,
       {k_line_w1, k_suspended},
       args([] {
         lock::AcquireArgs a = take("T1");
         a.waiter = "W1";
         return a;
       }()),
       k_suspended_reply,
       {k_suspended_after}},
      // A token to re-enter that holds nothing is a newcomer: it leaves the
      // line too.
      {"AReEntryThatHoldsNothingLeavesTheLineOfASuspendedName",
       acquire,
       {k_fence5, k_line_w1, k_suspended},
       args([] {
         lock::AcquireArgs a = take("T1");
         a.reenter = "T9";
         a.waiter = "W1";
         return a;
       }()),
       k_suspended_reply,
       {k_fence5, k_suspended_after}},
      {"ANoteIsKeptWithANewHold",
       acquire,
       {},
       args([] {
         lock::AcquireArgs a = take("T1");
         a.note = "web-3:8080";
         return a;
       }()),
       "{'acquired', 'T1', #, 1, 30000}",
       {"t:{a} = hash cmd=c1 count=1 fence=# host=h1 note=web-3:8080 pid=11 schema=redlock/1 since_ms=# token=T1 "
        "ttl_ms=30000 (px ~30000)",
        "t:{a}:fence = string #", k_indexed}},

      {"ARevokeMarksTheHoldersRunAndTellsIt",
       revoke,
       {k_held, k_fence5},
       args(lock::RevokeArgs{.host = "h9", .pid = 99, .grace = 5s}),
       // The table's own listener (PSUBSCRIBE) is the one that hears it.
       // Heard on the lock's channel (1) and on the run's own (the 1 last).
       "{'revoking', 1, '#', {{'" + k_run_t0 + "', 'h0', '10', 'c0', '#', '5', 1}}}",
       {k_held_after, k_fence5,
        "t:{a}:revoke = hash r:" + k_run_t0 +
            R"(={"grace_ms":5000,"host":"h9","pid":"99","since_ms":"#"} schema=redlock/1 (px ~65000))"},
       // JSON whose keys cjson orders as it likes: the exec side reads it
       // (tests/integration/lock/marks_test.cpp).
       {"t:{a}:revoke {*" + k_run_t0 + "*}", "t:{a}:revoke:" + k_run_t0 + " {*" + k_run_t0 + "*}"}},
      {"ARevokeOfAHoldKeptForItsMinimumHoldNamesNoRunAndTellsNobody",
       revoke,
       {"t:{a} = hash schema=redlock/1 token= count=0 fence=5 host=h0 pid=10 cmd=c0 since_ms=NOW-1000 "
        "finished_ms=NOW-500 ttl_ms=30000 (px 30000)",
        k_fence5},
       args(lock::RevokeArgs{.host = "h9", .pid = 99}),
       "{'revoking', 0, '#', {{'', 'h0', '10', 'c0', '#', '5', 0}}}",
       {"t:{a} = hash cmd=c0 count=0 fence=5 finished_ms=# host=h0 pid=10 schema=redlock/1 since_ms=# token= "
        "ttl_ms=30000 (px ~30000)",
        k_fence5, "t:{a}:revoke = hash schema=redlock/1 (px ~60000)"}},
      {"ARevokeOfAFreeLockFindsItFree",
       revoke,
       {k_fence5},
       args(lock::RevokeArgs{.host = "h9", .pid = 99}),
       "{'free'}",
       {k_fence5}},
      {"ARevokeOfASemaphoreAsksEveryHolder",
       revoke,
       {k_semaphore_full},
       args(lock::RevokeArgs{.host = "h9", .pid = 99}),
       // Both holders, in the order the hash gives them (the mark below
       // names each).
       "{'revoking', 1, '#', {*}}",
       {"t:{a} = hash *", "t:{a}:revoke = hash r:" + k_run_t0 +
                              R"(={"grace_ms":0,"host":"h9","pid":"99","since_ms":"#"} r:)" + k_run_t2 +
                              R"(={"grace_ms":0,"host":"h9","pid":"99","since_ms":"#"} schema=redlock/1 (px ~60000))"},
       {"t:{a}:revoke *", "t:{a}:revoke:* *", "t:{a}:revoke:* *"}},

      {"BreakingARevokedRunThatStillHoldsIt",
       brk,
       {k_held, k_fence5},
       args(lock::BreakArgs{k_run_t0}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5},
       {k_told_broken_t0, "t:{a}:released released"}},
      {"ABreakTellsTheBrokenRunsExecWhoBrokeIt",
       brk,
       {k_held, k_fence5},
       args(lock::BreakArgs{.host = "h9", .pid = 99}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5},
       {"t:{a}:revoke:" + k_run_t0 + R"( {*"host":"h9"*})", "t:{a}:released released"}},
      {"BreakingARevokedRunLeavesTheHolderThatCameSince",
       brk,
       {k_held, k_fence5},
       args(lock::BreakArgs{k_run_t2}),
       "{'free'}",
       {k_held_after, k_fence5, k_indexed}},
      {"BreakingOneRevokedHolderOfASemaphoreLeavesTheOther",
       brk,
       {k_semaphore_full},
       args(lock::BreakArgs{k_run_t2}),
       "{'broken', 'semaphore', '2', '#', {{'T2', 'h2', '12', 'c0', '#', '5', '1'}}}",
       {"t:{a} = hash " + holder_after("T0", "h0", 10) + " limit=2 mode=semaphore schema=redlock/1 (px ~30000)",
        k_indexed},
       {"t:{a}:revoke:" + k_run_t2 + R"( {*"broken":true*})", "t:{a}:released released"}},
  };
}

class MarkScripts : public testing::TestWithParam<Row> {};

TEST_P(MarkScripts, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, MarkScripts, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
