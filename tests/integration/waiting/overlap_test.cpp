// What the other hosts see of a run that overstays or piles up:
// --stale-after makes a busy line loud (even under -q) when the holder has
// held the lock too long; --max-waiters turns a new waiter away when enough
// already wait in line.

#include <gtest/gtest.h>
#include <signal.h>

#include <memory>

#include "lock_support.hpp"
#include "servers.hpp"

using namespace redlock::test;

TEST(Overlap, StaleAfterMakesTheBusyLineLoudEvenUnderQuiet) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, env).status, 0);
  // Held for over 600 ms by the server's clock.
  ASSERT_TRUE(eventually(
      [&] {
        const auto since = std::stoll(redis.cmd({"HGET", lock_key("job"), "since_ms"}).str);
        const auto time = redis.cmd({"TIME"});
        const long long now = std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
        return now - since > 600;
      },
      Seconds(5)));
  Result stale = run({"-q", "acquire", "--stale-after", "500ms", "job"}, env);
  EXPECT_EQ(stale.status, 75);
  EXPECT_TRUE(one_line(stale.err)) << stale.err;
  EXPECT_NE(stale.err.find("may be stuck"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find("--stale-after 500ms"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find(this_host()), std::string::npos) << "the line names the holder: " << stale.err;

  Result exec = run({"-q", "exec", "--stale-after", "500ms", "job", "--", "true"}, env);
  EXPECT_EQ(exec.status, 75);
  EXPECT_NE(exec.err.find("may be stuck"), std::string::npos) << exec.err;

  Result fresh = run({"-q", "acquire", "--stale-after", "1h", "job"}, env);
  EXPECT_EQ(fresh.status, 75);
  EXPECT_EQ(fresh.err, "") << "a holder within the bound is no news under -q";
  Result silent = run({"-qq", "acquire", "--stale-after", "500ms", "job"}, env);
  EXPECT_EQ(silent.status, 75);
  EXPECT_EQ(silent.err, "");
  // Once per run: a wait of many tries still ends in one line.
  Result waited = run({"-q", "acquire", "--stale-after", "500ms", "--wait", "2s", "job"}, env);
  EXPECT_EQ(waited.status, 75);
  EXPECT_TRUE(one_line(waited.err)) << waited.err;
  EXPECT_NE(waited.err.find("may be stuck"), std::string::npos) << waited.err;
  Result exec_waited = run({"-q", "exec", "--stale-after", "500ms", "--wait", "2s", "job", "--", "true"}, env);
  EXPECT_EQ(exec_waited.status, 75);
  EXPECT_TRUE(one_line(exec_waited.err)) << exec_waited.err;
  EXPECT_NE(exec_waited.err.find("may be stuck"), std::string::npos) << exec_waited.err;
}

TEST(Overlap, StaleAfterCountsASemaphoresOldestHolder) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--limit", "1", "--ttl", "60s", "one"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--limit", "2", "--ttl", "60s", "pool"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--limit", "2", "--ttl", "60s", "pool"}, env).status, 0);
  sleep_for(0.8);
  Result r = run({"-q", "acquire", "--limit", "2", "--stale-after", "500ms", "pool"}, env);
  EXPECT_EQ(r.status, 75);
  EXPECT_NE(r.err.find("may be stuck"), std::string::npos) << r.err;
}

TEST(Overlap, MaxWaitersTurnsAwayANewWaiterAtOnceWhenTheLineIsFull) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, env).status, 0);
  auto first = queue_up(redis, "job", {"acquire", "--wait", "60s", "--max-waiters", "1", "job"}, env);
  Result turned = run({"acquire", "--wait", "60s", "--max-waiters", "1", "job"}, env, Seconds(30));
  EXPECT_EQ(turned.status, 75) << turned.err;
  EXPECT_LT(turned.seconds, 5.0) << "busy at once, not after the wait";
  EXPECT_TRUE(one_line(turned.err)) << turned.err;
  EXPECT_NE(turned.err.find("1 already waiting in line (--max-waiters 1)"), std::string::npos) << turned.err;
  EXPECT_EQ(in_line(redis, "job"), 1) << "the newcomer never joined";
  Result quiet = run({"-q", "exec", "--wait", "60s", "--max-waiters", "1", "job", "--", "true"}, env, Seconds(30));
  EXPECT_EQ(quiet.status, 75);
  EXPECT_EQ(quiet.err, "") << "-q: busy is no news";
  // A bound the line is below lets the newcomer in behind the first.
  auto second = queue_up(redis, "job", {"acquire", "--wait", "60s", "--max-waiters", "2", "job"}, env);
  EXPECT_EQ(in_line(redis, "job"), 2);
  EXPECT_TRUE(first->alive() && second->alive()) << "those in line keep their places";
  first->signal(SIGTERM);
  second->signal(SIGTERM);
  (void)first->wait(Seconds(5));
  (void)second->wait(Seconds(5));
}

TEST(Overlap, MaxWaitersOverThreeServersLeavesEveryLine) {
  Servers servers(3);
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, servers.env()).status, 0);
  Child first({"acquire", "--wait", "60s", "job"}, servers.env());
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& s : servers.all) {
          if (in_line(*s, "job") < 1) {
            return false;
          }
        }
        return true;
      },
      Seconds(10)))
      << first.err_so_far();
  Result turned = run({"acquire", "--wait", "60s", "--max-waiters", "1", "job"}, servers.env(), Seconds(30));
  EXPECT_EQ(turned.status, 75) << turned.err;
  EXPECT_LT(turned.seconds, 5.0);
  for (const auto& s : servers.all) {
    EXPECT_EQ(in_line(*s, "job"), 1) << "the newcomer left no entry behind";
  }
  first.signal(SIGTERM);
  (void)first.wait(Seconds(5));
}
