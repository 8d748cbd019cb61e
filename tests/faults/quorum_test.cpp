// Faults under the Redlock quorum: servers SIGSTOPped while exec holds a
// lock on three of them. A minority may stop without CMD noticing; once a
// majority stops, CMD is ended before the lock's validity runs out.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "blackhole.hpp"
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
  Child exec({"exec", "--ttl", "3s", "--redis-timeout", "300ms", "job", "--", "sh", s.path("cmd.sh")}, s.env());
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
      {"exec", "--ttl", "3s", "--redis-timeout", "300ms", "--kill-after", "500ms", "job", "--", "sh", s.path("cmd.sh")},
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

// The default round-trip timeout (1 s) is a third of this TTL: a renewal
// that waited for the silent server's timeout would be confirmed too late
// for CMD every time. A round ends once two of the three have answered.
TEST(QuorumFaults, ASilentMinorityDoesNotEndTheRun) {
  ThreeServers s;
  write_file(s.path("cmd.sh"), k_term_trap +
                                   "echo $$ > \"$D/pid\"\n"
                                   "sleep 6\n"
                                   "echo finished > \"$D/finished\"\n");
  Child exec({"exec", "--ttl", "3s", "job", "--", "sh", s.path("cmd.sh")}, s.env());
  pid_t pid = wait_for_pid(s.path("pid"));
  ASSERT_GT(pid, 0) << exec.err_so_far();
  s.reaper.group(pid);
  s.all[2]->pause();  // just after the grant, through every renewal and the release
  Result r = exec.wait(Seconds(20));
  s.all[2]->resume();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(file_exists(s.path("finished")));
  EXPECT_FALSE(file_exists(s.path("term")));
  EXPECT_LT(r.seconds, 7.5) << "the release waited for the silent server";
  EXPECT_EQ(s.all[0]->cmd({"EXISTS", lock_key("job")}).integer, 0);
  EXPECT_EQ(s.all[1]->cmd({"EXISTS", lock_key("job")}).integer, 0);
  // What the stopped server runs when it wakes up (the renewals and the
  // release it was sent) leaves at most a copy that its TTL ends.
  EXPECT_TRUE(eventually([&] { return s.all[2]->cmd({"EXISTS", lock_key("job")}).integer == 0; }, Seconds(4)));
}

TEST(QuorumFaults, ASilentMajorityStillEndsTheRunAsLost) {
  ThreeServers s;
  write_file(s.path("cmd.sh"), k_term_trap +
                                   "echo $$ > \"$D/pid\"\n"
                                   "sleep 30 & wait\n");
  Child exec({"exec", "--ttl", "3s", "job", "--", "sh", s.path("cmd.sh")}, s.env());
  pid_t pid = wait_for_pid(s.path("pid"));
  ASSERT_GT(pid, 0) << exec.err_so_far();
  s.reaper.group(pid);
  s.all[0]->pause();
  s.all[2]->pause();
  const double paused_at = now_seconds();
  Result r = exec.wait(Seconds(15));
  const double ended_at = now_seconds();
  s.all[0]->resume();
  s.all[2]->resume();
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_TRUE(file_exists(s.path("term")));
  // SIGTERM before the validity (under 3 s), SIGKILL --kill-after (1 s,
  // a third of the TTL) later at most, and the release's last round trip.
  EXPECT_LT(ended_at - paused_at, 6.0) << r.err;
}

// A server whose packets are dropped (a partition) never completes a
// connect: a round, and the reconnect each later round tries, ends once
// the two others have answered, not at the connect timeout.
TEST(QuorumFaults, AServerThatCannotBeReachedDoesNotHoldUpARound) {
  RedisServer a;
  RedisServer b;
  Blackhole gone;
  const Env env{{"REDLOCK_URL", a.url() + "," + gone.url() + "," + b.url()}};
  Result got = run({"acquire", "--ttl", "30s", "--connect-timeout", "5s", "job"}, env);
  ASSERT_EQ(got.status, 0) << got.err;
  EXPECT_LT(got.seconds, 2.0) << got.err;
  const std::string token = got.out.substr(0, got.out.find('\n'));
  Result renewed = run({"renew", "--token", token, "--ttl", "30s", "--connect-timeout", "5s", "job"}, env);
  EXPECT_EQ(renewed.status, 0) << renewed.err;
  EXPECT_LT(renewed.seconds, 2.0) << renewed.err;
  Result released = run({"release", "--token", token, "--connect-timeout", "5s", "job"}, env);
  EXPECT_EQ(released.status, 0) << released.err;
  EXPECT_LT(released.seconds, 2.0) << released.err;
  EXPECT_EQ(a.cmd({"EXISTS", lock_key("job")}).integer, 0);
  EXPECT_EQ(b.cmd({"EXISTS", lock_key("job")}).integer, 0);
}

// Over several renewals of one exec, each reconnecting to the unreachable
// server within its round's loop.
TEST(QuorumFaults, AnExecOutlivesAServerThatCannotBeReached) {
  RedisServer a;
  RedisServer b;
  Blackhole gone;
  TempDir dir;
  const Env env{{"REDLOCK_URL", a.url() + "," + gone.url() + "," + b.url()}, {"D", dir.path()}};
  Result r = run({"exec", "--ttl", "1500ms", "--connect-timeout", "3s", "job", "--", "sh", "-c",
                  "sleep 3; echo finished > \"$D/finished\""},
                 env, Seconds(20));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(file_exists(dir.path() + "/finished"));
  EXPECT_LT(r.seconds, 4.5) << r.err;
}
