// A connection killed by CLIENT KILL (as Sentinel does on failover) is
// re-established before the next request. The server's `timeout` setting:
// tests/faults/idle_test.cpp.

#include <gtest/gtest.h>

#include <string>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

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
