// What `status` prints, byte for byte, from verdicts made by hand: the table,
// the JSON document and the Prometheus metrics. No server: the renderers are
// pure functions of the verdicts.

#include "cli/show/status_format.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/line/option_values.hpp"
#include "lines.hpp"
#include "lock/claim.hpp"
#include "util/text.hpp"

namespace redlock::cli {
namespace {

using redlock::test::lines_of;

using lock::HolderView;
using lock::ServerView;
using lock::WaiterView;
using status::Verdict;
using State = Verdict::State;

constexpr long long k_now = 1'700'000'000'000;

HolderView holder(std::string host, long long pid, std::string cmd, long long age_ms, long long ttl_ms,
                  long long fence) {
  HolderView h;
  h.token = host + std::to_string(pid);
  h.host = std::move(host);
  h.pid = pid;
  h.cmd = std::move(cmd);
  h.since_ms = k_now - age_ms;
  h.ttl_ms = ttl_ms;
  h.fence = fence;
  h.count = 1;
  return h;
}

ServerView server(std::string url, const std::vector<HolderView>& holders) {
  ServerView s;
  s.endpoint = std::move(url);
  s.type = holders.empty() ? "none" : "hash";
  s.now_ms = k_now;
  s.holders = holders;
  return s;
}

// A plain lock held by `h`, as one server sees it.
Verdict held(std::string name, const HolderView& h) {
  Verdict v;
  v.name = std::move(name);
  v.state = State::k_held;
  v.mode = lock::Claim::Mode::k_exclusive;
  v.now_ms = k_now;
  v.holders = {h};
  v.views = {server("redis://127.0.0.1:6379", {h})};
  return v;
}

Verdict free_lock(std::string name) {
  Verdict v;
  v.name = std::move(name);
  v.now_ms = k_now;
  v.views = {server("redis://127.0.0.1:6379", {})};
  return v;
}

Verdict foreign(std::string name, std::string type) {
  Verdict v;
  v.name = std::move(name);
  v.state = State::k_foreign;
  v.foreign_type = type;
  v.now_ms = k_now;
  ServerView s = server("redis://127.0.0.1:6379", {});
  s.type = type;
  s.foreign = true;
  v.views = {s};
  return v;
}

WaiterView waiter(std::string host, long long pid, std::string cmd, std::string mode, long long age_ms,
                  long long left_ms) {
  WaiterView w;
  w.id = host + std::to_string(pid);
  w.host = std::move(host);
  w.pid = pid;
  w.cmd = std::move(cmd);
  w.mode = lock::mode_named(mode);
  w.since_ms = k_now - age_ms;
  w.age_ms = age_ms;
  w.until_ms = left_ms < 0 ? -1 : k_now + left_ms;
  w.left_ms = left_ms;
  return w;
}

TEST(StatusTable, AHeldLockIsOneLineUnderTheHeaderInColumnsTwoBlanksApart) {
  const auto table =
      status_table({held("deploy", holder("web-3", 4411, "./deploy.sh", 12'300, 17'700, 42))}, false, false);
  EXPECT_EQ(table,
            "NAME    STATE  HOST   PID   AGE    TTL    FENCE  COUNT  WAITING  COMMAND\n"
            "deploy  held   web-3  4411  12.3s  17.7s  42     1      0        ./deploy.sh\n");
}

TEST(StatusTable, ColumnsAreAsWideAsTheirWidestCellAndNoLineEndsInABlank) {
  const auto table = status_table({held("deploy", holder("web-3", 4411, "", 1'000, 29'000, 42)),
                                   held("nightly-report", holder("db-primary-1", 7, "report", 300'000, 500, 0))},
                                  false, false);
  EXPECT_EQ(table,
            "NAME            STATE  HOST          PID   AGE  TTL    FENCE  COUNT  WAITING  COMMAND\n"
            "deploy          held   web-3         4411  1s   29s    42     1      0\n"
            "nightly-report  held   db-primary-1  7     5m   500ms  -      1      0        report\n");
}

TEST(StatusTable, AFreeLockIsALineOfDashes) {
  EXPECT_EQ(status_table({free_lock("deploy")}, false, true),
            "NAME    STATE  HOST  PID  AGE  TTL  FENCE  COUNT  WAITING  COMMAND\n"
            "deploy  free   -     -    -    -    -      -      0        -\n");
}

TEST(StatusTable, AForeignKeyShowsItsTypeAndNoWaiters) {
  EXPECT_EQ(status_table({foreign("deploy", "list")}, false, false),
            "NAME    STATE          HOST  PID  AGE  TTL  FENCE  COUNT  WAITING  COMMAND\n"
            "deploy  foreign(list)  -     -    -    -    -      -      -        -\n");
}

TEST(StatusTable, ASemaphoreShowsItsPlacesTakenAndALineForEachHolder) {
  Verdict v = held("pool", holder("a", 1, "x", 2'000, 10'000, 5));
  v.mode = lock::Claim::Mode::k_semaphore;
  v.limit = 3;
  v.holders.push_back(holder("b", 2, "y", 1'000, 20'000, 6));
  EXPECT_EQ(status_table({v}, false, false),
            "NAME  STATE     HOST  PID  AGE  TTL  FENCE  COUNT  WAITING  COMMAND\n"
            "pool  held 2/3  a     1    2s   10s  5      1      0        x\n"
            "pool  held 2/3  b     2    1s   20s  6      1      0        y\n");
}

TEST(StatusTable, ReadersShareTheLockAndAKeptLockSaysMinHold) {
  Verdict shared = held("db", holder("a", 1, "r", 0, 1'000, 5));
  shared.mode = lock::Claim::Mode::k_shared;
  Verdict kept = held("job", holder("b", 2, "w", 60'000, -1, 6));
  kept.holders.front().kept = true;
  EXPECT_EQ(status_table({shared, kept}, false, false),
            "NAME  STATE           HOST  PID  AGE  TTL   FENCE  COUNT  WAITING  COMMAND\n"
            "db    shared 1        a     1    0ms  1s    5      1      0        r\n"
            "job   held(min-hold)  b     2    1m   none  6      1      0        w\n");
}

TEST(StatusTable, WaitersAndServersGetIndentedLinesThatDoNotWidenTheColumns) {
  Verdict v = held("deploy", holder("web-3", 4411, "./deploy.sh", 12'000, 18'000, 42));
  v.waiters = {waiter("web-4", 900, "./deploy.sh --fast", "exclusive", 3'000, 27'000),
               waiter("web-5", 901, "./report", "shared", 1'500, -1)};
  ServerView down = server("redis://10.0.0.2:6379", {});
  down.error = "connection refused";
  v.views.push_back(down);
  v.views.push_back(server("redis://10.0.0.3:6379", {}));
  EXPECT_EQ(status_table({v}, true, true),
            "NAME    STATE  HOST   PID   AGE  TTL  FENCE  COUNT  WAITING  COMMAND\n"
            "deploy  held   web-3  4411  12s  18s  42     1      2        ./deploy.sh\n"
            "  waiting 1  web-4 pid 900 for 3s, gives up in 27s: ./deploy.sh --fast\n"
            "  waiting 2  web-5 pid 901 (shared) for 1.5s, no time limit: ./report\n"
            "  redis://127.0.0.1:6379  held ttl 18s by web-3 pid 4411\n"
            "  redis://10.0.0.2:6379  unreachable: connection refused\n"
            "  redis://10.0.0.3:6379  free\n");
}

TEST(StatusTable, WithoutNamesAskedWaitersAreOnlyCounted) {
  Verdict v = held("deploy", holder("h", 1, "c", 0, 1'000, 1));
  v.waiters = {waiter("w", 2, "c", "exclusive", 0, -1)};
  EXPECT_EQ(status_table({v}, false, false),
            "NAME    STATE  HOST  PID  AGE  TTL  FENCE  COUNT  WAITING  COMMAND\n"
            "deploy  held   h     1    0ms  1s   1      1      1        c\n");
}

TEST(StatusTable, ControlCharactersInNamesHostsAndCommandsAreEscaped) {
  // A name's backslash is doubled (so "\x1b" spelled out differs from ESC);
  // a command's is shown as typed.
  EXPECT_EQ(status_table({held("a\x1b[2Jb\\", holder("h\n", 1, "rm\t-rf \\", 0, 1'000, 1))}, false, false),
            "NAME         STATE  HOST  PID  AGE  TTL  FENCE  COUNT  WAITING  COMMAND\n"
            "a\\x1b[2Jb\\\\  held   h\\n   1    0ms  1s   1      1      0        rm\\t-rf \\\n");
}

TEST(StatusJson, AHeldLockHasItsOldestHolderAtTheTopAndEveryHolderAndServerBelow) {
  Verdict v = held("deploy", holder("web-3", 4411, "./deploy.sh", 12'000, 18'000, 42));
  v.waiters = {waiter("web-4", 900, "./deploy.sh", "exclusive", 3'000, 27'000)};
  EXPECT_EQ(status_json({v}), R"([
  {
    "age_ms": 12000,
    "cmd": "./deploy.sh",
    "count": 1,
    "fence": 42,
    "held": true,
    "holders": [
      {
        "age_ms": 12000,
        "cmd": "./deploy.sh",
        "count": 1,
        "fence": 42,
        "host": "web-3",
        "kept": false,
        "note": null,
        "pid": 4411,
        "revoke": null,
        "since_ms": 1699999988000,
        "ttl_ms": 18000
      }
    ],
    "host": "web-3",
    "kept": false,
    "mode": "exclusive",
    "name": "deploy",
    "note": null,
    "pid": 4411,
    "revoke": null,
    "servers": [
      {
        "fence": 42,
        "holders": 1,
        "host": "web-3",
        "pid": 4411,
        "state": "held",
        "ttl_ms": 18000,
        "url": "redis://127.0.0.1:6379"
      }
    ],
    "since_ms": 1699999988000,
    "state": "held",
    "suspended": null,
    "ttl_ms": 18000,
    "waiters": [
      {
        "age_ms": 3000,
        "cmd": "./deploy.sh",
        "host": "web-4",
        "left_ms": 27000,
        "mode": "exclusive",
        "pid": 900,
        "position": 1,
        "since_ms": 1699999997000,
        "until_ms": 1700000027000
      }
    ]
  }
]
)");
}

TEST(StatusJson, AFreeLockAndAForeignKeyAndAnUnreachableServer) {
  Verdict f = free_lock("a");
  ServerView down = server("redis://10.0.0.2:6379", {});
  down.error = "timed out";
  f.views.push_back(down);
  EXPECT_EQ(status_json({f, foreign("b", "string")}), R"([
  {
    "held": false,
    "name": "a",
    "servers": [
      {
        "state": "free",
        "url": "redis://127.0.0.1:6379"
      },
      {
        "error": "timed out",
        "state": "unreachable",
        "url": "redis://10.0.0.2:6379"
      }
    ],
    "state": "free",
    "suspended": null,
    "waiters": []
  },
  {
    "held": false,
    "name": "b",
    "servers": [
      {
        "state": "foreign",
        "type": "string",
        "url": "redis://127.0.0.1:6379"
      }
    ],
    "state": "foreign",
    "type": "string"
  }
]
)");
}

TEST(StatusJson, ASemaphoreHasItsLimitAKeptHoldItsFinishAndAFenceThatIsNoneIsNull) {
  Verdict v = held("pool", holder("a", 1, "x", 0, 1'000, 0));
  v.mode = lock::Claim::Mode::k_semaphore;
  v.limit = 2;
  v.holders.front().kept = true;
  v.holders.front().finished_ms = k_now - 5;
  const std::string json = status_json({v});
  EXPECT_NE(json.find("    \"limit\": 2,\n"), std::string::npos) << json;
  EXPECT_NE(json.find("    \"fence\": null,\n"), std::string::npos) << json;
  EXPECT_NE(json.find("    \"finished_ms\": 1699999999995,\n"), std::string::npos) << json;
  EXPECT_NE(json.find("    \"kept\": true,\n"), std::string::npos) << json;
}

TEST(StatusJson, BytesThatAreNotUtf8AreReplaced) {
  const std::string json = status_json({free_lock("a\xff")});
  EXPECT_NE(json.find("    \"name\": \"a\xef\xbf\xbd\",\n"), std::string::npos) << json;
}

TEST(StatusJson, NoLocksIsAnEmptyArray) {
  EXPECT_EQ(status_json({}), "[]\n");
}

TEST(StatusPrometheus, EachFamilyHasItsHelpAndTypeAndASampleForEveryLockThatIsNotForeign) {
  Verdict pool = held("pool", holder("a", 1, "x", 1'500, 9'000, 5));
  pool.mode = lock::Claim::Mode::k_semaphore;
  pool.limit = 3;
  pool.holders.push_back(holder("b", 2, "y", 500, 2'250, 6));
  pool.waiters = {waiter("w", 3, "z", "semaphore", 0, -1)};
  EXPECT_EQ(status_prometheus({pool, free_lock("idle"), foreign("odd", "list")}),
            "# HELP redlock_lock_held 1 while the lock is held, 0 while it is free.\n"
            "# TYPE redlock_lock_held gauge\n"
            "redlock_lock_held{name=\"pool\"} 1\n"
            "redlock_lock_held{name=\"idle\"} 0\n"
            "# HELP redlock_lock_holders How many hold the lock (a semaphore's places taken, readers sharing it).\n"
            "# TYPE redlock_lock_holders gauge\n"
            "redlock_lock_holders{name=\"pool\"} 2\n"
            "redlock_lock_holders{name=\"idle\"} 0\n"
            "# HELP redlock_lock_waiters How many wait in the lock's line.\n"
            "# TYPE redlock_lock_waiters gauge\n"
            "redlock_lock_waiters{name=\"pool\"} 1\n"
            "redlock_lock_waiters{name=\"idle\"} 0\n"
            "# HELP redlock_lock_ttl_seconds Time left before the lock frees itself unless renewed (its soonest "
            "holder's).\n"
            "# TYPE redlock_lock_ttl_seconds gauge\n"
            "redlock_lock_ttl_seconds{name=\"pool\"} 2.25\n"
            "# HELP redlock_lock_age_seconds How long the lock has been held (its oldest holder's).\n"
            "# TYPE redlock_lock_age_seconds gauge\n"
            "redlock_lock_age_seconds{name=\"pool\"} 1.5\n"
            "# HELP redlock_lock_suspended 1 while the name is suspended (redlock suspend); absent otherwise.\n"
            "# TYPE redlock_lock_suspended gauge\n"
            "# HELP redlock_lock_revoke_pending How many of the lock's holders were asked to give it back (redlock "
            "break --grace); absent when none.\n"
            "# TYPE redlock_lock_revoke_pending gauge\n"
            "# HELP redlock_last_success_timestamp_seconds When the last ok run of the name ended (Unix time, "
            "server clock).\n"
            "# TYPE redlock_last_success_timestamp_seconds gauge\n"
            "# HELP redlock_last_run_duration_seconds How long the last run of the name took, once it ended.\n"
            "# TYPE redlock_last_run_duration_seconds gauge\n"
            "# HELP redlock_last_run_exit_status The exit status of the last run of the name, once it ended.\n"
            "# TYPE redlock_last_run_exit_status gauge\n");
}

// A run of the ledger, ended at `end` (server ms) after `took` ms.
lock::Run ended_run(const std::string& id, lock::Outcome outcome, int exit, long long end, long long took) {
  lock::Run r;
  r.id = id;
  r.outcome = outcome;
  r.exit = exit;
  r.host = "web-" + id;
  r.pid = 7;
  r.cmd = "backup";
  r.start_ms = end - took;
  r.end_ms = end;
  return r;
}

TEST(StatusPrometheus, TheLastRunsGaugesComeFromTheLedger) {
  Verdict job = free_lock("job");
  job.runs.last = ended_run("2", lock::Outcome::k_failed, 3, 1'700'000'100'000, 41'000);
  job.runs.last_ok = ended_run("1", lock::Outcome::k_ok, 0, 1'700'000'000'500, 12'000);
  const std::string out = status_prometheus({job, free_lock("never")});
  EXPECT_NE(out.find("redlock_last_success_timestamp_seconds{name=\"job\"} 1700000000.5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("redlock_last_run_duration_seconds{name=\"job\"} 41\n"), std::string::npos) << out;
  EXPECT_NE(out.find("redlock_last_run_exit_status{name=\"job\"} 3\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("name=\"never\"} 1700"), std::string::npos) << out;
}

TEST(StatusTable, ANamedLockShowsItsLastRunFreeOrHeld) {
  Verdict job = free_lock("job");
  job.runs.now_ms = 1'700'000'100'000 + 3'600'000;
  job.runs.last = ended_run("2", lock::Outcome::k_failed, 2, 1'700'000'100'000, 41'000);
  job.runs.last_ok = ended_run("1", lock::Outcome::k_ok, 0, 1'700'000'000'000, 12'000);
  const std::string table = status_table({job}, false, true);
  EXPECT_NE(table.find("\n  last run: failed (exit 2) on web-2, ended 1h ago, took 41s; last ok: ok on web-1, ended "
                       "1h1m ago, took 12s\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(status_table({job}, false, false).find("last run"), std::string::npos) << "not in the listing";
}

TEST(StatusJson, ALockCarriesItsLastRunsOrNull) {
  Verdict job = free_lock("job");
  job.runs.last = ended_run("1", lock::Outcome::k_ok, 0, 1'700'000'000'000, 12'000);
  job.runs.read = true;
  Verdict never = free_lock("never");
  never.runs.read = true;
  const std::string json = status_json({job, never});
  EXPECT_NE(json.find("\"last_run\": {"), std::string::npos) << json;
  EXPECT_NE(json.find("\"duration_ms\": 12000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"last_ok\": null"), std::string::npos) << json;
}

TEST(StatusPrometheus, ALabelReadsBackAsTheNameWithOnlyTheFormatsEscapes) {
  // A name a\b was labelled a\\b: the terminal's escaping under the format's.
  const std::string out = status_prometheus({free_lock("a\"b\\c"), free_lock("rtl\u202eeh")});
  EXPECT_NE(out.find("redlock_lock_held{name=\"a\\\"b\\\\c\"} 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("redlock_lock_held{name=\"rtl\u202eeh\"} 0\n"), std::string::npos) << out;
}

TEST(StatusPrometheus, ANameRedlockWouldRefuseIsSpeltAsTheTableShowsItAndMarked) {
  // Only a key another program wrote has one: bytes that are not UTF-8, or
  // control characters. It never collides with a name spelling it out.
  const std::string out = status_prometheus({free_lock("a\xff\nb"), free_lock("a\\xff\\nb")});
  EXPECT_NE(out.find("redlock_lock_held{name=\"a\\\\xff\\\\nb\",name_escaped=\"true\"} 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("redlock_lock_held{name=\"a\\\\xff\\\\nb\"} 0\n"), std::string::npos) << out;
}

TEST(StatusPrometheus, NoLocksIsTheHelpAndTypeLinesAlone) {
  const std::string out = status_prometheus({});
  EXPECT_EQ(out.find('{'), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 20);
}

TEST(StatusPrometheus, EveryServerHasRedlockUpAndTheFindingsWhereKnown) {
  const std::string out = servers_prometheus(
      {{"redis://a:6379", true, true, false}, {"redis://b\"x:6379", false, std::nullopt, std::nullopt}});
  EXPECT_NE(out.find("# TYPE redlock_up gauge\nredlock_up{server=\"redis://a:6379\"} 1\n"
                     "redlock_up{server=\"redis://b\\\"x:6379\"} 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("redlock_server_evicts_locks{server=\"redis://a:6379\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("redlock_server_restart_forgets_locks{server=\"redis://a:6379\"} 0\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("evicts_locks{server=\"redis://b"), std::string::npos) << "not known: no sample" << out;
  EXPECT_NE(out.find("# TYPE redlock_server_restart_forgets_locks gauge\n"), std::string::npos) << out;
}

TEST(StatusTable, ANarrowTableLeavesOutFenceAndCountAndCutsTheCommandToTheWidth) {
  const std::vector<Verdict> locks = {
      held("deploy", holder("web-3", 4411, "./deploy.sh --env production --really", 12'300, 17'700, 42))};
  EXPECT_EQ(status_table(locks, false, false, TableLayout{false, 0, {}}),
            "NAME    STATE  HOST   PID   AGE    TTL    WAITING  COMMAND\n"
            "deploy  held   web-3  4411  12.3s  17.7s  0        ./deploy.sh --env production --really\n");
  const std::string clipped = status_table(locks, false, false, TableLayout{false, 70, {}});
  EXPECT_EQ(clipped,
            "NAME    STATE  HOST   PID   AGE    TTL    WAITING  COMMAND\n"
            "deploy  held   web-3  4411  12.3s  17.7s  0        ./deploy.sh --env \xe2\x80\xa6\n");
  EXPECT_EQ(status_table(locks, false, false, TableLayout{true, 0, {}}), status_table(locks, false, false))
      << "wide and unclipped is what a pipe gets";
}

TEST(StatusTable, ColumnsNamedByDashOAreShownInTheirOrderWideOrNot) {
  Verdict v = held("deploy", holder("web-3", 4411, "./deploy.sh", 12'300, 17'700, 42));
  v.waiters = {waiter("web-1", 812, "./deploy.sh", "exclusive", 3'000, -1)};
  using C = StatusColumn;
  const std::vector<C> picked = {C::k_ttl, C::k_name, C::k_fence};
  const std::string expected =
      "TTL    NAME    FENCE\n"
      "17.7s  deploy  42\n"
      "  waiting 1  web-1 pid 812 for 3s, no time limit: ./deploy.sh\n";
  EXPECT_EQ(status_table({v}, false, true, TableLayout{false, 0, picked}), expected) << "FENCE, asked for";
  EXPECT_EQ(status_table({v}, false, true, TableLayout{true, 0, picked}), expected);
  // Two columns are still a table, not the two cells of a detail line.
  EXPECT_EQ(status_table({v, free_lock("zz")}, false, false, TableLayout{true, 0, {C::k_name, C::k_state}}),
            "NAME    STATE\n"
            "deploy  held\n"
            "zz      free\n");
  EXPECT_EQ(status_table({v}, false, false, TableLayout{true, 0, {C::k_command}}), "COMMAND\n./deploy.sh\n");
}

TEST(StatusColumns, ListsAreReadInOrderInAnyCaseAndAddUp) {
  using C = StatusColumn;
  EXPECT_EQ(parse_columns({"name,Host,pid"}), (std::vector<C>{C::k_name, C::k_host, C::k_pid}));
  EXPECT_EQ(parse_columns({"COMMAND", "ttl,waiting"}), (std::vector<C>{C::k_command, C::k_ttl, C::k_waiting}));
  EXPECT_EQ(parse_columns({"fence,count,age,state"}), (std::vector<C>{C::k_fence, C::k_count, C::k_age, C::k_state}));
}

TEST(StatusColumns, AnUnknownOrEmptyColumnIsAUsageErrorNamingTheKnownOnes) {
  for (const std::string bad : {"name,owner", "", "name,,pid", "name,", "nam"}) {
    SCOPED_TRACE(bad);
    try {
      (void)parse_columns({bad});
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--columns"), std::string::npos) << what;
      EXPECT_NE(what.find("NAME, STATE, HOST, PID, AGE, TTL, FENCE, COUNT, WAITING, COMMAND"), std::string::npos)
          << what;
    }
  }
}

// The words of a table's line (its cells, split at runs of two blanks).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < line.size()) {
    size_t end = line.find("  ", at);
    end = end == std::string::npos ? line.size() : end;
    out.push_back(line.substr(at, end - at));
    at = line.find_first_not_of(' ', end);
    at = at == std::string::npos ? line.size() : at;
  }
  return out;
}

// A lock whose name is 49 characters long, held by a long command, with a
// waiter whose command is longer still: what used to push TTL and WAITING
// off an 80-column terminal.
Verdict long_named() {
  Verdict v =
      held("nightly-report-for-the-accounting-department-eu-1",
           holder("web-3", 4411, "/opt/reports/bin/nightly-report --region eu-west-1 --all", 78'100, 54'000, 42));
  v.waiting = 2;
  v.waiters = {waiter("web-4", 900, "/opt/reports/bin/nightly-report --region eu-west-1 --all --again", "exclusive",
                      3'000, 27'000)};
  return v;
}

TEST(StatusTable, OnATerminalNameIsCutFirstThenCommandAndNoOtherValueEver) {
  const std::vector<Verdict> locks = {long_named(), held("deploy", holder("web-1", 7, "./deploy.sh", 500, 29'000, 3))};
  ASSERT_EQ(locks[0].name.size(), 49U);
  for (const size_t width : {80U, 60U}) {
    SCOPED_TRACE(width);
    const std::string table = status_table(locks, false, true, TableLayout{false, width, {}});
    const std::vector<std::string> lines = lines_of(table);
    for (const auto& line : lines) {
      EXPECT_LE(text_columns(line), width) << line;
    }
    // The header names the columns shown; every value of them is whole.
    const std::vector<std::string> header = cells_of(lines.at(0));
    const std::vector<std::string> first = cells_of(lines.at(1));
    const std::vector<std::string> second = cells_of(lines.at(3));  // after the waiter's line
    ASSERT_EQ(first.size(), header.size()) << table;
    ASSERT_EQ(second.size(), header.size()) << table;
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c] == "NAME") {
        EXPECT_EQ(first[c], "nightly-rep\xe2\x80\xa6") << "cut first, to 12, with an ellipsis";
        EXPECT_EQ(second[c], "deploy");
      } else if (header[c] == "COMMAND") {
        EXPECT_EQ(first[c].rfind("/opt/reports/bin/", 0), 0U) << first[c];
        EXPECT_NE(first[c].find("\xe2\x80\xa6"), std::string::npos) << "cut second, with an ellipsis";
        EXPECT_EQ(second[c], "./deploy.sh");
      } else {
        EXPECT_EQ(first[c].find("\xe2\x80\xa6"), std::string::npos) << header[c] << " is never cut";
      }
    }
    // WAITING and TTL stay, whole; COMMAND goes before them.
    const auto column = [&header](const std::string& name) {
      return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    ASSERT_LT(column("TTL"), header.size()) << table;
    ASSERT_LT(column("WAITING"), header.size()) << table;
    EXPECT_EQ(first[column("TTL")], "54s");
    EXPECT_EQ(first[column("AGE")], "1m18s");
    EXPECT_EQ(first[column("WAITING")], "2");
    EXPECT_EQ(column("COMMAND") < header.size(), width == 80) << table;
    // The waiter's line is cut to the width, and says so.
    EXPECT_EQ(lines.at(2).rfind("  waiting 1  web-4 pid 900 for 3s, gives up in 27s: ", 0), 0U) << lines.at(2);
    EXPECT_EQ(text_columns(lines.at(2)), width);
    EXPECT_EQ(lines.at(2).substr(lines.at(2).size() - 3), "\xe2\x80\xa6");
  }
}

TEST(StatusTable, APipeGetsEveryColumnAndEveryValueWhole) {
  const std::string table = status_table({long_named()}, false, true, TableLayout{true, 0, {}});
  EXPECT_NE(table.find("nightly-report-for-the-accounting-department-eu-1  held"), std::string::npos) << table;
  EXPECT_NE(table.find("/opt/reports/bin/nightly-report --region eu-west-1 --all\n"), std::string::npos) << table;
  EXPECT_NE(table.find("--region eu-west-1 --all --again\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("\xe2\x80\xa6"), std::string::npos) << table;
}

TEST(StatusTable, AWideNameOfManyBytesIsCutByItsCharacters) {
  // 30 characters, 60 bytes: the widths count characters.
  std::string name;
  for (int i = 0; i < 30; ++i) {
    name += "\xc3\xa9";
  }
  const std::string table = status_table({held(name, holder("web-3", 4411, "./x", 1'000, 2'000, 1))}, false, false,
                                         TableLayout{false, 50, {}});
  for (const auto& line : lines_of(table)) {
    EXPECT_LE(text_columns(line), 50U) << line;
  }
  EXPECT_NE(table.find("\xc3\xa9\xe2\x80\xa6  held"), std::string::npos) << table;
}

TEST(StatusTable, ClippingCountsCharactersAndNeverCutsOneInHalf) {
  EXPECT_EQ(clip_lines("h\xc3\xa9llo\nab\n", 2), "h\xc3\xa9\nab\n");
  EXPECT_EQ(clip_lines("abc", 0), "abc");
  EXPECT_EQ(clip_lines("abc\n\nxyz", 1), "a\n\nx");
}

TEST(StatusSort, ByAgeTheLongestHeldFirstByTtlTheSoonestToExpireFirstFreeLocksLast) {
  std::vector<Verdict> locks = {free_lock("a-free"), held("b", holder("h", 1, "", 5'000, 20'000, 1)),
                                held("c", holder("h", 2, "", 60'000, 9'000, 2)),
                                held("d", holder("h", 3, "", 1'000, -1, 3))};
  const auto names = [&] {
    std::string out;
    for (const auto& v : locks) {
      out += v.name + " ";
    }
    return out;
  };
  sort_verdicts(locks, StatusSort::k_age);
  EXPECT_EQ(names(), "c b d a-free ");
  sort_verdicts(locks, StatusSort::k_ttl);
  EXPECT_EQ(names(), "c b d a-free ") << "a hold with no expiry comes after those with one";
  sort_verdicts(locks, StatusSort::k_name);
  EXPECT_EQ(names(), "a-free b c d ");
}

}  // namespace
}  // namespace redlock::cli
