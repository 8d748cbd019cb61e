// Connections that the server closes while they sit idle (Redis's `timeout`
// setting, proxies, CLIENT KILL on a Sentinel failover) are re-established
// before the next request.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

RedisServer::Options closes_idle_clients() {
  return RedisServer::Options{.extra = {"--timeout", "1"}};
}

// True once the server has closed every client that was idle (only ours is left).
bool only_one_client(const RedisServer& redis) {
  std::string list = redis.cmd({"CLIENT", "LIST"}).str;
  return std::count(list.begin(), list.end(), '\n') <= 1;
}

}  // namespace

TEST(IdleDisconnect, ExecReleasesAfterTheServerClosedItsIdleConnection) {
  RedisServer redis(closes_idle_clients());
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
  // A 30 s TTL renews every 10 s: the connection idles while CMD runs.
  Child c({"exec", "--ttl", "30s", "idle", "--", "sh", "-c",
           "touch \"$D/started\"; while [ ! -e \"$D/go\" ]; do sleep 0.05; done"},
          env);
  ASSERT_GE(seconds_until_file(dir.path() + "/started", Seconds(10)), 0) << c.err_so_far();
  ASSERT_TRUE(eventually([&] { return only_one_client(redis); }, Seconds(10))) << "the server closed idle clients";
  write_file(dir.path() + "/go", "");
  Result r = c.wait(Seconds(20));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(key_exists(redis, lock_key("idle"))) << "released at once, not left to its TTL";
}

TEST(IdleDisconnect, AWaiterKeepsWaitingAcrossAClosedIdleConnection) {
  RedisServer redis(closes_idle_clients());
  Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "3s", "idle"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  // The waiter's connection idles for the holder's 3 s TTL; the server closes it after 1 s.
  Result waiter = run({"acquire", "--wait", "20s", "idle"}, env);
  EXPECT_EQ(waiter.status, 0) << waiter.err;
  EXPECT_GT(waiter.seconds, 2.0);
  EXPECT_LT(waiter.seconds, 10.0);
}

TEST(IdleDisconnect, AConnectionKilledByClientKillIsReestablished) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
  Child c({"exec", "--ttl", "30s", "killed", "--", "sh", "-c",
           "touch \"$D/started\"; while [ ! -e \"$D/go\" ]; do sleep 0.05; done"},
          env);
  ASSERT_GE(seconds_until_file(dir.path() + "/started", Seconds(10)), 0) << c.err_so_far();
  // As Sentinel does to the old master's clients on failover.
  redis.cmd({"CLIENT", "KILL", "TYPE", "normal"});
  write_file(dir.path() + "/go", "");
  Result r = c.wait(Seconds(20));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("killed")));
}
