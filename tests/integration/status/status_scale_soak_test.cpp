// status at fleet scale: 10,000 held locks listed whole (and as one valid
// JSON document) in a bounded number of commands, and 20 locks beside a
// million other keys in a few commands, never scanning them. How long they
// take is the benchmark's to measure (bench/scale.py, the status cases):
// a timed assertion fails on any loaded machine.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

RedisServer::Options with_debug() {
  RedisServer::Options o;
  o.extra = debug_command_options();
  return o;
}

class StatusScale : public WithRedis {
 protected:
  StatusScale() : WithRedis(with_debug()) {}

  // One run of `status ARGS...`, with the commands it sent counted from zero.
  Result counted(const std::vector<std::string>& args) {
    (void)redis.cmd({"CONFIG", "RESETSTAT"});
    return rl(args);
  }
};

}  // namespace

TEST_F(StatusScale, TenThousandLocksAreListedInAFewHundredCommands) {
  hold_locks(redis, 10'000);
  Result table = counted({"status"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(split_lines(table.out).size(), 10'001u);
  // 10 ZSCAN pages, 200 inspect and 200 line calls (50 locks each, sent in
  // one round trip), 2 CONFIG GET.
  EXPECT_LE(client_commands(redis), 420);
  EXPECT_EQ(redis.calls("scan"), 0);
  Result as_json = counted({"status", "--json"});
  ASSERT_EQ(as_json.status, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out).size(), 10'000u);
  // JSON carries each lock's last runs: 200 calls of the runs script more,
  // in the same round trip's pipeline as each other.
  EXPECT_LE(client_commands(redis), 620);
}

TEST_F(StatusScale, TwentyLocksBesideAMillionKeysTakeFewCommandsAndNoScan) {
  ASSERT_EQ(redis.cmd({"DEBUG", "POPULATE", "1000000", "cache"}).str, "OK");
  hold_locks(redis, 20);
  Result s = counted({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out).size(), 20u);
  EXPECT_LE(client_commands(redis), 10);
  EXPECT_EQ(redis.calls("scan"), 0);
}
