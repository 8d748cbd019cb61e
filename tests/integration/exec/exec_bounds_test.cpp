// exec's time bounds: --max-runtime ends the command (124) and releases,
// even while redlock itself is stopped; --warn-after says once that it still
// runs; --jitter waits a random time before the first try.

#include <gtest/gtest.h>
#include <signal.h>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

using Fixture = ExecFixture;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace

TEST(ExecBounds, MaxRuntimeEndsTheCommandReleasesAndExits124) {
  Fixture f;
  Result r = run({"exec", "--max-runtime", "1s", "job", "--", "sh", f.script(k_term_recorder)}, f.env(), Seconds(20));
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_TRUE(file_exists(f.path("term"))) << "the command got SIGTERM, as on a lost lock";
  EXPECT_GE(r.seconds, 1.0);
  EXPECT_LT(r.seconds, 8.0) << r.err;
  EXPECT_NE(r.err.find("--max-runtime 1s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("124"), std::string::npos) << r.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << "released after the command ended";
  EXPECT_FALSE(process_alive(wait_for_pid(f.path("grandchild")))) << "nothing of the command runs on";
}

TEST(ExecBounds, MaxRuntimeKillsACommandThatIgnoresTheTermAfterKillAfter) {
  Fixture f;
  Result r = run({"exec", "--max-runtime", "500ms", "--kill-after", "1s", "job", "--", "sh", "-c",
                  "trap '' TERM; echo $$ > \"$D/pid\"; while :; do sleep 0.1; done"},
                 f.env(), Seconds(20));
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_GE(r.seconds, 1.5) << "SIGKILL waits for --kill-after";
  EXPECT_LT(r.seconds, 10.0) << r.err;
  EXPECT_NE(r.err.find("SIGKILL"), std::string::npos) << r.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecBounds, ACommandThatEndsInTimeKeepsItsOwnStatus) {
  Fixture f;
  Result r = run({"exec", "--max-runtime", "20s", "job", "--", "sh", "-c", "exit 7"}, f.env());
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ExecBounds, TheGuardEndsTheCommandAtMaxRuntimeWhileRedlockIsStopped) {
  // The lock stays valid for 30 s; only --max-runtime (1 s, then 1 s of
  // --kill-after) bounds the command while redlock cannot act.
  Fixture f;
  Child c({"exec", "--ttl", "30s", "--max-runtime", "1s", "--kill-after", "1s", "job", "--", "sh",
           f.script("echo $$ > \"$D/pid\"\nwhile :; do sleep 0.05; done\n")},
          f.env());
  const pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << c.err_so_far();
  f.reaper.group(pid);
  const double started = now_seconds();
  c.signal(SIGSTOP);
  const double gone = seconds_until_gone(pid, Seconds(15));
  const double dead_at = now_seconds();
  c.signal(SIGCONT);
  Result r = c.wait(Seconds(10));
  ASSERT_GE(gone, 0) << "the command still runs while redlock is stopped";
  EXPECT_LT(dead_at - started, 6.0) << "the guard keeps --max-runtime plus --kill-after";
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_NE(r.err.find("guard killed it"), std::string::npos) << r.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecBounds, WarnAfterSaysOnceEvenUnderQuietAndTheCommandGoesOn) {
  Fixture f;
  Result r = run({"-q", "exec", "--warn-after", "300ms", "job", "--", "sh", "-c", "sleep 1.2; exit 3"}, f.env());
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(count_of(r.err, "still runs after"), 1u) << r.err;
  EXPECT_NE(r.err.find("--warn-after 300ms"), std::string::npos) << r.err;
  Result quick = run({"-q", "exec", "--warn-after", "20s", "job", "--", "true"}, f.env());
  EXPECT_EQ(quick.status, 0);
  EXPECT_EQ(quick.err, "");
  Result silent = run({"-qq", "exec", "--warn-after", "100ms", "job", "--", "sleep", "0.5"}, f.env());
  EXPECT_EQ(silent.err, "") << "-qq says nothing at all";
}

TEST(ExecBounds, JitterWaitsBeforeTheFirstTryAndAStopSignalEndsItAtOnce) {
  Fixture f;
  Result r = run({"-v", "exec", "--jitter", "300ms", "job", "--", "true"}, f.env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("before the first try (--jitter 300ms)"), std::string::npos) << r.err;
  Child c({"-v", "exec", "--jitter", "1h", "job", "--", "touch", f.path("ran")}, f.env());
  ASSERT_TRUE(eventually([&] { return c.err_so_far().find("--jitter 1h") != std::string::npos; }, Seconds(10)));
  const double sent = now_seconds();
  c.signal(SIGTERM);
  Result stopped = c.wait(Seconds(10));
  EXPECT_EQ(stopped.signal, SIGTERM) << stopped.err;
  EXPECT_LT(now_seconds() - sent, 3.0);
  EXPECT_FALSE(file_exists(f.path("ran")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << "nothing was taken";
}

TEST(ExecBounds, AcquireTakesJitterToo) {
  Fixture f;
  Result r = run({"-v", "acquire", "--jitter", "200ms", "job"}, f.env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--jitter 200ms"), std::string::npos) << r.err;
  // The delay is below D: with D = 1 ms it can only be 0.
  for (int i = 0; i < 5; ++i) {
    Result one = run({"-v", "acquire", "--jitter", "1ms", "once" + std::to_string(i)}, f.env());
    EXPECT_EQ(one.status, 0) << one.err;
    EXPECT_NE(one.err.find("waiting 0ms before the first try (--jitter 1ms)"), std::string::npos) << one.err;
  }
}
