// Fences across the loss of a server's memory: a Redis restarted empty, or
// the fence counter evicted, must never make the next fence smaller.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

// Takes and gives back `name` once; returns the fence it was given.
long long take_and_release(const RedisServer& redis, const std::string& name) {
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--json", name}, env);
  EXPECT_EQ(a.status, 0) << a.err;
  if (a.status != 0) {
    return -1;
  }
  json j = json::parse(a.out);
  EXPECT_EQ(run({"release", "--token", j["token"].get<std::string>(), name}, env).status, 0);
  return j["fence"].get<long long>();
}

}  // namespace

TEST(FenceFaults, NeverGoesBackAcrossAnEmptyRestart) {
  RedisServer redis;
  long long last = 0;
  for (int i = 0; i < 3; ++i) {
    long long fence = take_and_release(redis, "job");
    EXPECT_GT(fence, last);
    last = fence;
  }
  redis.kill();
  redis.start();  // same port, empty
  ASSERT_EQ(redis.cmd({"DBSIZE"}).integer, 0);
  long long after = take_and_release(redis, "job");
  EXPECT_GT(after, last) << "the fence went back from " << last << " to " << after << " after an empty restart";
  EXPECT_GT(take_and_release(redis, "job"), after);
}

TEST(FenceFaults, NeverGoesBackWhenTheCounterIsEvicted) {
  RedisServer redis;
  long long last = take_and_release(redis, "job");
  last = std::max(last, take_and_release(redis, "job"));
  // What an allkeys-* eviction would do to the counter.
  ASSERT_EQ(redis.cmd({"DEL", lock_key("job") + ":fence"}).integer, 1);
  long long after = take_and_release(redis, "job");
  EXPECT_GT(after, last) << "the fence went back from " << last << " to " << after << " after an eviction";
}
