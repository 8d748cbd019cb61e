// Processes that leave the command's process group (setsid, a daemon) are
// still the command's: redlock adopts them as their parents die, says so in
// one line, and ends them before the lock is released, or when it is lost.

#include <gtest/gtest.h>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

using Fixture = ExecFixture;

// A daemon in a session of its own that writes a line to $D/writes every
// 50 ms; `trap` is its SIGTERM trap ("" ignores it, "-" is the default). Started through a
// subshell that exits at once (a double fork), so its parent is gone long
// before the command ends.
std::string daemon_script(const std::string& trap) {
  return "( setsid sh -c 'trap \"" + trap +
         "\" TERM; echo $$ > \"$D/daemon\"; while :; do echo w >> \"$D/writes\"; sleep 0.05; done' & )\n";
}

}  // namespace

TEST(ExecEscaped, ADaemonThatLeftTheGroupIsEndedBeforeTheReleaseAndNamed) {
  // The daemon went on writing after exec exited 0, with no word, and the
  // next holder started alongside it.
  Fixture f;
  Child c({"exec", "--ttl", "6s", "esc", "--", "sh",
           f.script(daemon_script("-") + "while [ ! -e \"$D/daemon\" ]; do sleep 0.01; done\nsleep 0.3\nexit 3\n")},
          f.env());
  const pid_t daemon = wait_for_pid(f.path("daemon"));
  ASSERT_GT(daemon, 0) << c.err_so_far();
  f.reaper.pid(daemon);
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_FALSE(process_alive(daemon)) << "the daemon outlived the lock";
  EXPECT_FALSE(key_exists(f.redis, lock_key("esc")));
  // The daemon, and its sleep if it was in one.
  EXPECT_NE(r.err.find("the command exited but left "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" outside its process group (sh pid " + std::to_string(daemon)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sending SIGTERM (SIGKILL after --kill-after) before the lock is released"), std::string::npos)
      << r.err;
  const size_t written = read_file(f.path("writes")).size();
  sleep_for(0.2);
  EXPECT_EQ(read_file(f.path("writes")).size(), written) << "the daemon wrote after the release";
}

TEST(ExecEscaped, ADaemonThatIgnoresSigtermIsKilledAfterKillAfterWhileTheLockIsHeld) {
  Fixture f;
  Child c({"exec", "--ttl", "6s", "--kill-after", "1s", "esc", "--", "sh",
           f.script(daemon_script("") + "while [ ! -e \"$D/daemon\" ]; do sleep 0.01; done\necho $$ > \"$D/pid\"\n")},
          f.env());
  const pid_t pid = wait_for_pid(f.path("pid"));
  const pid_t daemon = wait_for_pid(f.path("daemon"));
  ASSERT_GT(daemon, 0) << c.err_so_far();
  f.reaper.pid(daemon);
  ASSERT_GE(seconds_until_gone(pid, Seconds(3)), 0);
  const double sh_gone_at = now_seconds();
  sleep_for(0.5);
  EXPECT_TRUE(process_alive(daemon));
  EXPECT_TRUE(key_exists(f.redis, lock_key("esc"))) << "released while the daemon still ran";
  Result r = c.wait(Seconds(10));
  const double waited = now_seconds() - sh_gone_at;
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(process_alive(daemon));
  EXPECT_GT(waited, 0.8);
  EXPECT_LT(waited, 3.0);
  EXPECT_FALSE(key_exists(f.redis, lock_key("esc")));
  EXPECT_NE(r.err.find("SIGKILL"), std::string::npos) << r.err;
}

TEST(ExecEscaped, ALostLockEndsADaemonWhoseParentStillRuns) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "--kill-after", "500ms", "lost", "--", "sh",
           f.script("setsid sh -c 'echo $$ > \"$D/daemon\"; exec sleep 60' &\n"
                    "echo $$ > \"$D/pid\"\nsleep 60\n")},
          f.env());
  const pid_t pid = wait_for_pid(f.path("pid"));
  const pid_t daemon = wait_for_pid(f.path("daemon"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  ASSERT_GT(daemon, 0) << c.err_so_far();
  f.reaper.group(pid);
  f.reaper.pid(daemon);
  f.redis.cmd({"DEL", lock_key("lost")});
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_FALSE(process_alive(daemon)) << "the daemon ran on after the lock was lost";
  EXPECT_NE(
      r.err.find("1 process of the command runs outside its process group (sleep pid " + std::to_string(daemon) + ")"),
      std::string::npos)
      << r.err;
}
