// status at fleet scale: 10,000 held locks listed within a second (and as
// one valid JSON document), and 20 locks beside a million other keys in a few
// commands, never scanning them (issue 21's figures, on loopback).

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

RedisServer::Options with_debug() {
  RedisServer::Options o;
  o.extra = {"--enable-debug-command", "yes"};
  return o;
}

class StatusScale : public WithRedis {
 protected:
  StatusScale() : WithRedis(with_debug()) {}

  // The fastest of three runs of `status ARGS...`, in seconds, and its output.
  double best_of_three(const std::vector<std::string>& args, Result& last) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      last = rl(args);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  }
};

}  // namespace

TEST_F(StatusScale, TenThousandLocksAreListedWithinASecond) {
  hold_locks(redis, 10'000);
  (void)redis.cmd({"CONFIG", "RESETSTAT"});
  Result table;
  const double listed = best_of_three({"status"}, table);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(split_lines(table.out).size(), 10'001u);
  // Three runs: 10 ZSCAN pages, 200 inspect and 200 line calls, 2 CONFIG GET each.
  EXPECT_LE(client_commands(redis), 3 * 420);
  EXPECT_EQ(redis.calls("scan"), 0);
  EXPECT_LT(listed, 1.0) << "on a loaded machine, rerun it alone";
  // JSON costs more to write (about 0.8 s here, most of it building the
  // document), and is one valid document.
  Result as_json;
  const double written = best_of_three({"status", "--json"}, as_json);
  ASSERT_EQ(as_json.status, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out).size(), 10'000u);
  EXPECT_LT(written, 2.0) << "on a loaded machine, rerun it alone";
}

TEST_F(StatusScale, TwentyLocksBesideAMillionKeysTakeFewCommandsAndNoScan) {
  ASSERT_EQ(redis.cmd({"DEBUG", "POPULATE", "1000000", "cache"}).str, "OK");
  hold_locks(redis, 20);
  (void)redis.cmd({"CONFIG", "RESETSTAT"});
  Result s;
  const double seconds = best_of_three({"status", "--json"}, s);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out).size(), 20u);
  EXPECT_LE(client_commands(redis), 3 * 10);
  EXPECT_EQ(redis.calls("scan"), 0);
  EXPECT_LT(seconds, 0.05) << "on a loaded machine, rerun it alone";
}
