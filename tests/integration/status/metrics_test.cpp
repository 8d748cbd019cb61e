// status --format prometheus says when Redis is down (redlock_up 0, a whole
// exposition, exit 69) and carries what doctor finds of eviction and
// persistence as gauges; status itself no longer warns of eviction.

#include <gtest/gtest.h>

#include <string>

#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;

namespace {

// A port nothing listens on (a server started, then stopped).
int dead_port() {
  RedisServer gone;
  const int port = gone.port();
  gone.stop();
  return port;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// What a job's dead man's switch reads: status --format prometheus without
// names, on `env`, after an ok run of "job" and a failed one of "other"
// whose locks are free, beside a plain lock that never ran a command.
void expect_free_jobs_listed(const Env& env) {
  ASSERT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
  ASSERT_EQ(run({"exec", "other", "--", "sh", "-c", "exit 3"}, env).status, 3);
  ASSERT_EQ(run({"acquire", "plain"}, env).status, 0);
  const std::string gone = run({"acquire", "gone"}, env).out;
  ASSERT_EQ(run({"release", "--token", gone.substr(0, gone.find('\n')), "gone"}, env).status, 0);
  Result r = run({"status", "--format", "prometheus"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "redlock_last_success_timestamp_seconds{name=\"job\"} ")) << r.out;
  EXPECT_TRUE(has(r.out, "redlock_lock_held{name=\"job\"} 0\n")) << r.out;
  EXPECT_TRUE(has(r.out, "redlock_last_run_exit_status{name=\"other\"} 3\n")) << r.out;
  EXPECT_FALSE(has(r.out, "redlock_last_success_timestamp_seconds{name=\"other\"}")) << r.out;
  EXPECT_TRUE(has(r.out, "redlock_lock_held{name=\"plain\"} 1\n")) << r.out;
  EXPECT_FALSE(has(r.out, "name=\"gone\"")) << "a free name without runs is no series: " << r.out;
  // The table of every lock stays the held locks'.
  Result table = run({"status"}, env);
  EXPECT_TRUE(has(table.out, "plain")) << table.out;
  EXPECT_FALSE(has(table.out, "job")) << table.out;
}

}  // namespace

TEST(Metrics, PrometheusSaysWhenRedisIsDown) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(dead_port());
  Result r = run({"status", "--format", "prometheus", "--connect-timeout", "300ms"}, {{"REDLOCK_URL", url}});
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_NE(r.out.find("# TYPE redlock_up gauge\nredlock_up{server=\"" + url + "\"} 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# TYPE redlock_lock_held gauge\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("redlock_server_evicts_locks{"), std::string::npos) << "not known" << r.out;
}

TEST(Metrics, PrometheusCarriesTheEvictionAndPersistenceFindings) {
  RedisServer risky(RedisServer::Options{.extra = {"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"}});
  ASSERT_EQ(run({"acquire", "--ttl", "1m", "job"}, {{"REDLOCK_URL", risky.url()}}).status, 0);
  Result r = run({"status", "--format", "prometheus"}, {{"REDLOCK_URL", risky.url()}});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string label = "{server=\"" + risky.url() + "\"}";
  EXPECT_NE(r.out.find("redlock_up" + label + " 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redlock_server_evicts_locks" + label + " 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redlock_server_restart_forgets_locks" + label + " 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redlock_lock_held{name=\"job\"} 1\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "") << "the finding is a gauge, not a warning";
}

TEST(StatusFindings, NoLongerWarnsOfEvictionAndNamesTheServerWhenEmpty) {
  RedisServer risky(RedisServer::Options{.extra = {"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"}});
  Result r = run({"status"}, {{"REDLOCK_URL", risky.url()}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("maxmemory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no locks under the prefix 'redlock:' on " + risky.url()), std::string::npos) << r.err;
}

// A job whose lock is free (nearly always, and exactly when its switch
// should fire) still has its last-run gauges in the listing of every lock.
TEST(Metrics, AFreeNameWithRunsHasItsLastRunGaugesWithoutNames) {
  RedisServer redis;
  expect_free_jobs_listed(Env{{"REDLOCK_URL", redis.url()}});
  // Kept in an index of names with a ledger, as held locks are in theirs.
  EXPECT_EQ(redis.cmd({"ZSCORE", "redlock:ledgers", lock_key("job") + ":runs"}).type,
            redlock::redis::Reply::Type::k_string);
}

TEST(Metrics, AFreeNameWithRunsHasItsLastRunGaugesOverThreeServers) {
  Servers s(3);
  expect_free_jobs_listed(s.env());
}
