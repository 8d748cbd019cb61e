// A broken stderr (a full disk, a closed descriptor) never changes what
// redlock does or the status it exits with; output that was asked for on
// stdout and could not be written is status 74, never a silent 0.

#include <gtest/gtest.h>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

// The two ways stderr breaks: every write fails with ENOSPC, or with EBADF.
const std::vector<std::string> k_broken_stderr = {"2>/dev/full", "2>&-"};

// Runs redlock with `args` under sh, its streams redirected by `redirect`.
Result run_redirected(const std::string& redirect, const std::vector<std::string>& args, const Env& env = {}) {
  std::vector<std::string> sh = {"-c", "exec \"$0\" \"$@\" " + redirect, redlock_binary()};
  sh.insert(sh.end(), args.begin(), args.end());
  Child c(sh, env, std::string("sh"));
  return c.wait(Seconds(30));
}

}  // namespace

TEST(BrokenStderr, UsageErrorStillExits64) {
  for (const auto& redirect : k_broken_stderr) {
    EXPECT_EQ(run_redirected(redirect, {"acquire", "--ttl", "soon", "x"}).status, 64) << redirect;
    EXPECT_EQ(run_redirected(redirect, {"acquire", "--no-such-option", "x"}).status, 64) << redirect;
  }
}

TEST(BrokenStderr, UnreachableRedisStillExits69) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port());
  for (const auto& redirect : k_broken_stderr) {
    Result r = run_redirected(redirect, {"acquire", "--redis", url, "x"});
    EXPECT_EQ(r.status, 69) << redirect;
  }
}

TEST(BrokenStderr, BusyLockStillExits75) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "busy"}, env).status, 0);
  for (const auto& redirect : k_broken_stderr) {
    EXPECT_EQ(run_redirected(redirect, {"acquire", "busy"}, env).status, 75) << redirect;
    EXPECT_EQ(run_redirected(redirect, {"exec", "busy", "--", "true"}, env).status, 75) << redirect;
  }
}

TEST(BrokenStderr, LostLockStillExits74AndTheCommandIsTerminated) {
  for (const auto& redirect : k_broken_stderr) {
    ExecFixture f;
    std::vector<std::string> sh = {"-c",
                                   "exec \"$0\" \"$@\" " + redirect,
                                   redlock_binary(),
                                   "exec",
                                   "--ttl",
                                   "3s",
                                   "job",
                                   "--",
                                   "sh",
                                   f.script(k_term_trap + "echo $$ > \"$D/pid\"\n"
                                                          "while :; do sleep 0.05; done\n")};
    Child c(sh, f.env(), std::string("sh"));
    pid_t pid = wait_for_pid(f.path("pid"));
    ASSERT_GT(pid, 0) << redirect;
    f.reaper.group(pid);
    f.redis.cmd({"DEL", lock_key("job")});
    Result r = c.wait(Seconds(10));
    EXPECT_EQ(r.status, 74) << redirect;
    EXPECT_TRUE(file_exists(f.path("term"))) << redirect << ": CMD was not terminated by the --on-lost policy";
  }
}

// The renewer's thread warns when a renewal fails and again when renewing
// works again; neither warning may end redlock (its guard would SIGKILL a
// healthy CMD).
TEST(BrokenStderr, RenewalWarningsMidExecLeaveTheCommandRunning) {
  for (const auto& redirect : k_broken_stderr) {
    ExecFixture f;
    // Renewals every 2 s, each given up after 200 ms; the grace is short,
    // so a pause of 2.5 s (which must contain a renewal) is well inside the
    // lock's validity.
    std::vector<std::string> sh = {"-c",
                                   "exec \"$0\" \"$@\" " + redirect,
                                   redlock_binary(),
                                   "--redis-timeout",
                                   "200ms",
                                   "exec",
                                   "--ttl",
                                   "6s",
                                   "--kill-after",
                                   "100ms",
                                   "job",
                                   "--",
                                   "sh",
                                   f.script("echo $$ > \"$D/pid\"\n"
                                            "while [ ! -e \"$D/go\" ]; do sleep 0.05; done\n"
                                            "exit 7\n")};
    Child c(sh, f.env(), std::string("sh"));
    pid_t pid = wait_for_pid(f.path("pid"));
    ASSERT_GT(pid, 0) << redirect;
    f.reaper.group(pid);
    f.redis.pause();
    sleep_for(2.5);
    f.redis.resume();
    // A renewal after the pause gives the key a fresh TTL.
    EXPECT_TRUE(eventually(
        [&] {
          return f.redis.cmd({"PTTL", lock_key("job")}).integer > 5500;
        },
        Seconds(3)))
        << redirect;
    EXPECT_TRUE(c.alive()) << redirect;
    write_file(f.path("go"), "");
    Result r = c.wait(Seconds(10));
    EXPECT_EQ(r.status, 7) << redirect;
    EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << redirect;
  }
}

TEST(BrokenStdout, StatusThatCannotBeWrittenExits74) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "shown"}, env).status, 0);
  for (const std::string redirect : {">/dev/full", ">&-", ">/dev/full 2>/dev/full", ">&- 2>&-"}) {
    EXPECT_EQ(run_redirected(redirect, {"status", "--json"}, env).status, 74) << redirect;
    EXPECT_EQ(run_redirected(redirect, {"status"}, env).status, 74) << redirect;
    EXPECT_EQ(run_redirected(redirect, {"status", "shown"}, env).status, 74) << redirect;
  }
  Result r = run_redirected(">/dev/full", {"status", "--json"}, env);
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
  // Nothing asked for, nothing to fail: no locks prints only a warning.
  EXPECT_EQ(run_redirected(">/dev/full", {"status", "--prefix", "none:"}, env).status, 0);
}

TEST(BrokenStdout, RenewJsonThatCannotBeWrittenExits74) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--ttl", "60s", "kept"}, env);
  ASSERT_EQ(a.status, 0);
  const std::string token = a.out.substr(0, a.out.find('\n'));
  for (const std::string redirect : {">/dev/full", ">&-", ">&- 2>&-"}) {
    EXPECT_EQ(run_redirected(redirect, {"renew", "--json", "--token", token, "kept"}, env).status, 74) << redirect;
  }
  // Without --json nothing is written: the renewal is all.
  EXPECT_EQ(run_redirected(">/dev/full", {"renew", "--token", token, "kept"}, env).status, 0);
}

TEST(BrokenStdout, AcquireThatCannotWriteItsTokenGivesItBackWith74) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  for (const std::string redirect : {">/dev/full 2>/dev/full", ">&- 2>&-", ">&- 2>/dev/full"}) {
    EXPECT_EQ(run_redirected(redirect, {"acquire", "--json", "given-back"}, env).status, 74) << redirect;
    EXPECT_FALSE(key_exists(redis, lock_key("given-back"))) << redirect;
  }
}

TEST(BrokenStdout, HelpAndVersionThatCannotBeWrittenExit74) {
  for (const std::string redirect : {">/dev/full", ">/dev/full 2>&-"}) {
    EXPECT_EQ(run_redirected(redirect, {"--help"}).status, 74) << redirect;
    EXPECT_EQ(run_redirected(redirect, {"--version"}).status, 74) << redirect;
  }
  EXPECT_EQ(run_redirected(">/dev/null", {"--help"}).status, 0);
}
