// redlock exec under contention: many processes, one lock, real mutual
// exclusion checked from inside the critical section.

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

TEST(ExecContention, EightWorkersTimesTenRoundsNeverOverlap) {
  RedisServer redis;
  TempDir dir;
  const std::string d = dir.path();
  constexpr int k_workers = 8;
  constexpr int k_rounds = 10;
  // The critical section: a mkdir marker detects a second holder, and a
  // read-sleep-write counter loses updates if two ever run at once. The
  // fence of each holder is logged in holding order.
  write_file(d + "/critical.sh",
             "mkdir \"$D/marker\" 2>/dev/null || echo OVERLAP >> \"$D/overlaps\"\n"
             "n=$(cat \"$D/counter\")\n"
             "echo \"$REDLOCK_FENCE\" >> \"$D/fences\"\n"
             "sleep 0.01\n"
             "echo $((n + 1)) > \"$D/counter\"\n"
             "rmdir \"$D/marker\"\n");
  write_file(d + "/worker.sh",
             "i=0\n"
             "while [ $i -lt " +
                 std::to_string(k_rounds) +
                 " ]; do\n"
                 "  \"$RL\" exec --wait 60s job -- sh \"$D/critical.sh\"\n"
                 "  rc=$?\n"
                 "  [ $rc -eq 0 ] || echo \"exec exited $rc\" >> \"$D/failures\"\n"
                 "  i=$((i + 1))\n"
                 "done\n");
  write_file(d + "/counter", "0\n");
  Env env{{"REDLOCK_URL", redis.url()}, {"D", d}, {"RL", redlock_binary()}};

  const double start = now_seconds();
  std::vector<std::unique_ptr<Child>> workers;
  for (int w = 0; w < k_workers; ++w) {
    workers.push_back(std::make_unique<Child>(std::vector<std::string>{d + "/worker.sh"}, env, "sh"));
  }
  std::string errors;
  for (auto& w : workers) {
    Result r = w->wait(Seconds(90));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "") << "redlock writes nothing to stdout";
    errors += r.err;
  }
  const double elapsed = now_seconds() - start;

  EXPECT_EQ(read_file(d + "/failures"), "") << errors;
  EXPECT_EQ(read_file(d + "/overlaps"), "") << "two holders at once";
  EXPECT_EQ(read_file(d + "/counter"), std::to_string(k_workers * k_rounds) + "\n");
  // Every holder a new fence, strictly increasing in holding order.
  std::istringstream fences(read_file(d + "/fences"));
  long long previous = 0;
  int holders = 0;
  for (long long fence; fences >> fence; ++holders) {
    EXPECT_GT(fence, previous) << "at holder " << holders;
    previous = fence;
  }
  EXPECT_EQ(holders, k_workers * k_rounds);
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
  EXPECT_LT(elapsed, 30.0) << "waiters should wake on release, not poll";
  RecordProperty("seconds", std::to_string(elapsed));
}
