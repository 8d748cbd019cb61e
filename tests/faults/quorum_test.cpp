// Faults under the Redlock quorum: servers SIGSTOPped while exec holds a
// lock on three of them. A minority may stop without CMD noticing; once a
// majority stops, CMD is ended before the lock's validity runs out.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

struct ThreeServers {
  std::vector<std::unique_ptr<RedisServer>> all;
  TempDir dir;
  Reaper reaper;
  ThreeServers() {
    for (int i = 0; i < 3; ++i) {
      all.push_back(std::make_unique<RedisServer>());
    }
  }
  ~ThreeServers() {
    for (auto& s : all) {
      s->resume();
    }
  }
  [[nodiscard]] Env env() const {
    return {{"REDLOCK_URL", all[0]->url() + "," + all[1]->url() + "," + all[2]->url()}, {"D", dir.path()}};
  }
  [[nodiscard]] std::string path(const std::string& name) const { return dir.path() + "/" + name; }
};

}  // namespace

TEST(QuorumFaults, AStoppedMinorityLeavesTheCommandAlone) {
  ThreeServers s;
  write_file(s.path("cmd.sh"), k_term_trap +
                                   "echo $$ > \"$D/pid\"\n"
                                   "sleep 3.5\n"
                                   "echo finished > \"$D/finished\"\n");
  Child exec({"exec", "--ttl", "3s", "--timeout", "300ms", "job", "--", "sh", s.path("cmd.sh")}, s.env());
  pid_t pid = wait_for_pid(s.path("pid"));
  ASSERT_GT(pid, 0) << exec.err_so_far();
  s.reaper.group(pid);
  sleep_for(0.3);
  s.all[0]->pause();  // through several renewals
  Result r = exec.wait(Seconds(15));
  s.all[0]->resume();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(file_exists(s.path("finished")));
  EXPECT_FALSE(file_exists(s.path("term")));
  EXPECT_EQ(s.all[1]->cmd({"EXISTS", lock_key("job")}).integer, 0);
  EXPECT_EQ(s.all[2]->cmd({"EXISTS", lock_key("job")}).integer, 0);
  // The stopped server's copy frees within its TTL once it runs again.
  EXPECT_TRUE(eventually([&] { return s.all[0]->cmd({"EXISTS", lock_key("job")}).integer == 0; }, Seconds(4)));
}

TEST(QuorumFaults, AStoppedMajorityGetsTheCommandKilledBeforeTheLockExpires) {
  ThreeServers s;
  write_file(s.path("cmd.sh"), k_term_trap +
                                   "echo $$ > \"$D/pid\"\n"
                                   "sleep 30 & wait\n");
  Child exec(
      {"exec", "--ttl", "3s", "--timeout", "300ms", "--kill-after", "500ms", "job", "--", "sh", s.path("cmd.sh")},
      s.env());
  pid_t pid = wait_for_pid(s.path("pid"));
  ASSERT_GT(pid, 0) << exec.err_so_far();
  s.reaper.group(pid);
  sleep_for(1.2);  // past the first renewal
  // The lock ends for everyone when the second of the three copies
  // expires; CMD is held to the stricter first expiry.
  std::vector<double> expiries;
  for (auto& server : s.all) {
    const double sampled = now_seconds();
    long long pttl = server->cmd({"PTTL", lock_key("job")}).integer;
    ASSERT_GT(pttl, 0);
    expiries.push_back(sampled + static_cast<double>(pttl) / 1000.0);
  }
  std::sort(expiries.begin(), expiries.end());
  s.all[0]->pause();
  s.all[1]->pause();
  const double paused_at = now_seconds();
  double gone = seconds_until_gone(pid, Seconds(8));
  const double dead_at = now_seconds();
  Result r = exec.wait(Seconds(10));
  ASSERT_GE(gone, 0) << "CMD still runs without a majority: " << r.err;
  EXPECT_LT(dead_at, expiries[0]) << "CMD outlived the first expiry by " << dead_at - expiries[0] << " s";
  EXPECT_GT(dead_at - paused_at, 0.5) << "the renewals had time to retry";
  EXPECT_TRUE(file_exists(s.path("term")));
  EXPECT_EQ(r.status, 74) << r.err;
}
