// The run ledger through the real binary: what exec records for each
// outcome, `history`, `history --max-age` (and `overdue`, its older
// spelling), `exec --skip-if-ok-within`, the abandoned run named, the cap
// and the TTL, foreign ledgers, and several servers.

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

Env env_of(const RedisServer& redis) {
  return Env{{"REDLOCK_URL", redis.url()}};
}

std::string runs_key(const std::string& name) {
  return lock_key(name) + ":runs";
}

// history NAME --json, parsed (an empty array when there is none).
json history(const Env& env, const std::string& name) {
  Result r = run({"history", "--json", "--limit", "1000", name}, env);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  return json::parse(r.out);
}

}  // namespace

TEST(History, EachOutcomeIsRecordedNewestFirst) {
  RedisServer redis;
  const Env env = env_of(redis);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  EXPECT_EQ(run({"exec", "job", "--", "sh", "-c", "exit 3"}, env).status, 3);
  EXPECT_EQ(run({"exec", "job", "--", "sh", "-c", "kill -9 $$"}, env).status, 137);
  EXPECT_EQ(run({"exec", "job", "--", "/nonexistent/cmd"}, env).status, 127);
  const json h = history(env, "job");
  ASSERT_EQ(h.size(), 4u) << h.dump();
  EXPECT_EQ(h[0]["outcome"], "failed");
  EXPECT_EQ(h[0]["exit"], 127);
  EXPECT_EQ(h[1]["outcome"], "signalled");
  EXPECT_EQ(h[1]["exit"], 137);
  EXPECT_EQ(h[2]["outcome"], "failed");
  EXPECT_EQ(h[2]["exit"], 3);
  EXPECT_EQ(h[3]["outcome"], "ok");
  EXPECT_EQ(h[3]["exit"], 0);
  EXPECT_EQ(h[3]["cmd"], "true");
  EXPECT_GT(h[3]["fence"].get<long long>(), 0);
  EXPECT_GE(h[3]["duration_ms"].get<long long>(), 0);
  EXPECT_EQ(h[3]["end_ms"].get<long long>() - h[3]["start_ms"].get<long long>(), h[3]["duration_ms"]);
  Result table = run({"history", "job"}, env);
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("failed (exit 3)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("signalled (9)"), std::string::npos) << table.out;
  Result two = run({"history", "--limit", "2", "job"}, env);
  EXPECT_EQ(std::count(two.out.begin(), two.out.end(), '\n'), 3) << two.out;
}

TEST(History, ALostLockIsRecordedAsLost) {
  RedisServer redis;
  const Env env = env_of(redis);
  Child exec({"exec", "--ttl", "1s", "job", "--", "sleep", "3"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("job")}).integer == 1; }));
  EXPECT_EQ(run({"break", "job"}, env).status, 0);
  EXPECT_EQ(exec.wait().status, 74);
  const json h = history(env, "job");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]["outcome"], "lost");
}

TEST(History, ARunEndedByMaxRuntimeIsTimedOut) {
  RedisServer redis;
  const Env env = env_of(redis);
  EXPECT_EQ(run({"exec", "--max-runtime", "200ms", "job", "--", "sleep", "5"}, env).status, 124);
  const json h = history(env, "job");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]["outcome"], "timed-out");
  EXPECT_EQ(h[0]["exit"], 124);
}

TEST(History, NoneIsExitOne) {
  RedisServer redis;
  Result r = run({"history", "never"}, env_of(redis));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no runs"), std::string::npos) << r.err;
  Result j = run({"history", "--json", "never"}, env_of(redis));
  EXPECT_EQ(j.status, 1);
  EXPECT_EQ(json::parse(j.out), json::array());
}

TEST(History, ARunWhoseRedlockDiedIsNamedByTheNextAsAbandoned) {
  RedisServer redis;
  const Env env = env_of(redis);
  Child exec({"exec", "--ttl", "500ms", "job", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("job")}).integer == 1; }));
  exec.signal(SIGKILL);
  (void)exec.wait();
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("job")}).integer == 0; }));
  Result next = run({"-q", "exec", "job", "--", "true"}, env);
  EXPECT_EQ(next.status, 0) << next.err;
  EXPECT_NE(next.err.find("the previous run of job on "), std::string::npos) << next.err;
  EXPECT_NE(next.err.find(std::to_string(exec.pid())), std::string::npos) << next.err;
  EXPECT_NE(next.err.find("never finished"), std::string::npos) << next.err;
  const json h = history(env, "job");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0]["outcome"], "ok");
  EXPECT_EQ(h[1]["outcome"], "abandoned");
  EXPECT_EQ(h[1]["end_ms"], nullptr);
  // Said once: the run after that one has nothing to say.
  Result third = run({"exec", "job", "--", "true"}, env);
  EXPECT_EQ(third.err, "");
}

// A run whose redlock died reads as running no longer once its lock is
// seen held by someone else (a plain acquire, which writes no ledger).
TEST(History, ADeadExecsRunIsNotRunningWhileAnotherHoldsTheName) {
  RedisServer redis;
  const Env env = env_of(redis);
  Child exec({"exec", "--ttl", "500ms", "job", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("job")}).integer == 1; }));
  exec.signal(SIGKILL);  // its guard kills the command
  (void)exec.wait();
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("job")}).integer == 0; }));
  ASSERT_EQ(run({"acquire", "--ttl", "1m", "job"}, env).status, 0);
  Result table = run({"history", "job"}, env);
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("  abandoned?  "), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("running"), std::string::npos) << table.out;
  const json h = history(env, "job");
  ASSERT_EQ(h.size(), 1u) << h.dump();
  EXPECT_EQ(h[0]["outcome"], "running") << "the ledger's word: nobody recorded its end";
  EXPECT_EQ(h[0]["held"], false) << h.dump();
  // A run that still holds its lock is running, and held.
  Child live({"exec", "live", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("live")}).integer == 1; }));
  Result running = run({"history", "live"}, env);
  EXPECT_NE(running.out.find("  running  "), std::string::npos) << running.out;
  EXPECT_EQ(history(env, "live")[0]["held"], true);
  live.signal(SIGTERM);
  (void)live.wait();
  EXPECT_EQ(history(env, "live")[0]["held"], nullptr) << "an ended run";
}

TEST(History, SkipIfOkWithinRunsOncePerPeriodAndCatchesUpAfterAFailure) {
  RedisServer redis;
  TempDir dir;
  const Env env = env_of(redis);
  const std::string ran = dir.path() + "/ran";
  const std::vector<std::string> job = {
      "exec", "--skip-if-ok-within", "1h", "daily", "--", "sh", "-c", "echo x >> " + ran + "; exit ${FAIL:-0}"};
  Env failing = env;
  failing["FAIL"] = "2";
  EXPECT_EQ(run(job, failing).status, 2);
  EXPECT_EQ(run(job, env).status, 0) << "a failed run does not count";
  Result skipped = run(job, env);
  EXPECT_EQ(skipped.status, 75);
  EXPECT_NE(skipped.err.find("already ran ok on"), std::string::npos) << skipped.err;
  EXPECT_EQ(std::count(skipped.err.begin(), skipped.err.end(), '\n'), 1) << skipped.err;
  std::vector<std::string> quiet = job;
  quiet.insert(quiet.begin(), "-q");
  Result q = run(quiet, env);
  EXPECT_EQ(q.status, 75);
  EXPECT_EQ(q.err, "");
  std::vector<std::string> code = job;
  code.insert(code.begin() + 1, {"--conflict-exit-code", "0"});
  EXPECT_EQ(run(code, env).status, 0);
  Result lines = run({"exec", "--no-history", "count", "--", "wc", "-l", ran}, env);
  EXPECT_EQ(lines.out.substr(0, 1), "2") << "the failed run and the one that caught up";
}

TEST(History, NoHistoryLeavesNoLedger) {
  RedisServer redis;
  EXPECT_EQ(run({"exec", "--no-history", "unique-123", "--", "true"}, env_of(redis)).status, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", runs_key("unique-123")}).integer, 0);
}

TEST(History, TheLedgerIsCappedAndKeptThirtyDaysFromItsLastWrite) {
  RedisServer redis;
  const Env env = env_of(redis);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  const long long day_ms = 24LL * 3600 * 1000;
  EXPECT_GT(redis.cmd({"PTTL", runs_key("job")}).integer, 30 * day_ms - 60'000);
  (void)redis.cmd({"PEXPIRE", runs_key("job"), "100000"});
  EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  EXPECT_GT(redis.cmd({"PTTL", runs_key("job")}).integer, 30 * day_ms - 60'000) << "renewed by each run";
  for (int i = 0; i < 105; ++i) {
    EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  }
  EXPECT_EQ(redis.cmd({"XLEN", runs_key("job")}).integer, 100);
  EXPECT_EQ(history(env, "job").size(), 100u);
}

TEST(History, AForeignKeyAtTheLedgerIs76AndLeftAlone) {
  RedisServer redis;
  const Env env = env_of(redis);
  (void)redis.cmd({"RPUSH", runs_key("job"), "mine"});
  Result e = run({"exec", "job", "--", "true"}, env);
  EXPECT_EQ(e.status, 76) << e.err;
  EXPECT_NE(e.err.find("run ledger"), std::string::npos) << e.err;
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job")}).integer, 0) << "nothing taken";
  EXPECT_EQ(run({"history", "job"}, env).status, 76);
  EXPECT_EQ(run({"overdue", "--max-age", "1h", "job"}, env).status, 76);
  EXPECT_EQ(run({"exec", "--no-history", "job", "--", "true"}, env).status, 0);
  EXPECT_EQ(redis.cmd({"LLEN", runs_key("job")}).integer, 1);
  EXPECT_EQ(redis.cmd({"TYPE", runs_key("job")}).str, "list");
}

TEST(History, OverdueSaysWhetherTheLastOkRunIsRecentEnough) {
  RedisServer redis;
  const Env env = env_of(redis);
  Result never = run({"overdue", "--max-age", "1h", "backup"}, env);
  EXPECT_EQ(never.status, 1);
  EXPECT_NE(never.out.find("no ok run"), std::string::npos) << never.out;
  EXPECT_EQ(run({"exec", "backup", "--", "true"}, env).status, 0);
  EXPECT_EQ(run({"exec", "backup", "--", "false"}, env).status, 1);
  Result fresh = run({"overdue", "--max-age", "1h", "backup"}, env);
  EXPECT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(std::count(fresh.out.begin(), fresh.out.end(), '\n'), 1) << fresh.out;
  sleep_for(0.3);
  Result stale = run({"overdue", "--max-age", "100ms", "--json", "backup"}, env);
  EXPECT_EQ(stale.status, 1);
  const json j = json::parse(stale.out);
  EXPECT_EQ(j["overdue"], true);
  EXPECT_EQ(j["last_ok"]["outcome"], "ok");
  EXPECT_GE(j["age_ms"].get<long long>(), 100);
}

TEST(History, MaxAgeSaysWhetherTheLastOkRunIsRecentEnoughAsOverdueDid) {
  RedisServer redis;
  const Env env = env_of(redis);
  Result never = run({"history", "backup", "--max-age", "1h"}, env);
  EXPECT_EQ(never.status, 1);
  EXPECT_EQ(never.out, "backup is overdue: no ok run in its history\n");
  EXPECT_EQ(run({"exec", "backup", "--", "true"}, env).status, 0);
  Result fresh = run({"history", "backup", "--max-age", "1h"}, env);
  EXPECT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(fresh.out.rfind("backup is on time: its last ok run ended ", 0), 0U) << fresh.out;
  EXPECT_TRUE(std::regex_search(fresh.out, std::regex(R"(\(pid \d+, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\))")))
      << "the end in UTC, as every text line writes a time: " << fresh.out;
  Result older = run({"overdue", "backup", "--max-age", "1h"}, env);
  EXPECT_EQ(older.status, 0);
  // overdue, the older spelling, says the same (but for how long ago).
  const std::regex ago("ended [^ ]+ ago");
  EXPECT_EQ(std::regex_replace(older.out, ago, "ended ? ago"), std::regex_replace(fresh.out, ago, "ended ? ago"));
  sleep_for(0.3);
  Result stale = run({"history", "backup", "--max-age", "100ms", "--json"}, env);
  EXPECT_EQ(stale.status, 1);
  const json j = json::parse(stale.out);
  EXPECT_EQ(j["overdue"], true);
  EXPECT_EQ(j["max_age_ms"], 100);
  EXPECT_EQ(j["last_ok"]["outcome"], "ok");
  EXPECT_GE(j["age_ms"].get<long long>(), 100);
  const json older_json = json::parse(run({"overdue", "backup", "--max-age", "100ms", "--json"}, env).out);
  for (const auto& [key, value] : j.items()) {
    EXPECT_TRUE(older_json.contains(key)) << key;
  }
  EXPECT_EQ(older_json.size(), j.size());
}

TEST(History, HistoryCostsExecNoCommandOfItsOwn) {
  RedisServer redis;
  const Env env = env_of(redis);
  const auto sent = [&] { return redis.calls("evalsha") + redis.calls("eval"); };
  EXPECT_EQ(run({"exec", "warm", "--", "true"}, env).status, 0);  // the scripts loaded once (NOSCRIPT, EVAL)
  long long before = sent();
  EXPECT_EQ(run({"exec", "--no-history", "a", "--", "true"}, env).status, 0);
  const long long without = sent() - before;
  before = sent();
  EXPECT_EQ(run({"exec", "b", "--", "true"}, env).status, 0);
  EXPECT_EQ(sent() - before, without);
  EXPECT_EQ(without, 2) << "the acquire and the release";
}

TEST(History, OneServerRestartedEmptyLosesNothingVisible) {
  Servers s(3);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, s.env()).status, 0);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s[i].cmd({"XLEN", runs_key("job")}).integer, 1) << "written on every server that granted it";
  }
  s[0].kill();
  s[0].start();
  const json h = history(s.env(), "job");
  ASSERT_EQ(h.size(), 1u) << "the union, one line per run";
  EXPECT_EQ(h[0]["outcome"], "ok");
  Result skipped = run({"exec", "--skip-if-ok-within", "1h", "job", "--", "true"}, s.env());
  EXPECT_EQ(skipped.status, 75) << "a majority of ledgers still hold the ok run: " << skipped.err;
  EXPECT_EQ(s.holders("job"), 0) << "the restarted server's grant is given back";
  EXPECT_EQ(s[0].cmd({"EXISTS", runs_key("job")}).integer, 0) << "and its run taken out";
}

TEST(History, StatusShowsTheLastRunOfAFreeLock) {
  RedisServer redis;
  const Env env = env_of(redis);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  EXPECT_EQ(run({"exec", "job", "--", "sh", "-c", "exit 2"}, env).status, 2);
  Result table = run({"status", "job"}, env);
  EXPECT_EQ(table.status, 1) << "free";
  EXPECT_NE(table.out.find("  last run: failed (exit 2) on "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("; last ok: ok on "), std::string::npos) << table.out;
  const json j = json::parse(run({"status", "--json", "job"}, env).out);
  EXPECT_EQ(j[0]["last_run"]["outcome"], "failed");
  EXPECT_EQ(j[0]["last_ok"]["outcome"], "ok");
  Result metrics = run({"status", "--format", "prometheus", "job"}, env);
  EXPECT_NE(metrics.out.find("redlock_last_run_exit_status{name=\"job\"} 2\n"), std::string::npos) << metrics.out;
  EXPECT_NE(metrics.out.find("redlock_last_success_timestamp_seconds{name=\"job\"} "), std::string::npos)
      << metrics.out;
}

TEST(History, TheTableShowsACommandsBackslashesAsTyped) {
  RedisServer redis;
  const Env env = env_of(redis);
  EXPECT_EQ(run({"exec", "job", "--", "printf", "a\\nb"}, env).status, 0);
  Result table = run({"history", "job"}, env);
  EXPECT_EQ(table.status, 0) << table.err;
  // As status shows a holder's command: a backslash stays one.
  EXPECT_NE(table.out.find("  printf a\\nb\n"), std::string::npos) << table.out;
}

TEST(History, AReaderThatGoesAwayEndsItQuietly) {
  RedisServer redis;
  const Env env = env_of(redis);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"history", "job"}, {"history", "--json", "job"}, {"overdue", "--max-age", "1h", "job"}}) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    TempDir dir;
    // `history job | head -1`: SIGPIPE ends it, as it ends ls, and it says nothing.
    EXPECT_EQ(with_gone_reader(args, env, dir)->wait(Seconds(20)).err, "rc=141\n");
    // Started with SIGPIPE ignored, it ends with 0.
    TempDir other;
    EXPECT_EQ(with_gone_reader(args, env, other, true)->wait(Seconds(20)).err, "rc=0\n");
  }
}
