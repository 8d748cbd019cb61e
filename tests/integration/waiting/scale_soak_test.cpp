// A fleet on one lock: hundreds of real redlock processes against one
// redis-server. The line keeps its order and costs the server little while
// they wait (bench/scale.py measures the same at 600 and, simulated,
// 10,000); started at once without --wait, exactly one wins.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace redlock::test;

namespace {

constexpr int k_fleet = 300;

// The server's own CPU time (user + system), in seconds.
double redis_cpu_seconds(const RedisServer& redis) {
  std::istringstream in(redis.cmd({"INFO", "cpu"}).str);
  double total = 0;
  for (std::string line; std::getline(in, line);) {
    for (const char* field : {"used_cpu_user:", "used_cpu_sys:"}) {
      if (line.rfind(field, 0) == 0) {
        total += std::stod(line.substr(std::string(field).size()));
      }
    }
  }
  return total;
}

}  // namespace

TEST(Fleet, ThreeHundredWaitersTakeTheLockInTheOrderTheyCameAndCostTheServerLittle) {
  RedisServer redis;
  TempDir dir;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "10m", "fleet"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  const std::string token = holder.out.substr(0, holder.out.find('\n'));

  const std::string order = dir.path() + "/order";
  std::vector<std::unique_ptr<Child>> fleet;
  for (int i = 0; i < k_fleet; ++i) {
    fleet.push_back(
        std::make_unique<Child>(std::vector<std::string>{"exec", "--wait", "10m", "fleet", "--", "sh", "-c",
                                                         "echo " + std::to_string(i) + " >> '" + order + "'"},
                                env));
    // In line (subscribed after its first try) before the next one comes.
    ASSERT_TRUE(await_waiters(redis, "fleet", i + 1, Seconds(30))) << i << ": " << fleet.back()->err_so_far();
  }
  EXPECT_EQ(redis.cmd({"ZCARD", lock_key("fleet") + ":line"}).integer, k_fleet);

  // While they wait: each beats at the cadence of its place, the near ones
  // twice a second, those far back every few seconds.
  const double cpu_before = redis_cpu_seconds(redis);
  const double started = now_seconds();
  sleep_for(10.0);
  const double cores = (redis_cpu_seconds(redis) - cpu_before) / (now_seconds() - started);
  RecordProperty("redis_cpu_millicores", static_cast<int>(cores * 1000));
  EXPECT_LT(cores, 0.15) << "Redis CPU while " << k_fleet << " wait";
  for (auto& w : fleet) {
    ASSERT_TRUE(w->alive()) << w->err_so_far();
  }

  ASSERT_EQ(run({"release", "--token", token, "fleet"}, env).status, 0);
  for (auto& w : fleet) {
    Result r = w->wait(Seconds(120));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  std::string expected;
  for (int i = 0; i < k_fleet; ++i) {
    expected += std::to_string(i) + "\n";
  }
  EXPECT_EQ(read_file(order), expected) << "not first come, first served";
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("fleet") + ":line"}).integer, 0) << "the line outlived its waiters";
}

TEST(Fleet, OfThreeHundredStartedAtOnceExactlyOneWins) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  std::vector<std::unique_ptr<Child>> fleet;
  for (int i = 0; i < k_fleet; ++i) {
    fleet.push_back(std::make_unique<Child>(std::vector<std::string>{"acquire", "--ttl", "5m", "race"}, env));
  }
  int won = 0;
  int busy = 0;
  std::string winner;
  for (auto& c : fleet) {
    Result r = c->wait(Seconds(60));
    if (r.status == 0) {
      ++won;
      winner = r.out.substr(0, r.out.find('\n'));
    } else {
      EXPECT_EQ(r.status, 75) << r.err;
      ++busy;
    }
  }
  EXPECT_EQ(won, 1);
  EXPECT_EQ(busy, k_fleet - 1);
  EXPECT_EQ(redis.cmd({"HGET", lock_key("race"), "token"}).str, winner);
}
