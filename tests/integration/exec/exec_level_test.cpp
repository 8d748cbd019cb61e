// The levels of a lock that an exec holds are its own: a command that
// releases more than it acquired (with the token it inherited) must never
// free the lock from under itself, or from under an exec it runs in; break
// may, but says whose exec it breaks.

#include <gtest/gtest.h>

#include <string>

#include "exec_support.hpp"

using namespace redlock::test;

namespace {

struct ExecLevel : ::testing::Test {
  Env env() const { return Env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}, {"RL", redlock_binary()}}; }
  // Whether someone else would find `name` busy now (75).
  [[nodiscard]] bool busy_for_others(const std::string& name) const {
    return run({"acquire", "--ttl", "5s", name}, {{"REDLOCK_URL", redis.url()}}).status == 75;
  }
  RedisServer redis;
  TempDir dir;
};

}  // namespace

TEST_F(ExecLevel, AnUnbalancedReleaseInTheCommandKeepsExecsLevelAndSaysWhose) {
  // The command's `redlock release lv` (count 1) deleted the lock while the
  // command ran on, and the next holder started alongside it.
  Result r = run({"exec", "--ttl", "30s", "lv", "--", "sh", "-c",
                  "echo $PPID >\"$D/exec\"; \"$RL\" release lv 2>\"$D/err\"; echo $? >\"$D/rc\"; "
                  "\"$RL\" acquire lv >/dev/null && \"$RL\" release lv && \"$RL\" release lv 2>>\"$D/err\"; "
                  "echo $? >>\"$D/rc\"; sleep 0.4"},
                 env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() + "/rc"), "1\n1\n") << "a balanced acquire/release still works; one more is refused";
  const std::string exec_pid = read_file(dir.path() + "/exec");
  ASSERT_FALSE(exec_pid.empty());
  const std::string err = read_file(dir.path() + "/err");
  EXPECT_NE(err.find("lv is held at this level by the exec that runs this command, pid " +
                     exec_pid.substr(0, exec_pid.size() - 1) + ";"),
            std::string::npos)
      << err;
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("lv")}).integer, 0) << "exec released its own level at the end";
}

TEST_F(ExecLevel, TheLockStaysHeldWhileTheCommandRunsAfterAnUnbalancedRelease) {
  Child exec({"exec", "--ttl", "30s", "held", "--", "sh", "-c",
              "\"$RL\" release held 2>/dev/null; echo $? >\"$D/rc\"; sleep 30"},
             env());
  ASSERT_TRUE(eventually([&] { return file_exists(dir.path() + "/rc"); }));
  EXPECT_EQ(read_file(dir.path() + "/rc"), "1\n");
  EXPECT_TRUE(busy_for_others("held")) << "the lock must still be exec's";
  exec.signal(SIGTERM);
  EXPECT_EQ(exec.wait().signal, SIGTERM);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("held")}).integer, 0);
}

TEST_F(ExecLevel, AnUnbalancedReleaseInANestedExecKeepsBothExecsLevels) {
  // One level down, the release dropped the nested exec's level, whose own
  // end then dropped the outer exec's last one.
  Result r = run({"exec", "--ttl", "30s", "nl", "--", "sh", "-c",
                  "\"$RL\" exec nl -- sh -c '\"$RL\" release nl 2>\"$D/err\"; echo $? >\"$D/rc\"'; "
                  "env -u REDLOCK_TOKEN \"$RL\" acquire --ttl 5s nl >/dev/null 2>&1; echo $? >\"$D/busy\""},
                 env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() + "/rc"), "1\n") << read_file(dir.path() + "/err");
  EXPECT_EQ(read_file(dir.path() + "/busy"), "75\n") << "the outer exec still holds the lock after the nested one";
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("nl")}).integer, 0);
}

TEST_F(ExecLevel, ANestedExecsEndNeverTakesTheLevelOfTheExecThatRunsIt) {
  // The outer command gives back the level of the nested exec it started
  // in the background; when the nested exec ends, only its level may go,
  // and it is already gone: the outer exec's level stays.
  Result r = run({"exec", "--ttl", "30s", "bg", "--", "sh", "-c",
                  "\"$RL\" exec bg -- sleep 0.6 2>\"$D/nested\" & sleep 0.3; \"$RL\" release bg; wait; "
                  "env -u REDLOCK_TOKEN \"$RL\" acquire --ttl 5s bg >/dev/null 2>&1; echo $? >\"$D/busy\""},
                 env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() + "/busy"), "75\n") << read_file(dir.path() + "/nested");
  EXPECT_NE(read_file(dir.path() + "/nested").find("already released"), std::string::npos)
      << read_file(dir.path() + "/nested");
}

TEST_F(ExecLevel, BreakInsideTheCommandIsAllowedAndNamesTheExecItBreaks) {
  // The exec hears the break at once; with --on-lost ignore it lets the
  // command go on, so that the command can say how the break ended (with
  // the default, the exec's SIGTERM raced the break's exit, and a break
  // slow to exit, as under a sanitizer, lost).
  Result r = run({"exec", "--on-lost", "ignore", "--ttl", "1500ms", "br", "--", "sh", "-c",
                  "echo $PPID >\"$D/exec\"; \"$RL\" break br >\"$D/out\"; echo $? >\"$D/rc\""},
                 env(), Seconds(20));
  EXPECT_EQ(r.status, 74) << "the exec finds its lock lost: " << r.err;
  EXPECT_EQ(read_file(dir.path() + "/rc"), "0\n");
  const std::string exec_pid = read_file(dir.path() + "/exec");
  ASSERT_FALSE(exec_pid.empty());
  const std::string out = read_file(dir.path() + "/out");
  EXPECT_NE(out.find("broke br: took it from "), std::string::npos) << out;
  EXPECT_NE(out.find("which is the exec that runs this command, pid " + exec_pid.substr(0, exec_pid.size() - 1)),
            std::string::npos)
      << out;
}
