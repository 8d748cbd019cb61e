// --hold-at-least D (ShedLock's lockAtLeastFor): one run per schedule even
// when hosts' clocks and cron start times differ. The lock stays held until
// D after it was taken, under no token, whether the command ends well, is
// stopped, or redlock itself is killed; exec exits at once with the
// command's status. And exec's end drops its token's whole hold.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exec_support.hpp"

using namespace redlock::test;

namespace {

long long pttl(const RedisServer& redis, const std::string& name) {
  return redis.cmd({"PTTL", lock_key(name)}).integer;
}

std::string field(const RedisServer& redis, const std::string& name, const std::string& f) {
  return redis.cmd({"HGET", lock_key(name), f}).str;
}

}  // namespace

TEST(HoldAtLeast, ExecExitsAtOnceAndTheLockStaysHeldUnderNoToken) {
  ExecFixture f;
  const Env env = f.env();
  Result r = run({"exec", "--ttl", "1s", "--hold-at-least", "4s", "job", "--", "sh", "-c",
                  "echo \"$REDLOCK_TOKEN\" >\"$D/token\"; exit 3"},
                 env);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_LT(r.seconds, 2.0) << "exec must not sleep out the minimum hold";
  ASSERT_TRUE(key_exists(f.redis, lock_key("job")));
  EXPECT_GT(pttl(f.redis, "job"), 1500);  // more than the 1s TTL: the minimum hold
  EXPECT_LE(pttl(f.redis, "job"), 4000);
  EXPECT_EQ(field(f.redis, "job", "token"), "");

  // Another host's cron, a moment later: busy.
  Result again = run({"exec", "--hold-at-least", "4s", "job", "--", "touch", f.path("ran")}, env);
  EXPECT_EQ(again.status, 75);
  EXPECT_NE(again.err.find("held by"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("(it finished; --hold-at-least keeps the lock)"), std::string::npos) << again.err;
  EXPECT_FALSE(file_exists(f.path("ran")));

  // The finished holder's token neither releases nor renews it.
  std::string token = read_file(f.path("token"));
  token = token.substr(0, token.find('\n'));
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(run({"release", "--token", token, "job"}, env).status, 1);
  EXPECT_EQ(run({"renew", "--token", token, "--ttl", "1m", "job"}, env).status, 1);
  EXPECT_EQ(run({"acquire", "--token", token, "job"}, env).status, 75);

  // status: held for its minimum hold, with the finished holder's details.
  Result table = run({"status", "job"}, env);
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("held(min-hold)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("sh -c"), std::string::npos) << table.out;
  Result json = run({"status", "--json", "job"}, env);
  ASSERT_EQ(json.status, 0) << json.err;
  auto j = nlohmann::json::parse(json.out).at(0);
  EXPECT_EQ(j.at("state"), "held");
  EXPECT_EQ(j.at("kept"), true);
  EXPECT_GT(j.at("finished_ms").get<long long>(), 0);
  EXPECT_GT(j.at("pid").get<long long>(), 0);
  EXPECT_NE(j.at("cmd").get<std::string>().find("sh -c"), std::string::npos);

  // Free once the minimum hold is over.
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(6)));
  EXPECT_EQ(run({"exec", "job", "--", "touch", f.path("ran")}, env).status, 0);
  EXPECT_TRUE(file_exists(f.path("ran")));
}

TEST(HoldAtLeast, ACommandThatCouldNotBeRunReleasesAtOnceAndSaysSo) {
  // A host with a missing script took the period's slot, and the others
  // skipped theirs (silently under -q).
  ExecFixture f;
  write_file(f.path("not-executable"), "#!/bin/sh\n", 0644);
  for (const auto& [cmd, status] : {std::pair<std::string, int>{f.path("missing.sh"), 127},
                                    std::pair<std::string, int>{f.path("not-executable"), 126}}) {
    Result r = run({"-q", "exec", "--hold-at-least", "1m", "job", "--", cmd}, f.env());
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_NE(r.err.find("the command could not be run: job is released at once, not kept for --hold-at-least"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << cmd;
  }
  // A command that ran and failed is the period's run, whatever its status.
  EXPECT_EQ(run({"exec", "--hold-at-least", "1m", "job", "--", "sh", "-c", "exit 127"}, f.env()).status, 127);
  EXPECT_TRUE(key_exists(f.redis, lock_key("job")));
}

TEST(HoldAtLeast, AHoldAlreadyOverReleasesAsUsual) {
  ExecFixture f;
  Result r = run({"exec", "--hold-at-least", "100ms", "job", "--", "sleep", "0.3"}, f.env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(HoldAtLeast, WithoutItTheLockIsFreeTheMomentTheJobEnds) {
  // The control: what the README's old cron recipe did.
  ExecFixture f;
  EXPECT_EQ(run({"exec", "job", "--", "true"}, f.env()).status, 0);
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(HoldAtLeast, ASigtermedJobStillKeepsItsMinimumHold) {
  ExecFixture f;
  Child c(
      {"exec", "--ttl", "1s", "--hold-at-least", "5s", "job", "--", "sh", "-c", "echo $$ >\"$D/pid\"; exec sleep 30"},
      f.env());
  const pid_t cmd = wait_for_pid(f.path("pid"));
  ASSERT_GT(cmd, 0);
  f.reaper.group(cmd);
  c.signal(SIGTERM);
  Result r = c.wait(Seconds(20));
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  ASSERT_TRUE(key_exists(f.redis, lock_key("job")));
  EXPECT_EQ(field(f.redis, "job", "token"), "");
  EXPECT_GT(pttl(f.redis, "job"), 2000);
}

TEST(HoldAtLeast, AKilledRedlockLeavesTheLockHeldForItsMinimumHold) {
  ExecFixture f;
  Child c(
      {"exec", "--ttl", "1s", "--hold-at-least", "6s", "job", "--", "sh", "-c", "echo $$ >\"$D/pid\"; exec sleep 30"},
      f.env());
  const pid_t cmd = wait_for_pid(f.path("pid"));
  ASSERT_GT(cmd, 0);
  f.reaper.group(cmd);
  c.signal(SIGKILL);
  (void)c.wait(Seconds(10));
  // With a 1s TTL and nobody renewing, only the minimum hold keeps it.
  ASSERT_TRUE(key_exists(f.redis, lock_key("job")));
  EXPECT_GT(pttl(f.redis, "job"), 3000);
  EXPECT_EQ(run({"acquire", "job"}, f.env()).status, 75);
}

TEST(HoldAtLeast, ReleaseKeepsTheLockUntilTheHoldMeasuredFromWhenItWasTaken) {
  ExecFixture f;
  const Env env = f.env();
  Result a = run({"acquire", "--ttl", "1m", "job"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = a.out.substr(0, a.out.find('\n'));
  Result r = run({"release", "--hold-at-least", "3s", "--token", token, "job"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_LT(r.seconds, 2.0);
  ASSERT_TRUE(key_exists(f.redis, lock_key("job")));
  EXPECT_EQ(field(f.redis, "job", "token"), "");
  EXPECT_GT(pttl(f.redis, "job"), 1000);
  EXPECT_LE(pttl(f.redis, "job"), 3000);  // from the acquire, not from the release; never the 1m TTL
  EXPECT_EQ(run({"release", "--token", token, "job"}, env).status, 1);
  EXPECT_EQ(run({"acquire", "job"}, env).status, 75);
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(5)));
}

TEST(HoldAtLeast, ReleaseOfAReenteredLockDropsOneLevelAsBefore) {
  ExecFixture f;
  const Env env = f.env();
  Result a = run({"acquire", "job"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = a.out.substr(0, a.out.find('\n'));
  ASSERT_EQ(run({"acquire", "--token", token, "job"}, env).status, 0);
  EXPECT_EQ(run({"release", "--hold-at-least", "1m", "--token", token, "job"}, env).status, 0);
  EXPECT_EQ(field(f.redis, "job", "token"), token);
  EXPECT_EQ(field(f.redis, "job", "count"), "1");
}

TEST(HoldAtLeast, OnlyAPlainLockHasAMinimumHold) {
  ExecFixture f;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"exec", "--hold-at-least", "1m", "--limit", "2", "job", "--", "true"},
           {"exec", "--hold-at-least", "1m", "--shared", "job", "--", "true"},
           {"exec", "--hold-at-least", "soon", "job", "--", "true"},
           {"release", "--hold-at-least", "-1s", "--token", "t", "job"},
       }) {
    Result r = run(args, f.env());
    EXPECT_EQ(r.status, 64) << args[2];
    EXPECT_NE(r.err.find("--hold-at-least"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

// A revoked run is not the period's run: its release keeps no minimum hold.
TEST(HoldAtLeast, ARevokedRunGivesTheLockBackAtOnce) {
  ExecFixture f;
  Child holder({"exec", "--ttl", "60s", "--hold-at-least", "60s", "job", "--", "sh", f.script(k_term_recorder)},
               f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_revoke_listeners(f.redis, "job")) << holder.err_so_far();
  Result r = run({"revoke", "job", "--grace", "5s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << "revoke's 0 means free";
}

TEST(HoldAtLeast, ReplaceAgainstAHoldAtLeastRunRuns) {
  ExecFixture f;
  Child old({"exec", "--ttl", "60s", "--hold-at-least", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << old.err_so_far();
  ASSERT_TRUE(await_revoke_listeners(f.redis, "job")) << old.err_so_far();
  Result r =
      run({"exec", "--on-busy", "replace", "--kill-after", "2s", "job", "--", "echo", "new run"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "new run\n");
  Result o = old.wait(Seconds(20));
  EXPECT_EQ(o.status, 74) << o.err;
}

TEST(ExecEnd, DropsLevelsNestedAcquiresLeftWithAWarning) {
  ExecFixture f;
  Env env = f.env();
  env["RL"] = redlock_binary();
  Result r =
      run({"exec", "e1", "--", "sh", "-c", "\"$RL\" acquire e1 >/dev/null && \"$RL\" acquire e1 >/dev/null"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("2 nested levels of e1"), std::string::npos) << r.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("e1")));
}

TEST(ExecEnd, ANestedExecThatReleasedItsLevelLeavesNothingToWarnAbout) {
  ExecFixture f;
  Env env = f.env();
  env["RL"] = redlock_binary();
  // The nested exec drops only its own level: the outer one still holds e1.
  Result r = run({"exec", "e1", "--", "sh", "-c", "\"$RL\" exec e1 -- true && \"$RL\" status e1 >/dev/null"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(key_exists(f.redis, lock_key("e1")));
}
