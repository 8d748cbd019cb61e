// redlock exec when the lock is lost while CMD runs: the key deleted,
// replaced or flushed, Redis stopped; and the --on-lost policies.

#include <gtest/gtest.h>
#include <signal.h>

#include <functional>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

using Fixture = ExecFixture;

// Breaks the lock with `break_it` while a 3 s lock (renewed every 1 s) is
// held by exec; checks that CMD gets SIGTERM within about one renewal
// period and that redlock exits 74. Returns redlock's result.
Result lose_the_lock(Fixture& f, const std::function<void()>& break_it) {
  Child c({"exec", "--ttl", "3s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  f.reaper.group(pid);
  f.reaper.pid(wait_for_pid(f.path("grandchild")));
  EXPECT_GT(pid, 0) << c.err_so_far();
  EXPECT_TRUE(key_exists(f.redis, lock_key("job")));
  sleep_for(0.2);
  break_it();
  double t = seconds_until_file(f.path("term"), Seconds(5));
  EXPECT_GE(t, 0) << "CMD never got SIGTERM: " << c.err_so_far();
  EXPECT_LT(t, 1.8) << "one renewal period is 1 s";
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err, "");
  EXPECT_FALSE(process_alive(pid));
  return r;
}

}  // namespace

TEST(ExecLost, KeyDeletedWhileCommandRunsGetsItTerminatedAndExit74) {
  Fixture f;
  Result r = lose_the_lock(f, [&] { f.redis.cmd({"DEL", lock_key("job")}); });
  // --kill-after is 5s, at most a third of the TTL: the line says when SIGKILL follows.
  EXPECT_NE(r.err.find("sending SIGTERM to the command (SIGKILL after 1s; exit status 74)"), std::string::npos)
      << r.err;
  // Nothing recreated it: not the renewer, not the final release.
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
  sleep_for(0.5);
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecLost, KeyOverwrittenByAForeignValueIsLeftUntouched) {
  Fixture f;
  lose_the_lock(f, [&] { f.redis.cmd({"SET", lock_key("job"), "somebody-else"}); });
  EXPECT_EQ(f.redis.cmd({"TYPE", lock_key("job")}).text(), "string");
  EXPECT_EQ(f.redis.cmd({"GET", lock_key("job")}).str, "somebody-else");
  EXPECT_EQ(f.redis.cmd({"PTTL", lock_key("job")}).integer, -1);  // no expiry was put on it
}

TEST(ExecLost, KeyTakenByAnotherHolderIsLeftToThatHolder) {
  Fixture f;
  std::string other;
  lose_the_lock(f, [&] {
    f.redis.cmd({"DEL", lock_key("job")});
    Result a = run({"acquire", "--ttl", "30s", "job"}, {{"REDLOCK_URL", f.redis.url()}});
    EXPECT_EQ(a.status, 0) << a.err;
    other = a.out.substr(0, a.out.find('\n'));
  });
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "token"}).str, other);
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
  EXPECT_GT(f.redis.cmd({"PTTL", lock_key("job")}).integer, 25000);
}

TEST(ExecLost, FlushallWhileCommandRunsGetsItTerminatedAndNothingRecreated) {
  Fixture f;
  lose_the_lock(f, [&] { f.redis.cmd({"FLUSHALL"}); });
  EXPECT_EQ(f.redis.cmd({"DBSIZE"}).integer, 0);
  sleep_for(0.5);
  EXPECT_EQ(f.redis.cmd({"DBSIZE"}).integer, 0);
}

TEST(ExecLost, RedisStoppedGetsCommandKilledBeforeTheLockExpires) {
  Fixture f;
  Env env = f.env();
  Child c({"exec", "--ttl", "3s", "--redis-timeout", "300ms", "job", "--", "sh", f.script(k_term_recorder)}, env);
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  f.reaper.pid(wait_for_pid(f.path("grandchild")));
  sleep_for(1.3);  // past the first renewal
  // When the key expires on the server, in the test's clock: PTTL read just
  // before the pause (the server's clock stops with the server, but the
  // lock's safety is judged against real time).
  double sampled = now_seconds();
  long long pttl = f.redis.cmd({"PTTL", lock_key("job")}).integer;
  ASSERT_GT(pttl, 1500) << "the lock should have been renewed by now";
  const double expires_at = sampled + static_cast<double>(pttl) / 1000.0;
  f.redis.pause();
  const double paused_at = now_seconds();

  double gone = seconds_until_gone(pid, Seconds(8));
  const double dead_at = now_seconds();
  Result r = c.wait(Seconds(10));
  f.redis.resume();

  ASSERT_GE(gone, 0) << "CMD still runs with Redis stopped: " << r.err;
  EXPECT_TRUE(file_exists(f.path("term"))) << "CMD should have had SIGTERM first (--on-lost term)";
  EXPECT_LT(dead_at, expires_at) << "CMD outlived the lock by " << dead_at - expires_at << " s";
  EXPECT_LT(dead_at - paused_at, 3.0);
  // Not before the validity (minus --kill-after) was used up: the renewals
  // had time to retry.
  EXPECT_GT(dead_at - paused_at, 0.5);
  pid_t grandchild = wait_for_pid(f.path("grandchild"));
  EXPECT_TRUE(eventually([&] { return !process_alive(grandchild); }, Seconds(1)));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err, "");
  // The lock is lost and said so; a release that could not be sent adds no
  // line (its "it frees itself within 3s" is not true of a lost lock).
  EXPECT_EQ(r.err.find("could not release"), std::string::npos) << r.err;
  // Once Redis runs again, the lock frees within its TTL (the release or
  // renewals queued while it was stopped may run now, but none extends it
  // beyond one TTL).
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(4.5)));
}

TEST(ExecLost, AStoppedRedlockCannotLetTheCommandRunPastTheLock) {
  // SIGSTOP to redlock alone (CMD runs in a group of its own): nothing
  // renewed, nothing acted, and CMD ran on after the key expired while a
  // second holder took the lock.
  Fixture f;
  Child c({"exec", "--ttl", "3s", "--kill-after", "1s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t grandchild = wait_for_pid(f.path("grandchild"));
  f.reaper.pid(grandchild);
  sleep_for(1.3);  // past the first renewal: the guard keeps the renewed end
  const double sampled = now_seconds();
  const long long pttl = f.redis.cmd({"PTTL", lock_key("job")}).integer;
  ASSERT_GT(pttl, 1500) << "the lock should have been renewed by now";
  const double expires_at = sampled + static_cast<double>(pttl) / 1000.0;
  c.signal(SIGSTOP);
  const double gone = seconds_until_gone(pid, Seconds(8));
  const double dead_at = now_seconds();
  EXPECT_TRUE(eventually([&] { return !process_alive(grandchild); }, Seconds(1)));
  c.signal(SIGCONT);
  Result r = c.wait(Seconds(10));
  ASSERT_GE(gone, 0) << "CMD still runs while redlock is stopped";
  EXPECT_LT(dead_at, expires_at) << "CMD outlived the lock by " << dead_at - expires_at << " s";
  EXPECT_EQ(r.status, 74) << r.err;
}

TEST(ExecLost, RedisPausedForLessThanARenewalPeriodLeavesCommandAlone) {
  Fixture f;
  // --ttl 6s: renewed every 2 s. The pause covers the first renewal (due
  // 2 s after the acquire) but is shorter than ttl/3.
  Child c({"exec", "--ttl", "6s", "job", "--", "sh",
           f.script(k_term_trap + "echo $$ > \"$D/pid\"\n"
                                  "sleep 4.5\n"
                                  "echo finished > \"$D/finished\"\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  std::string token = f.redis.cmd({"HGET", lock_key("job"), "token"}).str;
  sleep_for(1.2);
  f.redis.pause();
  sleep_for(1.5);
  f.redis.resume();
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
  EXPECT_TRUE(process_alive(pid));
  Result r = c.wait(Seconds(15));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(file_exists(f.path("term")));
  EXPECT_TRUE(file_exists(f.path("finished")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecLost, OnLostKillSendsSigkillAtOnceToTheWholeGroup) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "--on-lost", "kill", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  pid_t grandchild = wait_for_pid(f.path("grandchild"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  f.reaper.pid(grandchild);
  sleep_for(0.2);
  f.redis.cmd({"DEL", lock_key("job")});
  double gone = seconds_until_gone(pid, Seconds(5));
  EXPECT_GE(gone, 0) << c.err_so_far();
  EXPECT_LT(gone, 1.8);
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_NE(r.err, "");
  EXPECT_FALSE(file_exists(f.path("term"))) << "SIGKILL, not SIGTERM";
  EXPECT_TRUE(eventually([&] { return !process_alive(grandchild); }, Seconds(1)));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecLost, OnLostIgnoreWarnsAndLetsTheCommandFinishButExits74) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "--on-lost", "ignore", "job", "--", "sh",
           f.script(k_term_trap + "echo $$ > \"$D/pid\"\n"
                                  "while [ ! -e \"$D/go\" ]; do sleep 0.02; done\n"
                                  "echo finished > \"$D/finished\"\n"
                                  "exit 0\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  sleep_for(0.2);
  EXPECT_EQ(c.err_so_far(), "");
  f.redis.cmd({"DEL", lock_key("job")});
  // The warning comes when the loss is found (within a renewal period), not at the end.
  EXPECT_TRUE(eventually([&] { return !c.err_so_far().empty(); }, Seconds(1.8)));
  sleep_for(1.2);  // another renewal period: still nothing done to CMD
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(c.alive());
  EXPECT_FALSE(file_exists(f.path("term")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));  // nor recreated meanwhile

  write_file(f.path("go"), "");
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(file_exists(f.path("finished")));
  EXPECT_FALSE(file_exists(f.path("term")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

namespace {

// CMD survives SIGTERM (its trap only records it, and the foreground sleep
// that the group's SIGTERM kills is simply started again).
const char* const k_term_survivor =
    "trap 'echo term >> \"$D/term\"' TERM\n"
    "echo $$ > \"$D/pid\"\n"
    "while :; do sleep 0.05; done\n";

// Seconds between CMD's SIGTERM and its death, after the lock is deleted.
double term_to_kill(Fixture& f, const std::vector<std::string>& options) {
  std::vector<std::string> args = {"exec", "--ttl", "3s"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"job", "--", "sh", f.script(k_term_survivor)});
  Child c(args, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  EXPECT_GT(pid, 0) << c.err_so_far();
  if (pid <= 0) {
    return -1;
  }
  f.reaper.group(pid);
  sleep_for(0.2);
  f.redis.cmd({"DEL", lock_key("job")});
  EXPECT_GE(seconds_until_file(f.path("term"), Seconds(5)), 0) << c.err_so_far();
  const double term_at = now_seconds();
  EXPECT_GE(seconds_until_gone(pid, Seconds(5)), 0) << "CMD ignored SIGTERM and was never killed";
  const double dead_at = now_seconds();
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
  return dead_at - term_at;
}

}  // namespace

TEST(ExecLost, CommandThatSurvivesSigtermIsKilledAfterKillAfter) {
  Fixture f;
  double grace = term_to_kill(f, {"--kill-after", "500ms"});
  // The trap is seen up to one `sleep 0.05` late; the SIGKILL comes 0.5 s after the SIGTERM.
  EXPECT_GT(grace, 0.3);
  EXPECT_LT(grace, 1.3);
}

TEST(ExecLost, KillAfterIsCappedAtAThirdOfTheTtl) {
  Fixture f;
  double grace = term_to_kill(f, {"--kill-after", "20s"});
  // 20 s becomes ttl/3 = 1 s: the lock must still be ours when the SIGKILL goes.
  EXPECT_GT(grace, 0.7);
  EXPECT_LT(grace, 2.0);
}
