// Regression tests for holes in the lock's promises: semaphores over several
// servers, nested leases, upgrades, minority re-entries and fences across an
// empty restart. Servers that may evict a lock: doctor_test.cpp finds them,
// tests/faults/server_soak_test.cpp has a lock evicted.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec_support.hpp"
#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// The shell-quoted path of the binary under test, for CMDs that nest it.
std::string nested_redlock() {
  return "'" + redlock_binary() + "'";
}

}  // namespace

TEST(SemaphoreQuorum, PausingOneServerAtATimeNeverAdmitsMoreThanTheLimit) {
  // --limit 2 over 3 servers: with one server paused during each of three
  // acquires, each could get 2 of 3 places; counting grants on a simple
  // majority admitted all three.
  Servers s(3);
  Env env = s.env();
  int granted = 0;
  std::vector<std::string> tokens;
  for (size_t i = 0; i < 3; ++i) {
    s[i].cmd({"CLIENT", "PAUSE", "700"});  // every client (ALL is Redis 6.2's word for it)
    Result r = run({"acquire", "--limit", "2", "--ttl", "20s", "--redis-timeout", "250ms", "pool"}, env);
    if (r.status == 0) {
      ++granted;
      tokens.push_back(first_line(r.out));
    } else {
      EXPECT_EQ(r.status, 69) << r.err;  // a place on every server is needed: one is paused
    }
    // The next pause starts once this one is over.
    ASSERT_TRUE(eventually([&] { return s[i].cmd({"PING"}).str == "PONG"; }, Seconds(5)));
    struct timespec ts {
      0, 800'000'000
    };
    nanosleep(&ts, nullptr);
  }
  EXPECT_LE(granted, 2);
  // Whatever was granted, status never shows more holders than places.
  Result st = run({"status", "pool", "--json"}, env);
  if (st.status == 0) {
    EXPECT_LE(json::parse(st.out)[0]["holders"].size(), 2u) << st.out;
  }
  for (const auto& t : tokens) {
    (void)run({"release", "--token", t, "pool"}, env);
  }
  // With every server up, two places and no third.
  Result a = run({"acquire", "--limit", "2", "pool"}, env);
  Result b = run({"acquire", "--limit", "2", "pool"}, env);
  Result c = run({"acquire", "--limit", "2", "pool"}, env);
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(c.status, 75) << c.err;
}

TEST(SemaphoreQuorum, AGrantSpreadOverTooFewServersIsNotCountedByStatus) {
  // A holder with a place on only 2 of 3 servers of a --limit 2 semaphore
  // does not count: two more such holders could coexist with it.
  Servers s(3);
  Env env = s.env();
  Result a = run({"acquire", "--limit", "2", "--ttl", "20s", "--json", "pool"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string key = lock_key("pool");
  s[2].cmd({"DEL", key});
  Result st = run({"status", "pool", "--json"}, env);
  EXPECT_EQ(st.status, 1) << st.out << st.err;
  EXPECT_EQ(json::parse(st.out)[0]["state"], "free");
}

TEST(Lease, ANestedShorterTtlNeverCutsTheOuterLease) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
  // The inner exec renews with --ttl 1s for two seconds, then ends; the
  // outer holder's 30 s lease must still be there.
  Child outer({"exec", "--ttl", "30s", "nest", "--", "sh", "-c",
               nested_redlock() + " exec --ttl 1s nest -- sleep 2 && touch \"$D/inner-done\" && sleep 30"},
              env);
  ASSERT_GE(seconds_until_file(dir.path() + "/inner-done", Seconds(15)), 0) << outer.err_so_far();
  EXPECT_GT(redis.cmd({"PTTL", lock_key("nest")}).integer, 20'000);
  EXPECT_EQ(redis.cmd({"HGET", lock_key("nest"), "count"}).str, "1");
  // Past the inner TTL, another client still finds it busy.
  struct timespec ts {
    1, 500'000'000
  };
  nanosleep(&ts, nullptr);
  Result other = run({"acquire", "nest"}, env);
  EXPECT_EQ(other.status, 75) << other.err;
  outer.signal(SIGTERM);
  (void)outer.wait(Seconds(20));
}

TEST(Lease, RenewWithAShorterTtlKeepsTheLongerLease) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--ttl", "60s", "lease"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(run({"renew", "--token", first_line(a.out), "--ttl", "1s", "lease"}, env).status, 0);
  EXPECT_GT(redis.cmd({"PTTL", lock_key("lease")}).integer, 50'000);
  // A semaphore place too.
  Result b = run({"acquire", "--limit", "3", "--ttl", "60s", "pool"}, env);
  ASSERT_EQ(b.status, 0) << b.err;
  ASSERT_EQ(run({"renew", "--token", first_line(b.out), "--ttl", "1s", "pool"}, env).status, 0);
  Result st = run({"status", "pool", "--json"}, env);
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_GT(json::parse(st.out)[0]["holders"][0]["ttl_ms"].get<long long>(), 50'000) << st.out;
}

TEST(Upgrade, AReadersNestedExclusiveCallIsRefusedWith64) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
  Result r = run({"exec", "--shared", "rw", "--", "sh", "-c",
                  nested_redlock() + " exec rw -- touch \"$D/ran\" 2>\"$D/err\"; echo $? > \"$D/status\""},
                 env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() + "/status"), "64\n") << read_file(dir.path() + "/err");
  EXPECT_FALSE(file_exists(dir.path() + "/ran"));
  EXPECT_NE(read_file(dir.path() + "/err").find("reader"), std::string::npos) << read_file(dir.path() + "/err");
}

TEST(Upgrade, AWritersNestedSharedCallReentersAsBefore) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
  Result r = run({"exec", "rw", "--", "sh", "-c", nested_redlock() + " exec --shared rw -- touch \"$D/ran\""}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(file_exists(dir.path() + "/ran"));
  EXPECT_FALSE(key_exists(redis, lock_key("rw")));
}

TEST(RedlockReentry, ATokenHeldOnAMinorityIsNotReenteredAndLeavesNothingBehind) {
  Servers s(3);
  Env env = s.env();
  Result a = run({"acquire", "--ttl", "30s", "--json", "minor"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = json::parse(a.out)["token"];
  // The hold survives on one server only (the others lost it).
  s[1].cmd({"DEL", lock_key("minor")});
  s[2].cmd({"DEL", lock_key("minor")});
  Result r = run({"acquire", "--token", token, "--json", "minor"}, env);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(s[0].cmd({"HGET", lock_key("minor"), "count"}).str, "1") << "the partial re-entry is undone";
  EXPECT_EQ(s[0].cmd({"HGET", lock_key("minor"), "token"}).str, token);
  EXPECT_FALSE(key_exists(s[1], lock_key("minor")));
  EXPECT_FALSE(key_exists(s[2], lock_key("minor")));
}

TEST(RedlockReentry, ATokenHeldOnAQuorumReentersWithTheSameToken) {
  Servers s(3);
  Env env = s.env();
  Result a = run({"acquire", "--ttl", "30s", "--json", "major"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = json::parse(a.out)["token"];
  s[2].cmd({"DEL", lock_key("major")});
  Result r = run({"acquire", "--token", token, "--json", "major"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["token"], token);
  EXPECT_EQ(json::parse(r.out)["count"], 2);
  EXPECT_FALSE(key_exists(s[2], lock_key("major"))) << "no fresh token left on the third server";
}

TEST(Fences, KeepIncreasingAcrossAnEmptyRestart) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  long long last = 0;
  for (int i = 0; i < 3; ++i) {
    Result a = run({"acquire", "--json", "restarted"}, env);
    ASSERT_EQ(a.status, 0) << a.err;
    const long long fence = json::parse(a.out)["fence"];
    EXPECT_GT(fence, last) << "after restart " << i;
    last = fence;
    redis.stop();
    redis.start();  // empty: the counter is gone
  }
}
