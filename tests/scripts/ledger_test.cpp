// The run ledger (includes/ledger.lua) row by row: acquire-10.lua starting
// a run, naming an abandoned one and refusing within a skip window;
// start-run-3.lua starting the run of a hold taken already; release-9.lua
// ending a run; history-2.lua reading them; and the index of names with a
// ledger that the writes keep.

#include <gtest/gtest.h>

#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::AcquireArgs;
using lock::HistoryArgs;
using lock::ReleaseArgs;
using lock::ScriptName;
using lock::StartRunArgs;
using namespace std::chrono_literals;

// The run ids of tokens T0 and T1: the first 16 hex digits of their SHA-1.
const std::string k_run0 = "8878120356066db1";
const std::string k_run1 = "e2398779d5a199b7";

// T1 from h1 (pid 11, running c1) for 30 s, recording its run.
AcquireArgs take(const std::string& token) {
  AcquireArgs a;
  a.token = token;
  a.ttl = 30s;
  a.host = "h1";
  a.pid = 11;
  a.cmd = "c1";
  a.lease = 10s;
  a.record_run = true;
  return a;
}

template <typename Change>
AcquireArgs take(const std::string& token, Change change) {
  AcquireArgs a = take(token);
  change(a);
  return a;
}

// The end of T0's hold (every level), as exec ends a run.
ReleaseArgs end_of(const std::string& run_end, const std::string& exit = "0") {
  ReleaseArgs a;
  a.token = "T0";
  a.levels = ReleaseArgs::Levels::k_all;
  a.run_end = run_end;
  a.exit = exit;
  a.host = "h0";
  a.pid = 10;
  a.cmd = "c0";
  a.fence = 5;
  return a;
}

template <typename Args>
std::vector<std::string> args(const Args& a) {
  return lock::to_args(keys(), a);
}

// A ledger entry of run `run` (fields in the order written).
std::string entry(const std::string& run, const std::string& outcome, const std::string& who, const std::string& start,
                  const std::string& end = "", const std::string& exit = "") {
  return "schema=redlock/1 run=" + run + " outcome=" + outcome + " " + who + " start_ms=" + start + " end_ms=" + end +
         " exit=" + exit;
}
const std::string k_h0 = "host=h0 pid=10 cmd=c0 fence=5";
const std::string k_h1 = "host=h1 pid=11 cmd=c1 fence=#";
const std::string k_h1_7 = "host=h1 pid=11 cmd=c1 fence=7";
const std::string k_keep = " (px ~2592000000)";  // 30 days, renewed on each write
// The index of names with a ledger after a write of t:{a}'s: its ledger,
// scored by when it expires, and the schema marker. It never expires.
const std::string k_ledgers = "t:ledgers = zset t:{a}:runs=# redlock/1=inf";

const std::string k_t1_holds =
    "t:{a} = hash cmd=c1 count=1 fence=# host=h1 pid=11 schema=redlock/1 since_ms=# token=T1 ttl_ms=30000 (px ~30000)";
const std::string k_some_fence = "t:{a}:fence = string #";
const std::string k_released = "t:{a}:released released";

std::vector<Row> rows() {
  const auto acquire = ScriptName::k_acquire;
  const auto release = ScriptName::k_release;
  const auto history = ScriptName::k_history;
  const std::string running0 = "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "NOW-5000");
  // Three entries of other runs, written after running0's.
  const std::string newer = entry(k_run1, "ok", k_h1_7, "1", "2", "0") + " | " +
                            entry(k_run1, "failed", k_h1_7, "3", "4", "1") + " | " +
                            entry(k_run1, "ok", k_h1_7, "5", "6", "0");
  return {
      {"AFreshHoldStartsARun",
       acquire,
       {},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed, "t:{a}:runs = stream " + entry(k_run1, "running", k_h1, "#") + k_keep,
        k_ledgers}},
      {"ARunningRunWhoseLockIsGoneIsAbandonedAndNamed",
       acquire,
       {running0},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000, 'h0', '10', '#'}",
       {k_t1_holds, k_some_fence, k_indexed,
        "t:{a}:runs = stream " + entry(k_run0, "abandoned", k_h0, "#") + " | " + entry(k_run1, "running", k_h1, "#") +
            k_keep,
        k_ledgers}},
      {"AReEntryStartsNoRun",
       acquire,
       {k_held, k_fence5},
       args(take("T1", [](AcquireArgs& a) { a.reenter = "T0"; })),
       "{'reentered', 'T0', 5, 2, ~30000}",
       {"t:{a} = hash cmd=c0 count=2 fence=5 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=30000 "
        "(px ~30000)",
        k_fence5, k_indexed}},
      {"ABusyLockLeavesItsRunningRunAlone",
       acquire,
       {k_held, k_fence5, running0},
       args(take("T1")),
       "{'busy', ~30000, 'h0', '10', 0, 0, 0, 'c0', 1, '', #, ''}",
       {k_held_after, k_fence5, running0}},
      {"AnOkRunWithinTheWindowSkips",
       acquire,
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "NOW-9000", "NOW-1000", "0")},
       args(take("T1", [](AcquireArgs& a) { a.skip_ok_within = 1h; })),
       "{'skipped', 'h0', '10', '#', '#'}",
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0")}},
      {"AnOkRunBeforeTheWindowDoesNotSkip",
       acquire,
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "NOW-9000000", "NOW-8000000", "0")},
       args(take("T1", [](AcquireArgs& a) { a.skip_ok_within = 1h; })),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed,
        "t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0") + " | " +
            entry(k_run1, "running", k_h1, "#") + k_keep,
        k_ledgers}},
      {"AFailedRunAfterTheOkOneDoesNotHideIt",
       acquire,
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "NOW-9000", "NOW-8000", "0") + " | " +
        entry("0000000000000002", "failed", k_h0, "NOW-3000", "NOW-2000", "1")},
       args(take("T1", [](AcquireArgs& a) { a.skip_ok_within = 1h; })),
       "{'skipped', 'h0', '10', '#', '#'}",
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0") + " | " +
        entry("0000000000000002", "failed", k_h0, "#", "#", "1")}},
      {"OnlyFailedRunsDoNotSkip",
       acquire,
       {"t:{a}:runs = stream " + entry(k_run0, "failed", k_h0, "NOW-3000", "NOW-2000", "1")},
       args(take("T1",
                 [](AcquireArgs& a) {
                   a.skip_ok_within = 1h;
                   a.record_run = false;
                 })),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed, "t:{a}:runs = stream " + entry(k_run0, "failed", k_h0, "#", "#", "1")}},
      {"AForeignLedgerStopsTheRunAndIsLeftAlone",
       acquire,
       {"t:{a}:runs = list x"},
       args(take("T1")),
       "{'foreign', 'list where its run ledger (t:{a}:runs) belongs'}",
       {"t:{a}:runs = list x"}},
      // The ledger is read where the lock would be taken, not on every try
      // of a waiter: a busy answer leaves it unread.
      {"ABusyLockLeavesItsLedgerToTheGrant",
       acquire,
       {k_held, k_fence5, "t:{a}:runs = list x"},
       args(take("T1")),
       "{'busy', ~30000, 'h0', '10', 0, 0, 0, 'c0', 1, '', #, ''}",
       {k_held_after, k_fence5, "t:{a}:runs = list x"}},
      {"AWaiterWhoseTurnFindsAForeignLedgerLeavesTheLine",
       acquire,
       {k_fence5, "t:{a}:runs = list x", k_line_w1},
       args(take("T1", [](AcquireArgs& a) { a.waiter = "W1"; })),
       "{'foreign', 'list where its run ledger (t:{a}:runs) belongs'}",
       {k_fence5, "t:{a}:runs = list x"}},
      // Over several servers a waiter enters every line before its turn is
      // decided; one that finds the ledger foreign leaves that line too.
      {"ARedlockWaiterWhoseTurnFindsAForeignLedgerLeavesTheLine",
       acquire,
       {k_fence5, "t:{a}:runs = list x"},
       args(take("T1",
                 [](AcquireArgs& a) {
                   a.waiter = "W1";
                   a.ticket = "7";
                 })),
       "{'foreign', 'list where its run ledger (t:{a}:runs) belongs'}",
       {k_fence5, "t:{a}:runs = list x"}},
      {"AStreamWithoutTheMarkerIsForeign",
       acquire,
       {"t:{a}:runs = stream a=b"},
       args(take("T1")),
       "{'foreign', 'stream without redlock*s schema field where its run ledger (t:{a}:runs) belongs'}",
       {"t:{a}:runs = stream a=b"}},
      {"WithoutHistoryTheLedgerIsNotRead",
       acquire,
       {"t:{a}:runs = list x"},
       args(take("T1", [](AcquireArgs& a) { a.record_run = false; })),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed, "t:{a}:runs = list x"}},

      {"TheEndOfARunIsRecorded",
       release,
       {k_held, k_fence5, running0},
       args(end_of("ok")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0") + k_keep, k_ledgers},
       {k_released}},
      {"AFailedRunKeepsItsExitStatus",
       release,
       {k_held, k_fence5, running0},
       args(end_of("failed", "3")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "failed", k_h0, "#", "#", "3") + k_keep, k_ledgers},
       {k_released}},
      {"ARunWhoseLockIsGoneIsLost",
       release,
       {k_fence5, running0},
       args(end_of("ok")),
       "{'notheld'}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "lost", k_h0, "#", "#", "0") + k_keep, k_ledgers}},
      {"AnAbandonedRunThatEndsAfterAllIsLost",
       release,
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "abandoned", k_h0, "NOW-5000")},
       args(end_of("ok")),
       "{'notheld'}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "lost", k_h0, "#", "#", "0") + k_keep, k_ledgers}},
      {"AServerThatNeverHadTheRunRecordsNoLoss", release, {k_fence5}, args(end_of("ok")), "{'notheld'}", {k_fence5}},
      {"ARunWithoutItsEntryIsRecordedFromWhatExecKnows",
       release,
       {k_held, k_fence5},
       args(end_of("ok")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0") + k_keep, k_ledgers},
       {k_released}},
      {"AnUndoneAcquireTakesItsRunOut",
       release,
       {k_held, k_fence5, running0},
       args(end_of("drop", "")),
       "{'released', 1, 0}",
       {k_fence5},
       {k_released}},
      // A run's entry below the newest two (a semaphore's, whose others
      // ended since) is found on the next page, as deep as ever.
      {"TheEndOfARunBelowTheNewestTwoEntriesIsRecorded",
       release,
       {k_held, k_fence5, running0 + " | " + newer},
       args(end_of("ok")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + newer + " | " + entry(k_run0, "ok", k_h0, "#", "#", "0") + k_keep,
        k_ledgers},
       {k_released}},
      {"AnUndoneAcquireTakesItsRunOutBelowTheNewestTwo",
       release,
       {k_held, k_fence5, running0 + " | " + newer},
       args(end_of("drop", "")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + newer},
       {k_released}},
      {"AForeignLedgerIsLeftAloneAndTheLockReleased",
       release,
       {k_held, k_fence5, "t:{a}:runs = list x"},
       args(end_of("ok")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = list x"},
       {k_released}},

      {"NoLedgerIsNoRuns", history, {}, args(HistoryArgs{.count = 5}), "{'runs', '#'}", {}},
      {"TheNewestRunsComeFirst",
       history,
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "1", "2", "0") + " | " +
        entry(k_run1, "running", "host=h1 pid=11 cmd=c1 fence=7", "3")},
       args(HistoryArgs{.count = 5}),
       "{'runs', '#', {'id', '*', 'run', '" + k_run1 +
           "', 'outcome', 'running', 'host', 'h1', 'pid', '11', 'cmd', 'c1', 'fence', '7', 'start_ms', '3', "
           "'end_ms', '', 'exit', '', 'held', '0'}, {'id', '*', 'run', '" +
           k_run0 +
           "', 'outcome', 'ok', 'host', 'h0', 'pid', '10', 'cmd', 'c0', 'fence', '5', 'start_ms', '1', 'end_ms', "
           "'2', 'exit', '0'}}",
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "1", "2", "0") + " | " +
        entry(k_run1, "running", "host=h1 pid=11 cmd=c1 fence=7", "3")}},
      {"StatusReadsTheLastRunAndTheLastOkRun",
       ScriptName::k_runs,
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "1", "2", "0") + " | " +
        entry(k_run1, "failed", "host=h1 pid=11 cmd=c1 fence=7", "3", "4", "2")},
       lock::to_args(std::span<const lock::Keys>(&keys(), 1), lock::RunsArgs{}),
       "{'runs', {'#', {'id', '*', 'run', '" + k_run1 +
           "', 'outcome', 'failed', 'host', 'h1', 'pid', '11', 'cmd', 'c1', 'fence', '7', 'start_ms', '3', "
           "'end_ms', '4', 'exit', '2'}, {'id', '*', 'run', '" +
           k_run0 +
           "', 'outcome', 'ok', 'host', 'h0', 'pid', '10', 'cmd', 'c0', 'fence', '5', 'start_ms', '1', 'end_ms', "
           "'2', 'exit', '0'}}}",
       {"t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "1", "2", "0") + " | " +
        entry(k_run1, "failed", "host=h1 pid=11 cmd=c1 fence=7", "3", "4", "2")}},
      {"StatusFindsNoRunsInAForeignLedger",
       ScriptName::k_runs,
       {"t:{a}:runs = list x"},
       lock::to_args(std::span<const lock::Keys>(&keys(), 1), lock::RunsArgs{}),
       "{'runs', {'#', {}, {}}}",
       {"t:{a}:runs = list x"}},
      {"ARunningRunWhoseHoldIsGoneReadsNotHeld",
       history,
       {k_held, "t:{a}:runs = stream " + entry(k_run1, "running", k_h0, "3")},
       args(HistoryArgs{.count = 5}),
       "{'runs', '#', {'id', '*', 'run', '" + k_run1 +
           "', 'outcome', 'running', 'host', 'h0', 'pid', '10', 'cmd', 'c0', 'fence', '5', 'start_ms', '3', "
           "'end_ms', '', 'exit', '', 'held', '0'}}",
       {k_held_after, "t:{a}:runs = stream " + entry(k_run1, "running", k_h0, "3")}},
      {"ARunningRunOfTheHolderReadsHeld",
       history,
       {k_held, running0},
       args(HistoryArgs{.count = 5}),
       "{'runs', '#', {'id', '*', 'run', '" + k_run0 +
           "', 'outcome', 'running', 'host', 'h0', 'pid', '10', 'cmd', 'c0', 'fence', '5', 'start_ms', '#', "
           "'end_ms', '', 'exit', '', 'held', '1'}}",
       {k_held_after, "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "#")}},
      {"ARunningRunOfASemaphoreHolderReadsHeld",
       history,
       {k_semaphore, running0},
       args(HistoryArgs{.count = 5}),
       "{'runs', '#', {'id', '*', 'run', '" + k_run0 +
           "', 'outcome', 'running', 'host', 'h0', 'pid', '10', 'cmd', 'c0', 'fence', '5', 'start_ms', '#', "
           "'end_ms', '', 'exit', '', 'held', '1'}}",
       {k_semaphore_after, "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "#")}},
      {"AForeignLockLeavesARunningRunUnsaid",
       history,
       {"t:{a} = list x", running0},
       args(HistoryArgs{.count = 5}),
       "{'runs', '#', {'id', '*', 'run', '" + k_run0 +
           "', 'outcome', 'running', 'host', 'h0', 'pid', '10', 'cmd', 'c0', 'fence', '5', 'start_ms', '#', "
           "'end_ms', '', 'exit', ''}}",
       {"t:{a} = list x", "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "#")}},

      {"ASeveralNameAcquireChecksTheLedgerAndStartsNoRun",
       acquire,
       {},
       args(take("T1", [](AcquireArgs& a) { a.run_later = true; })),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, k_indexed}},
      {"ASeveralNameAcquireStopsAtAForeignLedger",
       acquire,
       {"t:{a}:runs = list x"},
       args(take("T1", [](AcquireArgs& a) { a.run_later = true; })),
       "{'foreign', 'list where its run ledger (t:{a}:runs) belongs'}",
       {"t:{a}:runs = list x"}},
      {"StartRunBeginsTheRunOfTheHold",
       ScriptName::k_start_run,
       {k_held},
       args(StartRunArgs{.token = "T0", .host = "h0", .pid = 10, .cmd = "c0"}),
       "{'started'}",
       {k_held_after, "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "#") + k_keep, k_ledgers}},
      {"StartRunNamesARunBeforeItAbandoned",
       ScriptName::k_start_run,
       {k_held, "t:{a}:runs = stream " + entry(k_run1, "running", k_h1_7, "NOW-5000")},
       args(StartRunArgs{.token = "T0", .host = "h0", .pid = 10, .cmd = "c0"}),
       "{'started', 'h1', '11', '#'}",
       {k_held_after,
        "t:{a}:runs = stream " + entry(k_run1, "abandoned", k_h1_7, "#") + " | " + entry(k_run0, "running", k_h0, "#") +
            k_keep,
        k_ledgers}},
      {"StartRunBeginsARunOnce",
       ScriptName::k_start_run,
       {k_held, running0},
       args(StartRunArgs{.token = "T0", .host = "h0", .pid = 10, .cmd = "c0"}),
       "{'started'}",
       {k_held_after, "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "#")}},
      {"StartRunOfASemaphoreHolder",
       ScriptName::k_start_run,
       {k_semaphore},
       args(StartRunArgs{.token = "T0", .host = "h0", .pid = 10, .cmd = "c0"}),
       "{'started'}",
       {k_semaphore_after, "t:{a}:runs = stream " + entry(k_run0, "running", k_h0, "#") + k_keep, k_ledgers}},
      {"StartRunOfATokenThatHoldsNothingWritesNothing",
       ScriptName::k_start_run,
       {k_held},
       args(StartRunArgs{.token = "T1", .host = "h1", .pid = 11, .cmd = "c1"}),
       "{'notheld'}",
       {k_held_after}},
      {"StartRunLeavesAForeignLedgerAlone",
       ScriptName::k_start_run,
       {k_held, "t:{a}:runs = list x"},
       args(StartRunArgs{.token = "T0", .host = "h0", .pid = 10, .cmd = "c0"}),
       "{'foreign', 'list where its run ledger (t:{a}:runs) belongs'}",
       {k_held_after, "t:{a}:runs = list x"}},

      {"AWritePrunesTheLedgersThatExpired",
       release,
       {k_held, k_fence5, running0, "t:ledgers = zset t:{b}:runs=NOW-10 t:{a}:runs=NOW+1000 redlock/1=inf"},
       args(end_of("ok")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0") + k_keep, k_ledgers},
       {k_released}},
      {"ALedgerDeletedWithItsLastRunLeavesTheIndex",
       release,
       {k_held, k_fence5, running0, "t:ledgers = zset t:{b}:runs=NOW+1000 t:{a}:runs=NOW+1000 redlock/1=inf"},
       args(end_of("drop", "")),
       "{'released', 1, 0}",
       {k_fence5, "t:ledgers = zset t:{b}:runs=# redlock/1=inf"},
       {k_released}},
      {"AnIndexOfLedgersThatIsNotRedlocksIsLeftAlone",
       release,
       {k_held, k_fence5, running0, "t:ledgers = zset x=1"},
       args(end_of("ok")),
       "{'released', 1, 0}",
       {k_fence5, "t:{a}:runs = stream " + entry(k_run0, "ok", k_h0, "#", "#", "0") + k_keep, "t:ledgers = zset x=1"},
       {k_released}},
      {"AForeignLedgerIsNamed",
       history,
       {"t:{a}:runs = zset x=1"},
       args(HistoryArgs{.count = 5}),
       "{'foreign', 'zset'}",
       {"t:{a}:runs = zset x=1"}},
  };
}

class LedgerScripts : public testing::TestWithParam<Row> {};

TEST_P(LedgerScripts, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, LedgerScripts, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
