#include <gtest/gtest.h>

#include "harness.hpp"

using namespace redlock::test;

TEST(Smoke, AcquireThenReleaseRoundTrips) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "smoke"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  std::string token = a.out.substr(0, a.out.find('\n'));
  EXPECT_EQ(redis.cmd({"HGET", "redlock:{smoke}", "token"}).str, token);
  Result r = run({"release", "--token", token, "smoke"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{smoke}"}).integer, 0);
}
