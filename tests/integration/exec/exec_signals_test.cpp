// redlock exec and signals: forwarding to CMD's process group, grandchildren,
// redlock killed outright, and interruption while waiting for the lock.

#include <gtest/gtest.h>

#include <cstring>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

using Fixture = ExecFixture;

std::string name_of(int sig) {
  return sigabbrev_np(sig);
}

}  // namespace

class ExecForwards : public ::testing::TestWithParam<int> {};

TEST_P(ExecForwards, SignalToRedlockReachesCommandThenLockIsReleased) {
  const int sig = GetParam();
  const std::string name = name_of(sig);
  Fixture f;
  // CMD traps the signal, records it, and only exits (with 3) when told,
  // so the test can see that the lock stays held until CMD is done. Its
  // background sleep ignores INT and QUIT (a non-interactive shell's
  // background job), so the trap kills it explicitly.
  Child c({"exec", "job", "--", "sh",
           f.script("trap 'echo " + name +
                    " >> \"$D/got\"; kill $SP; while [ ! -e \"$D/go\" ]; do sleep 0.02; done; "
                    "exit 3' " +
                    name +
                    "\n"
                    "sleep 30 & SP=$!\n"
                    "echo $$ > \"$D/pid\"\n"
                    "wait\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  ASSERT_FALSE(ignores_signal(c.pid(), sig)) << "the test's redlock must not start with SIG" << name << " ignored";
  ASSERT_TRUE(key_exists(f.redis, lock_key("job")));

  c.signal(sig);
  double t = seconds_until_file(f.path("got"), Seconds(3));
  ASSERT_GE(t, 0) << "SIG" << name << " never reached CMD: " << c.err_so_far();
  EXPECT_LT(t, 1.0);
  EXPECT_TRUE(eventually([&] { return read_file(f.path("got")) == name + "\n"; }, Seconds(1)))
      << read_file(f.path("got"));
  // redlock waits for CMD, holding the lock meanwhile.
  sleep_for(0.2);
  EXPECT_TRUE(c.alive());
  EXPECT_TRUE(key_exists(f.redis, lock_key("job")));

  write_file(f.path("go"), "");
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.signal, 0) << "a command that caught it chose its own status, which is passed on";
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_file(f.path("got")), name + "\n") << "delivered once";
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

INSTANTIATE_TEST_SUITE_P(Exec, ExecForwards, ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "SIG" + name_of(param_info.param);
                         });

namespace {

// A sleeping command under exec (its group stopped first if `stopped`), then
// `sig` to redlock: the command dies of it, and exec, the lock released,
// ends by that same signal (a shell sees 128+sig), as timeout(1) does.
void expect_forwarded_signal_ends_it(int sig, bool stopped) {
  Fixture f;
  // The pid is written once sleep runs: dash starts a command with vfork,
  // and a SIGSTOP that catches the child before its exec leaves the shell
  // waiting in state D, never T.
  Child c({"exec", "job", "--", "sh", f.script("sleep 30 &\necho $$ > \"$D/pid\"\nwait $!\n")}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  if (stopped) {
    ASSERT_EQ(::kill(-pid, SIGSTOP), 0);
    ASSERT_TRUE(eventually([&] { return process_state(pid) == 'T'; }, Seconds(3)));
  }
  c.signal(sig);
  Result r = c.wait(Seconds(5));
  EXPECT_EQ(r.signal, sig) << r.err;
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

}  // namespace

TEST(ExecSignals, CommandKilledByForwardedSignalGivesItsStatus) {
  expect_forwarded_signal_ends_it(SIGHUP, false);
}

// A stopped command (Ctrl-Z inside it, kill -STOP) still acts on the stop
// signal forwarded to it: it gets SIGCONT along, or redlock would hold and
// renew the lock until someone thawed it.
TEST(ExecSignals, AStoppedCommandWakesUpForTheForwardedSignal) {
  expect_forwarded_signal_ends_it(SIGTERM, true);
}

TEST(ExecSignals, GrandchildrenDieWithTheForwardedSignal) {
  Fixture f;
  // Background jobs and a foreground pipeline: all in CMD's process group.
  Child c({"exec", "job", "--", "sh",
           f.script("sleep 60 & echo $! > \"$D/g1\"\n"
                    "sleep 61 & echo $! > \"$D/g2\"\n"
                    "echo $$ > \"$D/pid\"\n"
                    "sleep 62 | sleep 63\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t g1 = wait_for_pid(f.path("g1"));
  pid_t g2 = wait_for_pid(f.path("g2"));
  f.reaper.pid(g1);
  f.reaper.pid(g2);
  // sh, two background sleeps and the two pipeline sleeps.
  ASSERT_TRUE(eventually([&] { return group_members(pid).size() == 5; }, Seconds(3))) << group_members(pid).size();
  ASSERT_TRUE(process_alive(g1));

  c.signal(SIGTERM);
  Result r = c.wait(Seconds(5));
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  EXPECT_TRUE(eventually([&] { return !process_alive(g1) && !process_alive(g2); }, Seconds(1)));
  EXPECT_TRUE(eventually([&] { return group_members(pid).empty(); }, Seconds(1)))
      << group_members(pid).size() << " processes left in CMD's group";
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecSignals, SigkillToRedlockKillsCommandAndTheLockFreesWithinItsTtl) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "job", "--", "sh", f.script("echo $$ > \"$D/pid\"\nexec sleep 30\n")}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  sleep_for(0.3);
  ASSERT_TRUE(process_alive(pid));
  ASSERT_TRUE(key_exists(f.redis, lock_key("job")));

  const double killed_at = now_seconds();
  c.signal(SIGKILL);
  double gone = seconds_until_gone(pid, Seconds(5));
  EXPECT_GE(gone, 0) << "CMD outlived redlock's SIGKILL";
  EXPECT_LT(gone, 1.0);
  Result r = c.wait(Seconds(5));
  EXPECT_EQ(r.status, 128 + SIGKILL);
  // Nobody released it; it expires by itself within the TTL.
  EXPECT_LE(f.redis.cmd({"PTTL", lock_key("job")}).integer, 3000);
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(4)));
  EXPECT_LT(now_seconds() - killed_at, 3.6);
}

// Safety promise 5 says CMD never runs unlocked, and CMD runs in its own
// process group so that grandchildren share its fate; PR_SET_PDEATHSIG
// alone only reaches CMD itself.
TEST(ExecSignals, SigkillToRedlockAlsoKillsGrandchildren) {
  Fixture f;
  Child c({"exec", "--ttl", "3s", "job", "--", "sh",
           f.script("sleep 60 & echo $! > \"$D/g1\"\n"
                    "echo $$ > \"$D/pid\"\n"
                    "sleep 61 | sleep 62\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t g1 = wait_for_pid(f.path("g1"));
  f.reaper.pid(g1);
  ASSERT_TRUE(eventually([&] { return group_members(pid).size() == 4; }, Seconds(3))) << group_members(pid).size();

  c.signal(SIGKILL);
  (void)c.wait(Seconds(5));
  EXPECT_GE(seconds_until_gone(pid, Seconds(2)), 0) << "CMD outlived redlock's SIGKILL";
  EXPECT_TRUE(eventually([&] { return group_members(pid).empty(); }, Seconds(1)))
      << group_members(pid).size() << " processes of CMD's group still run after redlock was killed "
      << "(the lock expires within 3 s, they go on unlocked)";
  EXPECT_TRUE(eventually([&] { return !process_alive(g1); }, Seconds(0.5)));
}

// A SIGKILL to redlock's whole process group (timeout -s KILL, kill -9
// %job) reaches whatever of redlock's own is in that group at once; CMD's
// group must still get its SIGKILL, or it runs on unlocked once the TTL
// frees the lock.
TEST(ExecSignals, SigkillToRedlocksWholeGroupStillKillsTheCommandsGroup) {
  Fixture f;
  // setsid: redlock leads a group of its own, as under timeout(1) or a shell's job control.
  Child c({redlock_binary(), "exec", "--ttl", "3s", "job", "--", "sh",
           f.script("sleep 60 & echo $! > \"$D/g1\"\n"
                    "echo $$ > \"$D/pid\"\n"
                    "sleep 61\n")},
          f.env(), "/usr/bin/setsid");
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  pid_t g1 = wait_for_pid(f.path("g1"));
  f.reaper.pid(g1);
  ASSERT_TRUE(eventually([&] { return group_members(pid).size() == 3; }, Seconds(3))) << group_members(pid).size();
  ASSERT_EQ(getpgid(c.pid()), c.pid()) << "redlock does not lead its own group: the test proves nothing";

  ASSERT_EQ(::kill(-c.pid(), SIGKILL), 0);
  (void)c.wait(Seconds(5));
  EXPECT_TRUE(eventually([&] { return group_members(pid).empty(); }, Seconds(1)))
      << group_members(pid).size() << " processes of CMD's group still run after redlock's group was killed "
      << "(the lock expires within 3 s, they go on unlocked)";
}

namespace {

// What a wait prints after the line it starts with (which names the holder).
std::string after_waiting_line(const std::string& err) {
  const size_t nl = err.find('\n');
  return nl != std::string::npos && err.substr(0, nl).find("; waiting ") != std::string::npos ? err.substr(nl + 1)
                                                                                              : err;
}

// Holds `job` from outside, starts a waiting exec, interrupts it with `sig`.
void interrupt_waiting_exec(int sig) {
  Fixture f;
  Result holder = run({"acquire", "--ttl", "30s", "job"}, f.env());
  ASSERT_EQ(holder.status, 0) << holder.err;
  std::string token = holder.out.substr(0, holder.out.find('\n'));

  Child c({"exec", "--wait", "30s", "job", "--", "sh", "-c", "touch \"$D/ran\""}, f.env());
  ASSERT_FALSE(ignores_signal(c.pid(), sig)) << "the test's redlock must not start with the signal ignored";
  // Waiting: subscribed to the release channel (or, failing that, some time passed).
  (void)await_waiters(f.redis, "job", 1, Seconds(3));
  sleep_for(0.3);
  ASSERT_TRUE(c.alive()) << c.err_so_far();

  c.signal(sig);
  Result r = c.wait(Seconds(5));
  EXPECT_EQ(r.signal, sig) << r.err;
  EXPECT_LT(r.seconds, 3.0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(after_waiting_line(r.err), "");
  const std::string last = after_waiting_line(r.err);
  EXPECT_EQ(std::count(last.begin(), last.end(), '\n'), 1) << r.err;
  sleep_for(0.3);
  EXPECT_FALSE(file_exists(f.path("ran"))) << "CMD started after the interrupt";
  // The holder's lock is untouched.
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
}

}  // namespace

TEST(ExecSignals, WaitingExecInterruptedBySigintExits130WithoutRunningCommand) {
  interrupt_waiting_exec(SIGINT);
}

TEST(ExecSignals, WaitingExecInterruptedBySigtermEndsByItWithoutRunningCommand) {
  interrupt_waiting_exec(SIGTERM);
}

// A stop signal at any moment of start-up (before, during or after the
// acquire, or while CMD starts) either keeps CMD from starting or reaches
// it: CMD never runs to its end, and the lock is never left held.
TEST(ExecSignals, StopSignalDuringStartUpIsNeverLost) {
  Fixture f;
  // Start-up (exec, connect, acquire, fork) takes a few milliseconds here:
  // the delays cover before, during and after it.
  const std::vector<double> delays_ms = {0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 15, 25};
  for (size_t i = 0; i < delays_ms.size(); ++i) {
    std::string done = f.path("done" + std::to_string(i));
    Child c({"exec", "job", "--", "sh", "-c", "sleep 0.4; touch \"" + done + "\""}, f.env());
    sleep_for(delays_ms[i] / 1000);
    c.signal(SIGTERM);
    Result r = c.wait(Seconds(5));
    EXPECT_EQ(r.signal, SIGTERM) << "delay " << delays_ms[i] << " ms: " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << "delay " << delays_ms[i] << " ms";
  }
  sleep_for(0.5);
  for (size_t i = 0; i < delays_ms.size(); ++i) {
    EXPECT_FALSE(file_exists(f.path("done" + std::to_string(i))))
        << "delay " << delays_ms[i] << " ms: CMD ran to its end";
  }
}

// Redis being slow or gone never delays forwarding a signal or reaping CMD.
TEST(ExecSignals, ForwardingAndReapingStayPromptWhileRedisIsStopped) {
  Fixture f;
  // A --redis-timeout well beyond the bounds below: forwarding that waited for
  // Redis would take that long, which a loaded machine's delays do not.
  Child c({"exec", "--redis-timeout", "3s", "job", "--", "sh",
           f.script("trap 'echo got > \"$D/got\"; exit 3' TERM\n"
                    "echo $$ > \"$D/pid\"\n"
                    "sleep 30 & wait\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  f.redis.pause();
  const double sent_at = now_seconds();
  c.signal(SIGTERM);
  double t = seconds_until_file(f.path("got"), Seconds(5));
  Result r = c.wait(Seconds(15));
  const double exited_after = now_seconds() - sent_at;
  f.redis.resume();
  EXPECT_GE(t, 0) << r.err;
  EXPECT_LT(t, 1.5) << "forwarding waited for Redis";
  // CMD's status, even though the release could not reach Redis (which is said on stderr).
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_LT(exited_after, 8.0) << "the release waits for one --timeout, not more";
  EXPECT_NE(r.err, "");
  EXPECT_EQ(r.out, "");
}

TEST(ExecSignals, CommandEndingWhileRedisIsStoppedIsReapedPromptly) {
  Fixture f;
  Child c({"exec", "--redis-timeout", "300ms", "job", "--", "sh",
           f.script("echo $$ > \"$D/pid\"\n"
                    "while [ ! -e \"$D/go\" ]; do sleep 0.02; done\n"
                    "exit 6\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  f.redis.pause();
  write_file(f.path("go"), "");
  ASSERT_GE(seconds_until_gone(pid, Seconds(3)), 0);
  const double ended_at = now_seconds();
  Result r = c.wait(Seconds(10));
  const double exited_after = now_seconds() - ended_at;
  f.redis.resume();
  EXPECT_EQ(r.status, 6) << r.err;
  EXPECT_LT(exited_after, 2.5);
  EXPECT_NE(r.err, "") << "the failed release is reported";
  EXPECT_EQ(r.out, "");
}

// The final release is bounded by --timeout, but a stop signal during it
// ends redlock at once; the lock then frees itself within its TTL.
class ExecReleaseInterrupted : public ::testing::TestWithParam<int> {};

TEST_P(ExecReleaseInterrupted, StopSignalDuringTheFinalReleaseEndsRedlockAtOnce) {
  const int sig = GetParam();
  Fixture f;
  Child c({"--redis-timeout", "5s", "exec", "--ttl", "3s", "job", "--", "sh",
           f.script("echo $$ > \"$D/pid\"\n"
                    "while [ ! -e \"$D/go\" ]; do sleep 0.02; done\n"
                    "exit 0\n")},
          f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  ASSERT_FALSE(ignores_signal(c.pid(), sig));
  f.redis.pause();
  write_file(f.path("go"), "");
  ASSERT_GE(seconds_until_gone(pid, Seconds(3)), 0) << c.err_so_far();
  sleep_for(0.3);  // CMD is reaped and the release is on its way; its answer will not come
  ASSERT_TRUE(c.alive());
  const double sent_at = now_seconds();
  c.signal(sig);
  Result r = c.wait(Seconds(10));
  const double took = now_seconds() - sent_at;
  f.redis.resume();
  EXPECT_EQ(r.signal, sig) << r.err;
  EXPECT_LT(took, 0.5) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIG" + name_of(sig) + " while releasing job"), std::string::npos) << r.err;
  // Nothing stays held beyond the TTL (renewed at most 3 s before the signal).
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(4)));
}

INSTANTIATE_TEST_SUITE_P(Exec, ExecReleaseInterrupted, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const auto& param_info) { return name_of(param_info.param); });

namespace {

// SigIgn of CMD (grep reading its own status) when redlock is started by
// `sh -c "<prelude> exec redlock exec job -- grep ..."`.
unsigned long long command_ignores(Fixture& f, const std::string& prelude) {
  Child c({"-c", prelude + " exec \"$0\" exec job -- grep ^SigIgn: /proc/self/status", redlock_binary()}, f.env(),
          "sh");
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 0) << r.err;
  const size_t at = r.out.find("SigIgn:");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no SigIgn line: " << r.out;
    return 0;
  }
  return std::stoull(r.out.substr(at + 7), nullptr, 16);
}

bool has(unsigned long long mask, int sig) {
  return ((mask >> (sig - 1)) & 1ULL) != 0;
}

}  // namespace

// CMD gets the signal dispositions redlock was started with, as under
// flock(1): `nohup redlock exec …` leaves CMD immune to SIGHUP, and the
// SIGPIPE redlock ignores for itself does not leak into CMD.
TEST(ExecSignals, CommandKeepsTheSignalsRedlockWasStartedWithIgnored) {
  Fixture f;
  const unsigned long long plain = command_ignores(f, "");
  EXPECT_FALSE(has(plain, SIGHUP));
  EXPECT_FALSE(has(plain, SIGPIPE)) << "redlock's own SIGPIPE ignore leaked into CMD";
  const unsigned long long nohup = command_ignores(f, "trap '' HUP;");
  EXPECT_TRUE(has(nohup, SIGHUP)) << "CMD lost the SIGHUP ignore redlock was started with";
  EXPECT_FALSE(has(nohup, SIGPIPE));
  const unsigned long long pipe = command_ignores(f, "trap '' PIPE;");
  EXPECT_TRUE(has(pipe, SIGPIPE)) << "CMD lost the SIGPIPE ignore redlock was started with";
}
