// acquire-10.lua, row by row: fresh, busy, re-entry, semaphore, readers,
// the line of waiters, foreign keys and fence counters.

#include <gtest/gtest.h>

#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::AcquireArgs;
using lock::Claim;
using lock::ScriptName;
using Mode = Claim::Mode;
using namespace std::chrono_literals;

// T1 asks from h1 (pid 11, running c1) for 30 s, in line by fairness but
// not as a waiter.
AcquireArgs take(const std::string& token, Mode mode = Mode::k_exclusive, int limit = 1) {
  AcquireArgs a;
  a.token = token;
  a.ttl = 30s;
  a.host = "h1";
  a.pid = 11;
  a.cmd = "c1";
  a.mode = mode;
  a.limit = limit;
  a.lease = 10s;
  return a;
}

template <typename Change>
AcquireArgs take(const std::string& token, Change change) {
  AcquireArgs a = take(token);
  change(a);
  return a;
}

std::vector<std::string> args(const AcquireArgs& a) {
  return lock::to_args(keys(), a);
}

const std::string k_t1_holds =
    "t:{a} = hash cmd=c1 count=1 fence=# host=h1 pid=11 schema=redlock/1 since_ms=# token=T1 ttl_ms=30000 (px ~30000)";
const std::string k_t2_holds =
    "t:{a} = hash cmd=c1 count=1 fence=# host=h1 pid=11 schema=redlock/1 since_ms=# token=T2 ttl_ms=30000 (px ~30000)";
const std::string k_some_fence = "t:{a}:fence = string #";
const std::string k_t1_entry = R"(h:T1={"cmd":"c1","count":1,"expiry":#,"fence":"#","host":"h1","pid":11,)"
                               R"("since":#,"ttl":30000})";

std::vector<Row> rows() {
  const auto acquire = ScriptName::k_acquire;
  return {
      {"AFreeLockIsTaken",
       acquire,
       {},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed}},
      {"TheFenceFollowsTheCounter",
       acquire,
       {"t:{a}:fence = string 8000000000000000"},
       args(take("T1")),
       "{'acquired', 'T1', 8000000000000001, 1, 30000}",
       {"t:{a} = hash cmd=c1 count=1 fence=8000000000000001 host=h1 pid=11 schema=redlock/1 since_ms=# token=T1 "
        "ttl_ms=30000 (px ~30000)",
        "t:{a}:fence = string 8000000000000001", k_indexed}},
      {"AHeldLockIsBusyAndNamesItsHolder",
       acquire,
       {k_held, k_fence5},
       args(take("T1")),
       "{'busy', ~30000, 'h0', '10', 0, 0, 0, 'c0', 1, '', #, ''}",
       {k_held_after, k_fence5}},
      {"TheHoldersTokenReEnters",
       acquire,
       {k_held, k_fence5},
       args(take("T1", [](AcquireArgs& a) { a.reenter = "T0"; })),
       "{'reentered', 'T0', 5, 2, ~30000}",
       {"t:{a} = hash cmd=c0 count=2 fence=5 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=30000 "
        "(px ~30000)",
        k_fence5, k_indexed}},
      {"AnotherTokenDoesNotReEnter",
       acquire,
       {k_held, k_fence5},
       args(take("T1", [](AcquireArgs& a) { a.reenter = "T9"; })),
       "{'busy', ~30000, 'h0', '10', 0, 0, 0, 'c0', 1, '', #, ''}",
       {k_held_after, k_fence5}},
      {"AMinimumHoldMakesTheFirstLeaseThatLong",
       acquire,
       {},
       args(take("T1",
                 [](AcquireArgs& a) {
                   a.ttl = 1s;
                   a.min_hold = 60s;
                 })),
       "{'acquired', 'T1', #, 1, 60000}",
       {"t:{a} = hash cmd=c1 count=1 fence=# host=h1 pid=11 schema=redlock/1 since_ms=# token=T1 ttl_ms=1000 "
        "(px ~60000)",
        k_some_fence, k_indexed}},
      {"ASemaphoresFirstHolder",
       acquire,
       {},
       args(take("T1", Mode::k_semaphore, 2)),
       "{'acquired', 'T1', #, 1, 30000}",
       {"t:{a} = hash " + k_t1_entry + " limit=2 mode=semaphore schema=redlock/1 (px ~30000)", k_some_fence,
        k_indexed}},
      {"ASemaphoreWithRoomTakesAnotherHolder",
       acquire,
       {k_semaphore, k_fence5},
       args(take("T1", Mode::k_semaphore, 2)),
       "{'acquired', 'T1', #, 1, 30000}",
       {"t:{a} = hash " + holder_after("T0", "h0", 10) + " " + k_t1_entry +
            " limit=2 mode=semaphore schema=redlock/1 (px ~30000)",
        k_some_fence, k_indexed}},
      // The holder named is the first HGETALL returns: a hash with values
      // over 64 bytes has no order.
      {"AFullSemaphoreIsBusy",
       acquire,
       {k_semaphore_full, k_fence5},
       args(take("T1", Mode::k_semaphore, 2)),
       "{'busy', ~30000, 'h*', '1*', 0, 0, 0, 'c0', 2, '', #, ''}",
       {"t:{a} = hash " + holder_after("T0", "h0", 10) + " " + holder_after("T2", "h2", 12) +
            " limit=2 mode=semaphore schema=redlock/1 (px ~30000)",
        k_fence5}},
      {"ASemaphoreAskedWithAnotherLimitIsAMismatch",
       acquire,
       {k_semaphore, k_fence5},
       args(take("T1", Mode::k_semaphore, 3)),
       "{'mismatch', 'semaphore', '2'}",
       {k_semaphore_after, k_fence5}},
      {"ASemaphoreAskedOfAPlainLockIsAMismatch",
       acquire,
       {k_held, k_fence5},
       args(take("T1", Mode::k_semaphore, 2)),
       "{'mismatch', 'exclusive', '1'}",
       {k_held_after, k_fence5}},
      {"AnExpiredHolderMakesRoom",
       acquire,
       {"t:{a} = hash schema=redlock/1 mode=semaphore limit=1 " + holder("T0", "h0", 10, "-1") + " (px 30000)",
        k_fence5},
       args(take("T1", Mode::k_semaphore, 1)),
       "{'acquired', 'T1', #, 1, 30000}",
       {"t:{a} = hash " + k_t1_entry + " limit=1 mode=semaphore schema=redlock/1 (px ~30000)", k_some_fence,
        k_indexed}},
      {"ReadersShare",
       acquire,
       {k_readers, k_fence5},
       args(take("T1", Mode::k_shared)),
       "{'acquired', 'T1', #, 1, 30000}",
       {"t:{a} = hash " + holder_after("T0", "h0", 10) + " " + k_t1_entry +
            " limit=0 mode=shared schema=redlock/1 (px ~30000)",
        k_some_fence, k_indexed}},
      {"AWriterWaitsForTheReaders",
       acquire,
       {k_readers, k_fence5},
       args(take("T1")),
       "{'busy', ~30000, 'h0', '10', 0, 0, 0, 'c0', 1, '', #, ''}",
       {"t:{a} = hash " + holder_after("T0", "h0", 10) + " limit=0 mode=shared schema=redlock/1 (px ~30000)",
        k_fence5}},
      {"AReaderDoesNotReEnterAsAWriter",
       acquire,
       {k_readers, k_fence5},
       args(take("T1", [](AcquireArgs& a) { a.reenter = "T0"; })),
       "{'upgrade', 'shared', ''}",
       {"t:{a} = hash " + holder_after("T0", "h0", 10) + " limit=0 mode=shared schema=redlock/1 (px ~30000)",
        k_fence5}},
      {"AWaiterJoinsTheLineOfAHeldLock",
       acquire,
       {k_held, k_fence5},
       args(take("T1", [](AcquireArgs& a) { a.waiter = "W1"; })),
       "{'busy', ~30000, 'h0', '10', 1, 0, 1, 'c0', 1, '', #, ''}",
       // Near the head a lease is the near lease (2 s), whatever was asked.
       {k_held_after, k_fence5,
        "t:{a}:beats = zset W1=# (px ~2000)\nt:{a}:line = zset W1=1 (px ~2000)\n"
        "t:{a}:waiters = hash " +
            entry_after("W1", 1) +
            " schema=redlock/1 seq=1 (px ~2000)\n"
            "t:{a}:writers = zset W1=1 (px ~2000)"}},
      {"ANewcomerDoesNotPassTheLine",
       acquire,
       {k_line_w1},
       args(take("T2")),
       "{'busy', 0, '', '', 0, 1, 0, '', 0, '', -1, ''}",
       {k_line_w1_after}},
      {"AFullLineTurnsANewcomerAwayWithoutQueueingIt",
       acquire,
       {k_line_w1},
       args(take("T2",
                 [](AcquireArgs& a) {
                   a.waiter = "W2";
                   a.max_waiters = 1;
                 })),
       "{'busy', 0, '', '', 0, 1, 0, '', 0, '', -1, 'full'}",
       {k_line_w1_after}},
      {"AWaiterAlreadyInAFullLineKeepsItsPlace",
       acquire,
       {k_line_w1_w2},
       args(take("T2",
                 [](AcquireArgs& a) {
                   a.waiter = "W2";
                   a.max_waiters = 1;
                 })),
       "{'busy', 0, '', '', 2, 1, 2, '', 0, '', -1, ''}",
       // W2 was in line already: a heartbeat, not a newcomer.
       {"t:{a}:beats = zset W2=# W1=# (px ~10000)\nt:{a}:line = zset W1=1 W2=2 (px ~10000)\n"
        "t:{a}:waiters = hash " +
        entry_after("W1", 1) + " " + entry_after("W2", 2) +
        " schema=redlock/1 seq=2 (px ~10000)\nt:{a}:writers = zset W1=1 W2=2 (px ~10000)"}},
      {"TheSecondInLineWaitsForTheFirst",
       acquire,
       {k_line_w1_w2},
       args(take("T2", [](AcquireArgs& a) { a.waiter = "W2"; })),
       "{'busy', 0, '', '', 2, 1, 2, '', 0, '', -1, ''}",
       // W2's beat cut its lease to the near lease: it comes first by expiry.
       {"t:{a}:beats = zset W2=# W1=# (px ~10000)\nt:{a}:line = zset W1=1 W2=2 (px ~10000)\n"
        "t:{a}:waiters = hash " +
        entry_after("W1", 1) + " " + entry_after("W2", 2) +
        " schema=redlock/1 seq=2 (px ~10000)\nt:{a}:writers = zset W1=1 W2=2 (px ~10000)"}},
      {"TheFirstInLineTakesTheLockAndLeavesTheLine",
       acquire,
       {k_line_w1},
       args(take("T1", [](AcquireArgs& a) { a.waiter = "W1"; })),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed}},
      {"UnfairPassesTheLine",
       acquire,
       {k_line_w1},
       args(take("T1", [](AcquireArgs& a) { a.fair = false; })),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_line_w1_after, k_indexed}},
      {"AStringIsForeign",
       acquire,
       {"t:{a} = string x"},
       args(take("T1")),
       "{'foreign', 'string'}",
       {"t:{a} = string x"}},
      {"AHashWithoutTheMarkerIsForeign",
       acquire,
       {"t:{a} = hash token=T0 count=1"},
       args(take("T1")),
       "{'foreign', 'hash without redlock's schema field'}",
       {"t:{a} = hash count=1 token=T0"}},
      {"AHashOfAnotherLayoutIsForeign",
       acquire,
       {"t:{a} = hash schema=redlock/2 token=T0 count=1"},
       args(take("T1")),
       "{'foreign', 'hash of redlock layout redlock/2'}",
       {"t:{a} = hash count=1 schema=redlock/2 token=T0"}},
      {"ALineThatIsNotRedlocksIsForeign",
       acquire,
       {"t:{a}:waiters = list x"},
       args(take("T1")),
       "{'foreign', 'list at t:{a}:waiters'}",
       {"t:{a}:waiters = list x"}},
      {"ASortedSetOfTheLineWithoutItsHashIsForeign",
       acquire,
       {"t:{a}:line = zset x=1"},
       args(take("T1")),
       "{'foreign', 'zset at t:{a}:line'}",
       {"t:{a}:line = zset x=1"}},
      // The line of a binary before 0.2 is neither read nor written.
      {"TheLineOfAnOlderLayoutIsLeftAlone",
       acquire,
       {"t:{a}:queue = hash schema=redlock/1 seq=1 w:W1=x"},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, "t:{a}:queue = hash schema=redlock/1 seq=1 w:W1=x", k_indexed}},
      {"ADeadHeadIsPrunedAndPassed",
       acquire,
       {"t:{a}:beats = zset W1=NOW-1 (px 10000)\nt:{a}:line = zset W1=1 (px 10000)\n"
        "t:{a}:waiters = hash schema=redlock/1 seq=1 " +
        entry("W1", 1) +
        " (px 10000)\n"
        "t:{a}:writers = zset W1=1 (px 10000)"},
       args(take("T2")),
       "{'acquired', 'T2', #, 1, 30000}",
       {k_t2_holds, k_some_fence, k_indexed}},
      {"AFenceCounterThatIsNotANumberIsRefused",
       acquire,
       {"t:{a}:fence = string abc"},
       args(take("T1")),
       "error: *the fence counter t:{a}:fence holds abc, which redlock cannot increase exactly*",
       {"t:{a}:fence = string abc"}},
      {"AFenceCounterOfAnotherTypeIsForeign",
       acquire,
       {"t:{a}:fence = list x"},
       args(take("T1")),
       "{'foreign', 'list where its fence counter (t:{a}:fence) belongs'}",
       {"t:{a}:fence = list x"}},
      {"ACounterAtTheLastFenceIsRefused",
       acquire,
       {"t:{a}:fence = string 9007199254740991"},
       args(take("T1")),
       "error: *the fence counter t:{a}:fence holds 9007199254740991, which redlock cannot increase exactly*",
       {"t:{a}:fence = string 9007199254740991"}},
  };
}

class AcquireScript : public testing::TestWithParam<Row> {};

TEST_P(AcquireScript, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, AcquireScript, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
