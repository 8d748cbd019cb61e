// redlock break: the operator frees a stuck lock, whatever its mode, on
// every server, wakes the waiters, and says whom it took the lock from.

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "exec_support.hpp"
#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

std::string this_host() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

long long subscribers(const RedisServer& redis, const std::string& name) {
  auto r = redis.cmd({"PUBSUB", "NUMSUB", "redlock:{" + name + "}:released"});
  return r.elements.size() == 2 ? r.elements[1].integer : -1;
}

}  // namespace

TEST(Break, FreesAPlainLockSaysWhomItTookItFromAndLeavesTheFenceAlone) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--json", "--ttl", "60s", "deploy"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const long long fence = json::parse(a.out)["fence"].get<long long>();
  const std::string counter = redis.cmd({"GET", "redlock:{deploy}:fence"}).str;

  Result b = run({"break", "deploy"}, env);
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(b.out.find("broke deploy: took it from " + this_host() + " pid "), 0u) << b.out;
  EXPECT_NE(b.out.find("held for "), std::string::npos) << b.out;
  EXPECT_EQ(std::count(b.out.begin(), b.out.end(), '\n'), 1) << b.out;
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{deploy}"}).integer, 0);
  EXPECT_EQ(redis.cmd({"GET", "redlock:{deploy}:fence"}).str, counter) << "break must not touch the fence counter";

  Result again = run({"acquire", "--json", "deploy"}, env);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_GT(json::parse(again.out)["fence"].get<long long>(), fence);
  // The broken holder's token no longer holds anything.
  EXPECT_EQ(run({"release", "--token", json::parse(a.out)["token"].get<std::string>(), "deploy"}, env).status, 1);
}

TEST(Break, AFreeLockExits1AndAForeignKeyExits76AndIsLeftAlone) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result free = run({"break", "nothing"}, env);
  EXPECT_EQ(free.status, 1) << free.err;
  EXPECT_TRUE(free.out.empty()) << free.out;
  EXPECT_NE(free.err.find("nothing is not held"), std::string::npos) << free.err;

  redis.cmd({"HSET", "redlock:{alien}", "token", "x", "count", "1"});
  Result foreign = run({"break", "alien"}, env);
  EXPECT_EQ(foreign.status, 76) << foreign.err;
  EXPECT_NE(foreign.err.find("not a redlock lock"), std::string::npos) << foreign.err;
  EXPECT_EQ(redis.cmd({"HGET", "redlock:{alien}", "token"}).str, "x");
}

TEST(Break, ClearsASemaphoreWithItsLimitAndNamesEveryHolderInJson) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--limit", "3", "--ttl", "60s", "pool"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--limit", "3", "--ttl", "60s", "pool"}, env).status, 0);
  Result b = run({"break", "--json", "pool"}, env);
  ASSERT_EQ(b.status, 0) << b.err;
  json j = json::parse(b.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "pool");
  EXPECT_EQ(j[0]["state"], "broken");
  EXPECT_EQ(j[0]["mode"], "semaphore");
  EXPECT_EQ(j[0]["limit"], 3);
  ASSERT_EQ(j[0]["holders"].size(), 2u);
  EXPECT_EQ(j[0]["holders"][0]["host"], this_host());
  EXPECT_LE(j[0]["holders"][0]["since_ms"].get<long long>(), j[0]["holders"][1]["since_ms"].get<long long>());
  EXPECT_EQ(j[0]["servers"][0]["state"], "broken");
  // Mode and limit are gone with it: the name can be taken in any mode now.
  EXPECT_EQ(run({"acquire", "pool"}, env).status, 0);
}

TEST(Break, ClearsTheReadersOfASharedLock) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Child r1({"exec", "--shared", "--ttl", "60s", "rw", "--", "sleep", "30"}, env);
  Child r2({"exec", "--shared", "--ttl", "60s", "rw", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"HLEN", "redlock:{rw}"}).integer >= 5; }, Seconds(10)));
  Result b = run({"break", "rw"}, env);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("broke rw (shared): took it from "), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("; "), std::string::npos) << "both readers are named: " << b.out;
  EXPECT_EQ(run({"acquire", "--ttl", "60s", "rw"}, env).status, 0) << "a writer gets in at once";
  r1.signal(SIGTERM);
  r2.signal(SIGTERM);
}

TEST(Break, WakesAWaiterAtOnceAndTheBrokenExecHolderEnds74AtItsNextRenewal) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Child holder({"exec", "--ttl", "3s", "job", "--", "sleep", "60"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", "redlock:{job}"}).integer == 1; }, Seconds(10)));
  Child waiter({"acquire", "--wait", "inf", "--ttl", "60s", "job"}, env);
  ASSERT_TRUE(eventually([&] { return subscribers(redis, "job") >= 1 || !waiter.alive(); }, Seconds(10)));
  ASSERT_TRUE(waiter.alive()) << waiter.wait().err;

  const double broke = now_seconds();
  Result b = run({"break", "job"}, env);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("(sleep 60)"), std::string::npos) << b.out;
  Result w = waiter.wait(Seconds(10));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_LT(now_seconds() - broke, 1.0) << "the waiter should wake on the break, not the old TTL";

  Result h = holder.wait(Seconds(15));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_LT(now_seconds() - broke, 1.0 + 3.0 + 1.0) << "found at the next renewal (every ttl/3)";
  EXPECT_NE(h.err.find("lost"), std::string::npos) << h.err;
  // The waiter's hold is untouched by the old holder's end.
  EXPECT_EQ(redis.cmd({"HGET", "redlock:{job}", "token"}).str, w.out.substr(0, w.out.find('\n')));
}

TEST(Break, TheBrokenExecsLastLineSaysItWasBrokenAndByWhom) {
  ExecFixture f;
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", "-c",
                "echo $$ > \"$D/pid\"; while [ ! -e \"$D/go\" ]; do sleep 0.05; done"},
               f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_revoke_listeners(f.redis, "job")) << holder.err_so_far();
  Result b = run({"break", "job"}, f.env());
  ASSERT_EQ(b.status, 0) << b.err;
  write_file(f.path("go"), "");
  Result h = holder.wait(Seconds(15));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_LT(h.seconds, 15.0) << "not at the next renewal, 20s after the start";
  std::string last = h.err.substr(0, h.err.size() - 1);
  last = last.substr(last.rfind('\n') + 1);
  EXPECT_NE(last.find("job was broken by " + this_host() + " (pid "), std::string::npos) << h.err;
  EXPECT_EQ(h.err.find("longer --ttl"), std::string::npos) << h.err;
}

TEST(Break, SeveralNamesGiveOneLineEachAndAFreeOneMakesIt1) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "a"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "b"}, env).status, 0);
  Result both = run({"break", "a", "b"}, env);
  EXPECT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(std::count(both.out.begin(), both.out.end(), '\n'), 2) << both.out;
  ASSERT_EQ(run({"acquire", "a"}, env).status, 0);
  Result some = run({"break", "a", "c"}, env);
  EXPECT_EQ(some.status, 1) << some.err;
  EXPECT_EQ(some.out.find("broke a:"), 0u) << some.out;
}

TEST(Break, SeveralNamesThatCannotBeBrokenGiveOneLineNamingEach) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  redis.cmd({"SET", lock_key("f1"), "v"});
  redis.cmd({"RPUSH", lock_key("f2"), "v"});
  ASSERT_EQ(run({"acquire", "held"}, env).status, 0);
  Result r = run({"break", "f1", "held", "f2", "free1", "free2"}, env);
  EXPECT_EQ(r.status, 76) << r.err;
  EXPECT_EQ(r.out.find("broke held:"), 0u) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const char* name : {"'f1' (a string)", "'f2' (a list)", "free1", "free2"}) {
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
  }
  EXPECT_EQ(redis.cmd({"GET", lock_key("f1")}).str, "v");

  Result free = run({"break", "free1", "free2"}, env);
  EXPECT_EQ(free.status, 1) << free.err;
  EXPECT_EQ(free.err, "redlock: free1 and free2 are not held: nothing to break\n");
}

TEST(Break, BreaksOnEveryRedlockServerAndNeedsAMajorityToAnswer) {
  Servers s(3);
  Env env = s.env();
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, env).status, 0);
  ASSERT_EQ(s.holders("job"), 3);
  Result b = run({"break", "--json", "job"}, env);
  ASSERT_EQ(b.status, 0) << b.err;
  json j = json::parse(b.out);
  ASSERT_EQ(j[0]["servers"].size(), 3u);
  for (const auto& sv : j[0]["servers"]) {
    EXPECT_EQ(sv["state"], "broken") << b.out;
  }
  EXPECT_EQ(j[0]["holders"].size(), 1u) << "one holder, seen on three servers";
  EXPECT_EQ(s.holders("job"), 0);

  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, env).status, 0);
  s[0].stop();
  Result one_down = run({"break", "job"}, env);
  EXPECT_EQ(one_down.status, 0) << one_down.err;
  EXPECT_EQ(s.holders("job"), 0);
  s[1].stop();
  Result two_down = run({"break", "job"}, env);
  EXPECT_EQ(two_down.status, 69) << two_down.err;
}

TEST(Break, ANameGivenTwiceIsBrokenOnce) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "a"}, env).status, 0);
  Result r = run({"break", "a", "a"}, env);
  EXPECT_EQ(r.status, 0) << "the second 'a' is not a free lock of its own: " << r.err;
  EXPECT_EQ(r.out.find("broke a:"), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(Break, ShowsTheHoldersCommandAsItWasTypedWithItsControlsEscaped) {
  // Each backslash of the holder's command (printf's \n, a Windows path)
  // was shown doubled: the escaping that keeps two names apart was applied
  // to commands, which are only read. Control characters stay escaped.
  // The command is short: only its first 64 bytes are kept.
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  const std::string script = "printf 'a\\tb\\n' >/dev/null; sleep 60";
  Child holder({"exec", "--ttl", "30s", "bs", "--", "sh", "-c", script, "C:\\dir", "\x1b[2J"}, env);
  ASSERT_TRUE(eventually(
      [&] {
        return redis.cmd({"EXISTS", lock_key("bs")}).integer == 1;
      },
      Seconds(10)))
      << holder.err_so_far();
  const std::string shown = "sh -c " + script + " C:\\dir \\x1b[2J";

  Result status = run({"status", "bs"}, env);
  EXPECT_EQ(status.status, 0) << status.err;
  EXPECT_NE(status.out.find(shown), std::string::npos) << status.out;
  Result busy = run({"acquire", "bs"}, env);
  EXPECT_EQ(busy.status, 75) << busy.err;
  EXPECT_NE(busy.err.find("(sh -c printf 'a\\tb\\n' >/dev/null;"), std::string::npos) << busy.err;
  Result b = run({"break", "bs"}, env);
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("(" + shown + ")"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find('\x1b'), std::string::npos) << b.out;

  holder.signal(SIGTERM);
  (void)holder.wait(Seconds(20));
}

TEST(Break, BadNamesAreRefusedBeforeAnyTraffic) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  const long long before = redis.commands_run();
  Result r = run({"break", "ok", std::string("bad\x01name")}, env);
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_EQ(run({"break"}, env).status, 64);
  EXPECT_EQ(redis.commands_run(), before);
}
