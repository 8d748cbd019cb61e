// Waiting for a lock (--wait) on one real redis-server: woken by a release or
// an expiry, bounded by the wait, quiet while idle, ended by signals.

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "lock_support.hpp"

using namespace redlock::test;

namespace {

// What a wait prints after the line it starts with (which names the holder).
std::string after_waiting_line(const std::string& err) {
  const size_t nl = err.find('\n');
  return nl != std::string::npos && err.substr(0, nl).find("; waiting ") != std::string::npos ? err.substr(nl + 1)
                                                                                              : err;
}

class Wait : public WithRedis {};

// Scripts run and the commands they ran inside, from one INFO.
struct ScriptCounts {
  long long scripts = 0;
  long long inner = 0;
};
ScriptCounts script_counts(const RedisServer& redis) {
  std::istringstream in(redis.cmd({"INFO", "commandstats"}).str);
  ScriptCounts c;
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(":calls=");
    if (line.rfind("cmdstat_", 0) != 0 || at == std::string::npos || line.rfind("cmdstat_info:", 0) == 0) {
      continue;
    }
    const long long calls = std::stoll(line.substr(at + 7));
    const bool script = line.rfind("cmdstat_eval:", 0) == 0 || line.rfind("cmdstat_evalsha:", 0) == 0;
    (script ? c.scripts : c.inner) += calls;
  }
  return c;
}

}  // namespace

// ---------------------------------------------------------------- waiting

TEST_F(Wait, WaiterWakesSoonAfterARelease) {
  std::string holder = take("w", {"--ttl", "30s"});
  Child waiter({"acquire", "w", "--wait", "10s", "--ttl", "10s"}, env());
  await_waiter("w", waiter);
  Result released = rl({"release", "w", "--token", holder});
  ASSERT_EQ(released.status, 0);
  const double done = now_seconds();
  Result r = waiter.wait(Seconds(15));
  ASSERT_EQ(r.status, 0) << r.err;
  // Measured from the release's end: on a loaded machine starting the
  // releasing redlock alone can take longer than the bound. A waiter that
  // slept to its next try instead would take up to half a second more.
  EXPECT_LT(now_seconds() - done, 0.3) << "from the release to the waiter holding the lock";
  std::string token = first_line(r.out);
  EXPECT_NE(token, holder);
  EXPECT_EQ(hget(key("w"), "token"), token);
}

TEST_F(Wait, WaiterWakesSoonAfterTheHolderExpires) {
  take("x", {"--ttl", "1500ms"});
  Child waiter({"acquire", "x", "--wait", "10s", "--ttl", "10s"}, env());
  await_waiter("x", waiter);
  const long long left = pttl(key("x"));
  const double expiry = now_seconds() + static_cast<double>(left) / 1000.0;
  ASSERT_GT(left, 0);
  Result r = waiter.wait(Seconds(15));
  const double done = now_seconds();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(done, expiry - 0.05) << "took the lock before it expired";
  EXPECT_LT(done, expiry + 0.3) << "slow to notice the expiry";
  EXPECT_EQ(hget(key("x"), "token"), first_line(r.out));
}

TEST_F(Wait, GivesUpWhenTheWaitRunsOut) {
  take("held", {"--ttl", "30s"});
  Result r = rl({"acquire", "held", "--wait", "1s"});
  EXPECT_EQ(r.status, 75);
  EXPECT_GE(r.seconds, 0.9);
  EXPECT_LT(r.seconds, 3.0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(one_line(after_waiting_line(r.err))) << r.err;
}

TEST_F(Wait, ZeroIsExactlyOneTry) {
  take("once", {"--ttl", "30s"});
  long long before = redis.calls("evalsha") + redis.calls("eval");
  Result r = rl({"acquire", "once", "--wait", "0"});
  EXPECT_EQ(r.status, 75);
  EXPECT_LT(r.seconds, 1.0);
  EXPECT_EQ(redis.calls("evalsha") + redis.calls("eval"), before + 1);
  EXPECT_EQ(waiters(redis, "once"), 0);
}

TEST_F(Wait, AnIdleFairWaiterSendsOnlyItsHeartbeat) {
  take("idle", {"--ttl", "60s"});
  Child waiter({"acquire", "idle", "--wait", "30s"}, env());
  await_waiter("idle", waiter);
  const long long scripts = redis.calls("evalsha") + redis.calls("eval");
  sleep_for(2.5);
  EXPECT_TRUE(waiter.alive());
  // One try every 0.5 s keeps its place in line: about 5, never a spin.
  EXPECT_LE(redis.calls("evalsha") + redis.calls("eval") - scripts, 7);
  waiter.signal(SIGTERM);
  EXPECT_EQ(waiter.wait(Seconds(5)).signal, SIGTERM);
}

TEST_F(Wait, AHeartbeatInLineWritesOnlyItsEntryAndLease) {
  // A waiter already in line keeps its ticket: its heartbeat rewrites its
  // entry (the deadline) and its lease, not its place, and reads the line's
  // expiry once for the four keys. Near the head, where the lease is short,
  // that was 27 commands inside its script, and is 21.
  take("beat", {"--ttl", "60s"});
  Child waiter({"acquire", "beat", "--wait", "30s"}, env());
  await_waiter("beat", waiter);
  const ScriptCounts before = script_counts(redis);
  ASSERT_TRUE(eventually([&] { return script_counts(redis).scripts - before.scripts >= 3; }, Seconds(5)));
  const ScriptCounts after = script_counts(redis);
  const long long beats = after.scripts - before.scripts;
  EXPECT_LE(after.inner - before.inner, beats * 21) << redis.cmd({"INFO", "commandstats"}).str;
  waiter.signal(SIGTERM);
  EXPECT_EQ(waiter.wait(Seconds(5)).signal, SIGTERM);
}

TEST_F(Wait, AnIdleUnfairWaiterSendsNoCommands) {
  take("idle", {"--ttl", "60s"});
  Child waiter({"acquire", "idle", "--unfair", "--wait", "30s"}, env());
  await_waiter("idle", waiter);
  const long long scripts = redis.calls("evalsha") + redis.calls("eval");
  const long long all = redis.commands_run();
  sleep_for(2.5);
  EXPECT_TRUE(waiter.alive());
  EXPECT_EQ(redis.calls("evalsha") + redis.calls("eval"), scripts);
  EXPECT_EQ(redis.commands_run(), all) << redis.cmd({"INFO", "commandstats"}).str;
  waiter.signal(SIGTERM);
  EXPECT_EQ(waiter.wait(Seconds(5)).signal, SIGTERM);
}

TEST_F(Wait, SigintEndsTheWaitBySigintAndTakesNothing) {
  std::string holder = take("int", {"--ttl", "30s"});
  Child waiter({"acquire", "int", "--wait", "inf"}, env());
  await_waiter("int", waiter);
  const double start = now_seconds();
  waiter.signal(SIGINT);
  Result r = waiter.wait(Seconds(5));
  EXPECT_EQ(r.signal, SIGINT);
  EXPECT_LT(now_seconds() - start, 1.0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(after_waiting_line(r.err))) << r.err;
  EXPECT_EQ(hget(key("int"), "token"), holder);
  EXPECT_EQ(hget(key("int"), "count"), "1");
  // Once the holder lets go, nobody (no leftover of the waiter) takes it.
  ASSERT_EQ(rl({"release", "int", "--token", holder}).status, 0);
  sleep_for(0.3);
  EXPECT_FALSE(exists(key("int")));
  EXPECT_EQ(waiters(redis, "int"), 0);
}

TEST_F(Wait, SigtermEndsTheWaitBySigtermAndTakesNothing) {
  std::string holder = take("term", {"--ttl", "30s"});
  Child waiter({"acquire", "term", "--wait", "20s"}, env());
  await_waiter("term", waiter);
  const double start = now_seconds();
  waiter.signal(SIGTERM);
  Result r = waiter.wait(Seconds(5));
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(now_seconds() - start, 1.0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(after_waiting_line(r.err))) << r.err;
  EXPECT_EQ(hget(key("term"), "token"), holder);
  ASSERT_EQ(rl({"release", "term", "--token", holder}).status, 0);
  sleep_for(0.3);
  EXPECT_FALSE(exists(key("term")));
}
