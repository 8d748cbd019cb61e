// What CMD leaves in its process group never outlives the lock: after a
// lost lock the SIGKILL of --kill-after reaches processes that ignore
// SIGTERM even when CMD itself has already exited, and on a normal end the
// leftovers are terminated before the lock is released.

#include <gtest/gtest.h>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

using Fixture = ExecFixture;

}  // namespace

TEST(ExecLeftovers, AfterALostLockAStubbornChildIsKilledBeforeRedlockExits) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "--kill-after", "1s", "job", "--", "sh",
           f.script(k_stubborn_child + "echo $$ > \"$D/pid\"\nsleep 132\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t stubborn = wait_for_pid(f.path("stubborn"));
  f.reaper.pid(stubborn);
  ASSERT_TRUE(eventually([&] { return ignores_signal(stubborn, SIGTERM); })) << "the test's child must ignore TERM";

  f.redis.cmd({"DEL", lock_key("job")});
  // CMD (sh) dies of the SIGTERM; its stubborn child does not.
  ASSERT_GE(seconds_until_gone(pid, Seconds(3)), 0) << c.err_so_far();
  const double sh_gone_at = now_seconds();
  Result r = c.wait(Seconds(10));
  const double waited = now_seconds() - sh_gone_at;
  const bool alive_after = process_alive(stubborn);
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_FALSE(alive_after) << "a child that ignores SIGTERM outlived redlock, unlocked";
  EXPECT_GT(waited, 0.5) << "redlock exited before --kill-after ran out: " << r.err;
  EXPECT_LT(waited, 3.0) << r.err;
  EXPECT_NE(r.err.find("SIGKILL"), std::string::npos) << r.err;
  EXPECT_TRUE(group_members(pid).empty());
}

TEST(ExecLeftovers, OnLostKillReachesEveryProcessOfTheGroup) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "--on-lost", "kill", "job", "--", "sh",
           f.script(k_stubborn_child + "sleep 60 & echo $$ > \"$D/pid\"\nwait\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  f.reaper.pid(wait_for_pid(f.path("stubborn")));
  f.redis.cmd({"DEL", lock_key("job")});
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_TRUE(group_members(pid).empty()) << group_members(pid).size() << " processes outlived redlock";
}

// Normal end: CMD exits while a child it started still runs. The child is
// terminated while the lock is still held; CMD's status is redlock's.
TEST(ExecLeftovers, ChildrenLeftBehindAreTerminatedBeforeTheLockIsReleased) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "job", "--", "sh",
           f.script("sh -c 'trap \"echo term > \\\"$D/term\\\"; sleep 0.3; exit 0\" TERM; sleep 60 &\n"
                    "echo $! > \"$D/sleeper\"; wait' &\n"
                    "echo $! > \"$D/left\"\n"
                    "echo $$ > \"$D/pid\"\n"
                    "while [ ! -e \"$D/go\" ]; do sleep 0.02; done\n"
                    "exit 5\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t left = wait_for_pid(f.path("left"));
  f.reaper.pid(left);
  // Its trap is set once its sleep runs (a loaded machine may not have run
  // it yet when the command's own loop forks its first sleep).
  pid_t sleeper = wait_for_pid(f.path("sleeper"));
  f.reaper.pid(sleeper);

  write_file(f.path("go"), "");
  // The child got SIGTERM; while it takes its time to exit, the lock is held.
  ASSERT_GE(seconds_until_file(f.path("term"), Seconds(3)), 0) << c.err_so_far();
  EXPECT_FALSE(process_alive(pid));
  EXPECT_TRUE(process_alive(left));
  EXPECT_TRUE(key_exists(f.redis, lock_key("job"))) << "released while the command's child still ran";
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 5) << r.err;
  EXPECT_LT(r.seconds, 4.0) << "a child that obeys SIGTERM needs no SIGKILL";
  EXPECT_FALSE(process_alive(left));
  EXPECT_TRUE(group_members(pid).empty());
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
  EXPECT_NE(r.err.find("left 2 processes"), std::string::npos) << r.err;
}

TEST(ExecLeftovers, AStubbornChildLeftBehindIsKilledAfterKillAfterThenTheLockIsReleased) {
  Fixture f;
  Child c({"exec", "--ttl", "6s", "--kill-after", "1s", "job", "--", "sh",
           f.script(k_stubborn_child + "echo $$ > \"$D/pid\"\nexit 0\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t stubborn = wait_for_pid(f.path("stubborn"));
  f.reaper.pid(stubborn);
  ASSERT_GE(seconds_until_gone(pid, Seconds(3)), 0);
  const double sh_gone_at = now_seconds();
  // Held while the stubborn child runs out its --kill-after.
  sleep_for(0.5);
  EXPECT_TRUE(process_alive(stubborn));
  EXPECT_TRUE(key_exists(f.redis, lock_key("job")));
  Result r = c.wait(Seconds(10));
  const double waited = now_seconds() - sh_gone_at;
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(process_alive(stubborn));
  EXPECT_GT(waited, 0.8);
  EXPECT_LT(waited, 3.0);
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
  EXPECT_NE(r.err.find("left 1 process "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SIGKILL"), std::string::npos) << r.err;
}

// While redlock waits for the leftovers, its guard still covers them.
TEST(ExecLeftovers, SigkillToRedlockWhileItWaitsForLeftoversKillsThem) {
  Fixture f;
  Child c({"exec", "--ttl", "30s", "--kill-after", "10s", "job", "--", "sh",
           f.script(k_stubborn_child + "echo $$ > \"$D/pid\"\nexit 0\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t stubborn = wait_for_pid(f.path("stubborn"));
  f.reaper.pid(stubborn);
  ASSERT_GE(seconds_until_gone(pid, Seconds(3)), 0);
  ASSERT_TRUE(eventually([&] { return c.err_so_far().find("left 1 process") != std::string::npos; })) << c.err_so_far();
  ASSERT_TRUE(process_alive(stubborn));
  c.signal(SIGKILL);
  (void)c.wait(Seconds(5));
  EXPECT_GE(seconds_until_gone(stubborn, Seconds(2)), 0) << "the leftover outlived redlock";
}

// A zombie in the group (its parent left the group and never reaps it)
// runs nothing: redlock does not wait for it. The parent that left the
// group is ended as one of the command's processes.
TEST(ExecLeftovers, AZombieInTheGroupDoesNotHoldRedlock) {
  Fixture f;
  // perl forks a child that exits at once, then leaves the group and
  // sleeps without reaping it: the zombie keeps CMD's group number.
  Child c({"exec", "job", "--", "sh",
           f.script("perl -e 'if (fork() == 0) { exit 0 } setpgrp(0, 0); open(my $f, \">\", \"$ENV{D}/parent\"); "
                    "print $f \"$$\\n\"; close $f; sleep 30' &\n"
                    "echo $$ > \"$D/pid\"\n"
                    "while [ ! -e \"$D/go\" ]; do sleep 0.02; done\n"
                    "exit 4\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t parent = wait_for_pid(f.path("parent"));
  ASSERT_GT(parent, 0) << c.err_so_far();
  f.reaper.pid(parent);
  // Only sh still runs in the group; the zombie is there too.
  ASSERT_TRUE(eventually([&] { return group_members(pid).size() == 1; })) << group_members(pid).size();
  ASSERT_EQ(::kill(-pid, 0), 0);
  write_file(f.path("go"), "");
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_LT(r.seconds, 3.0) << r.err;
  EXPECT_EQ(r.err.find("in its process group"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("left 1 process outside its process group (perl pid " + std::to_string(parent) + ")"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(process_alive(parent));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

// The guard that would kill the command's group if redlock died ends as
// soon as the group is gone, not after the release: a release held up by
// a stopped server leaves no guard that could SIGKILL a later process
// group reusing the number.
TEST(ExecLeftovers, TheGroupGuardEndsWithTheGroupNotAfterTheRelease) {
  Fixture f;
  Child c({"--redis-timeout", "20s", "exec", "job", "--", "sh", "-c",
           "touch \"$D/ran\"; while [ ! -e \"$D/go\" ]; do sleep 0.01; done"},
          f.env());
  ASSERT_GE(seconds_until_file(f.path("ran"), Seconds(10)), 0) << c.err_so_far();
  EXPECT_FALSE(live_children(c.pid()).empty()) << "the command and the guard run";
  f.redis.pause();
  write_file(f.path("go"), "");
  EXPECT_TRUE(eventually([&] { return live_children(c.pid()).empty(); }, Seconds(5)))
      << "a child of redlock outlived the command's group while the release waited";
  EXPECT_TRUE(c.alive()) << "redlock should still be waiting for the stopped server";
  f.redis.resume();
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 0) << r.err;
}
