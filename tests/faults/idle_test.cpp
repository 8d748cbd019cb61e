// Connections the server dropped while redlock was not using them: Redis
// closes idle clients after its `timeout` setting, and a restart closes
// every connection. The next request must reconnect, not fail, and a waiter
// must notice that its subscription is gone.

#include <gtest/gtest.h>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

// A server that closes a client after one idle second.
RedisServer::Options closes_idle_clients() {
  return RedisServer::Options{.extra = {"--timeout", "1"}};
}

}  // namespace

TEST(IdleFaults, ExecReleasesAtTheEndAfterTheServerClosedItsIdleConnection) {
  RedisServer redis(closes_idle_clients());
  Env env{{"REDLOCK_URL", redis.url()}};
  // --ttl 30s renews every 10 s: the connection idles through the whole command.
  Result r = run({"exec", "--ttl", "30s", "job", "--", "sleep", "2.5"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job")))
      << "left held for another " << redis.cmd({"PTTL", lock_key("job")}).integer << " ms";
}

TEST(IdleFaults, AWaiterTakesTheLockAfterTheServerClosedItsIdleConnection) {
  RedisServer redis(closes_idle_clients());
  Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "2500ms", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  Result r = run({"acquire", "--wait", "10s", "job"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(IdleFaults, AWaiterNoticesAServerRestartedEmpty) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "30s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  Child waiter({"acquire", "--wait", "8s", "job"}, env);
  ASSERT_TRUE(await_waiters(redis, "job", 1, Seconds(3))) << waiter.err_so_far();
  const double restarted_at = now_seconds();
  redis.kill();
  redis.start();  // same port, empty: the lock is free
  Result r = waiter.wait(Seconds(15));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(now_seconds() - restarted_at, 3.0) << "the waiter slept on a dead subscription";
  EXPECT_TRUE(key_exists(redis, lock_key("job")));
}
