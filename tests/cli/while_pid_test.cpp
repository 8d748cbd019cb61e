// acquire --while-pid PID: the token at once, a keeper that renews the lock
// while PID lives, releases it when PID exits (even by SIGKILL), tells PID
// and sends it SIGTERM when the lock is lost, holds none of the caller's
// descriptors, and ends when release --token gives the lock back.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "harness.hpp"

using namespace redlock::test;

namespace {

struct Keeping {
  RedisServer redis;
  TempDir runtime;  // the keepers' files, apart from any other test's
  Env env() const {
    return {{"REDLOCK_URL", redis.url()}, {"XDG_RUNTIME_DIR", runtime.path()}, {"RL", redlock_binary()}};
  }
  bool held(const std::string& name) const { return redis.cmd({"EXISTS", lock_key(name)}).integer == 1; }
};

// A shell script run in the background with the test's environment.
std::unique_ptr<Child> script(const Keeping& s, const std::string& text) {
  return std::make_unique<Child>(std::vector<std::string>{"-c", text}, s.env(), "/bin/bash");
}

}  // namespace

TEST(WhilePid, ReturnsAtOnceFromCommandSubstitutionAndReleasesWhenTheScriptExits) {
  Keeping s;
  // If the keeper kept the $(...) pipe open, the script would hang there.
  Child sh({"-c", "tok=$(\"$RL\" acquire --while-pid $$ --ttl 30s wp) || exit 9; echo \"token $tok\"; sleep 1"},
           s.env(), "/bin/bash");
  ASSERT_TRUE(eventually([&] { return sh.out_so_far().find("token ") != std::string::npos; }, Seconds(10)))
      << sh.err_so_far();
  EXPECT_TRUE(s.held("wp"));
  Result done = sh.wait(Seconds(20));
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_LT(done.seconds, 6.0);
  // Released within moments (one renewal period is 10s here), not at the TTL.
  EXPECT_TRUE(eventually([&] { return !s.held("wp"); }, Seconds(3)));
}

TEST(WhilePid, SigkillOfTheScriptReleasesTheLock) {
  Keeping s;
  auto sh = script(s, "\"$RL\" acquire --while-pid $$ --ttl 30s wk >/dev/null || exit 9; echo held; sleep 60");
  ASSERT_TRUE(eventually([&] { return sh->out_so_far() == "held\n"; }, Seconds(10))) << sh->err_so_far();
  EXPECT_TRUE(s.held("wk"));
  sh->signal(SIGKILL);
  (void)sh->wait(Seconds(10));
  EXPECT_TRUE(eventually([&] { return !s.held("wk"); }, Seconds(3)));
}

TEST(WhilePid, ALostLockSendsTheScriptSigtermWithALine) {
  Keeping s;
  auto sh = script(s,
                   "\"$RL\" acquire --while-pid $$ --ttl 1500ms wl >/dev/null || exit 9; echo held; "
                   "for i in $(seq 100); do sleep 0.1; done; echo survived");
  ASSERT_TRUE(eventually([&] { return sh->out_so_far() == "held\n"; }, Seconds(10))) << sh->err_so_far();
  Result broken = run({"break", "wl"}, s.env());
  ASSERT_EQ(broken.status, 0) << broken.err;
  Result r = sh->wait(Seconds(10));
  EXPECT_EQ(r.signal, SIGTERM) << r.status << " " << r.out << r.err;
  EXPECT_LT(r.seconds, 6.0);
  EXPECT_EQ(r.out.find("survived"), std::string::npos);
  EXPECT_NE(r.err.find("the lock kept for pid"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sent it SIGTERM"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(WhilePid, ADaemonTheScriptStartsInheritsNothingAndHoldsNoLock) {
  Keeping s;
  // The daemon outlives the script with the script's own descriptors
  // closed; the script's end (not the daemon's) frees the lock, and the
  // script's $(...) and its caller's output end with it.
  Child sh({"-c",
            "tok=$(\"$RL\" acquire --while-pid $$ --ttl 30s wd) || exit 9; "
            "setsid sleep 20 </dev/null >/dev/null 2>&1 & echo $!"},
           s.env(), "/bin/bash");
  Result done = sh.wait(Seconds(20));
  ASSERT_EQ(done.status, 0) << done.err;
  EXPECT_LT(done.seconds, 6.0);
  const pid_t daemon = std::stoi(done.out);
  EXPECT_EQ(kill(daemon, 0), 0) << "the daemon is gone";
  EXPECT_TRUE(eventually([&] { return !s.held("wd"); }, Seconds(3)));
  (void)kill(daemon, SIGKILL);
}

TEST(WhilePid, ReleaseEndsTheKeeperAndStatusShowsWhomItKeepsFor) {
  Keeping s;
  Child watched({"30"}, {}, "/bin/sleep");
  Result a = run({"acquire", "--while-pid", std::to_string(watched.pid()), "--ttl", "900ms", "wr"}, s.env());
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = a.out.substr(0, a.out.find('\n'));
  sleep_for(1.2);  // renewed past its TTL
  EXPECT_TRUE(s.held("wr"));
  Result st = run({"status", "--json", "wr"}, s.env());
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("kept for " + std::to_string(watched.pid()) + ":"), std::string::npos) << st.out;
  Result rel = run({"release", "--token", token, "wr"}, s.env());
  EXPECT_EQ(rel.status, 0) << rel.err;
  EXPECT_FALSE(s.held("wr"));
  sleep_for(1.0);  // a keeper still renewing would find the lock gone and signal
  EXPECT_TRUE(watched.alive());
  EXPECT_FALSE(s.held("wr"));
}

TEST(WhilePid, NoSuchProcessIs64BeforeAnyTraffic) {
  Result r = run({"acquire", "--while-pid", "4194304", "k"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_NE(r.err.find("--while-pid 4194304: no such process"), std::string::npos) << r.err;
  Result bad = run({"acquire", "--while-pid", "abc", "k"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(bad.status, 64) << bad.err;
}
