// Faults of the Redis server under a held or wanted lock: restarted empty,
// SIGSTOPped during an acquire, a wait or exec's renewals, CLIENT PAUSE, a
// held lock evicted under maxmemory, a read-only replica.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <memory>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

// What a wait prints after the line it starts with (which names the holder).
std::string after_waiting_line(const std::string& err) {
  const size_t nl = err.find('\n');
  return nl != std::string::npos && err.substr(0, nl).find("; waiting ") != std::string::npos ? err.substr(nl + 1)
                                                                                              : err;
}

bool one_line(const std::string& s) {
  return !s.empty() && std::count(s.begin(), s.end(), '\n') == 1 && s.back() == '\n';
}

// Starts exec of `job` with `options` and k_term_recorder; returns CMD's PID.
pid_t start_holder(ExecFixture& f, std::unique_ptr<Child>& exec, const std::vector<std::string>& options) {
  std::vector<std::string> args{"exec"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"job", "--", "sh", f.script(k_term_recorder)});
  exec = std::make_unique<Child>(args, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  f.reaper.group(pid);
  f.reaper.pid(wait_for_pid(f.path("grandchild")));
  EXPECT_GT(pid, 0) << exec->err_so_far();
  return pid;
}

// When the key of `job` expires, in the test's clock.
double expiry_of_job(const RedisServer& redis) {
  const double sampled = now_seconds();
  long long pttl = redis.cmd({"PTTL", lock_key("job")}).integer;
  EXPECT_GT(pttl, 0);
  return sampled + static_cast<double>(pttl) / 1000.0;
}

}  // namespace

TEST(ServerFaults, RedisRestartedEmptyWhileHeldEnds74AndRecreatesNothing) {
  ExecFixture f;
  std::unique_ptr<Child> exec;
  pid_t pid = start_holder(f, exec, {"--ttl", "3s"});
  ASSERT_GT(pid, 0);
  f.redis.kill();
  f.redis.start();  // same port, empty
  double t = seconds_until_file(f.path("term"), Seconds(5));
  EXPECT_GE(t, 0) << "CMD was not told: " << exec->err_so_far();
  EXPECT_LT(t, 1.8) << "one renewal period is 1 s";
  Result r = exec->wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_NE(r.err.find("lost the lock"), std::string::npos) << r.err;
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job"))) << "neither the renewer nor the release recreated it";
}

TEST(ServerFaults, StoppedServerDuringAcquireIs69WithinTheTimeout) {
  RedisServer redis;
  redis.pause();
  Result r = run({"acquire", "--redis-timeout", "500ms", "stopped"}, {{"REDLOCK_URL", redis.url()}});
  redis.resume();
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_GE(r.seconds, 0.4);
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(r.err)) << r.err;
}

TEST(ServerFaults, StoppedServerDuringAWaitEndsItWithinTheWaitAndTakesNothing) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "30s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  const std::string token = holder.out.substr(0, holder.out.find('\n'));
  Child waiter({"acquire", "--wait", "2s", "--redis-timeout", "300ms", "job"}, env);
  ASSERT_TRUE(await_waiters(redis, "job", 1, Seconds(3))) << waiter.err_so_far();
  redis.pause();
  Result r = waiter.wait(Seconds(10));
  redis.resume();
  EXPECT_TRUE(r.status == 75 || r.status == 69) << r.status << ": " << r.err;
  EXPECT_LT(r.seconds, 2.0 + 1.5) << "the wait and one timeout bound it";
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(one_line(after_waiting_line(r.err))) << r.err;
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
}

TEST(ServerFaults, StoppedServerDuringExecRenewalsKillsCommandBeforeTheLockExpires) {
  ExecFixture f;
  std::unique_ptr<Child> exec;
  pid_t pid = start_holder(f, exec, {"--ttl", "3s", "--redis-timeout", "300ms", "--kill-after", "500ms"});
  ASSERT_GT(pid, 0);
  sleep_for(1.2);  // past the first renewal
  const double expires_at = expiry_of_job(f.redis);
  f.redis.pause();
  const double paused_at = now_seconds();
  double gone = seconds_until_gone(pid, Seconds(8));
  const double dead_at = now_seconds();
  Result r = exec->wait(Seconds(10));
  f.redis.resume();
  ASSERT_GE(gone, 0) << "CMD still runs with Redis stopped: " << r.err;
  EXPECT_LT(dead_at, expires_at) << "CMD outlived the lock by " << dead_at - expires_at << " s";
  EXPECT_GT(dead_at - paused_at, 0.5) << "the renewals had time to retry";
  EXPECT_TRUE(file_exists(f.path("term")));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(4.5)));
}

TEST(ServerFaults, ClientPauseDuringExecRenewalsKillsCommandBeforeItsValidityEnds) {
  ExecFixture f;
  std::unique_ptr<Child> exec;
  pid_t pid = start_holder(f, exec, {"--ttl", "3s", "--redis-timeout", "300ms", "--kill-after", "500ms"});
  ASSERT_GT(pid, 0);
  sleep_for(1.2);
  const double expires_at = expiry_of_job(f.redis);
  f.redis.cmd({"CLIENT", "PAUSE", "4000", "ALL"});
  const double paused_at = now_seconds();
  double gone = seconds_until_gone(pid, Seconds(8));
  const double dead_at = now_seconds();
  Result r = exec->wait(Seconds(10));
  ASSERT_GE(gone, 0) << "CMD still runs with Redis paused: " << r.err;
  EXPECT_LT(dead_at, expires_at) << "CMD outlived its validity by " << dead_at - expires_at << " s";
  EXPECT_GT(dead_at - paused_at, 0.5);
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(8)));
}

// A client that gives up on a paused server closes its connection, and
// Redis drops a paused client's command with it: nothing is left held.
TEST(ServerFaults, ClientPauseDuringAcquireIs69AndLeavesNothingHeld) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  // Warm: the server knows redlock's scripts, so the paused request is one
  // that would take the lock (not a NOSCRIPT that would take nothing).
  Result warm = run({"acquire", "warm"}, env);
  ASSERT_EQ(warm.status, 0) << warm.err;
  redis.cmd({"CLIENT", "PAUSE", "1500", "ALL"});
  Result r = run({"acquire", "--ttl", "30s", "--redis-timeout", "300ms", "paused"}, env);
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_LT(r.seconds, 1.4);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  sleep_for(0.5);  // the pause is over (the next command waits for it anyway)
  EXPECT_FALSE(key_exists(redis, lock_key("paused")));
}

// maxmemory with an allkeys-* policy may evict a held lock: exec finds out
// at its next renewal and ends CMD with 74, as for any lost lock.
TEST(ServerFaults, EvictionOfAHeldLockEnds74) {
  ExecFixture f;
  std::unique_ptr<Child> exec;
  pid_t pid = start_holder(f, exec, {"--ttl", "3s"});
  ASSERT_GT(pid, 0);
  std::string info = f.redis.cmd({"INFO", "memory"}).str;
  auto at = info.find("used_memory:");
  ASSERT_NE(at, std::string::npos);
  const long long used = std::stoll(info.substr(at + 12));
  f.redis.cmd({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
  f.redis.cmd({"CONFIG", "SET", "maxmemory", std::to_string(used + 4 * 1024 * 1024)});
  const std::string value(256 * 1024, 'x');
  int filler = 0;
  while (key_exists(f.redis, lock_key("job")) && filler < 2000) {
    f.redis.cmd({"SET", "filler:" + std::to_string(filler++), value});
  }
  ASSERT_FALSE(key_exists(f.redis, lock_key("job"))) << "not evicted after " << filler << " fillers";
  double t = seconds_until_file(f.path("term"), Seconds(5));
  EXPECT_GE(t, 0) << exec->err_so_far();
  EXPECT_LT(t, 1.8);
  Result r = exec->wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ServerFaults, AReadOnlyReplicaIs76WithALineThatSaysSo) {
  RedisServer master;
  RedisServer replica(RedisServer::Options{.extra = {"--replicaof", "127.0.0.1", std::to_string(master.port())}});
  ASSERT_TRUE(eventually(
      [&] {
        auto role = replica.cmd({"ROLE"});
        return role.elements.size() > 3 && role.elements[3].str == "connected";
      },
      Seconds(10)));
  TempDir dir;
  Env env{{"REDLOCK_URL", replica.url()}};
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"acquire", "ro"}, {"exec", "ro", "--", "touch", dir.path() + "/ran"}}) {
    SCOPED_TRACE(args[0]);
    Result r = run(args, env);
    EXPECT_EQ(r.status, 76) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("READONLY"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(file_exists(dir.path() + "/ran"));
  EXPECT_EQ(master.cmd({"DBSIZE"}).integer, 0);
  EXPECT_EQ(replica.cmd({"DBSIZE"}).integer, 0);
}

// The request of an acquire that timed out on a stopped server runs when
// the server resumes; redlock must take it back, not leave a lock nobody
// holds for its whole TTL.
TEST(ServerFaults, AnAcquireThatTimedOutOnAStoppedServerLeavesNothingHeldOnResume) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  // Warm: the server knows redlock's scripts, so the stopped request is one
  // that takes the lock (not a NOSCRIPT that would take nothing).
  Result warm = run({"acquire", "warm"}, env);
  ASSERT_EQ(warm.status, 0) << warm.err;
  redis.pause();
  Result r = run({"acquire", "--ttl", "30s", "--redis-timeout", "300ms", "orphan"}, env);
  redis.resume();
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_TRUE(eventually([&] { return !key_exists(redis, lock_key("orphan")); }, Seconds(3)))
      << "a lock nobody holds stays for " << redis.cmd({"PTTL", lock_key("orphan")}).integer << " ms";
  EXPECT_EQ(run({"acquire", "orphan"}, env).status, 0);
}
