// status --format prometheus says when Redis is down (redlock_up 0, a whole
// exposition, exit 69) and carries what doctor finds of eviction and
// persistence as gauges; status itself no longer warns of eviction.

#include <gtest/gtest.h>

#include <string>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// A port nothing listens on (a server started, then stopped).
int dead_port() {
  RedisServer gone;
  const int port = gone.port();
  gone.stop();
  return port;
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
