// A lock whose hash slot is moving between Cluster nodes. The source node
// answers ASK for keys it no longer has, and TRYAGAIN for a script whose keys
// (the lock's hash, its fence counter, its line of waiters) are split between
// the two nodes (before Redis 7.0 the source answers ASK there too, and the
// target TRYAGAIN: Cluster::split_answered_by) or, on the target, not all
// there; redlock follows ASK once and retries TRYAGAIN within --timeout.
// Each test moves a slot by hand, so it decides when each answer happens.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cluster_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

struct Held {
  std::string token;
  long long fence = 0;
};

Held acquired(const Result& r) {
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) {
    return {};
  }
  auto j = nlohmann::json::parse(r.out);
  return Held{j["token"], j["fence"]};
}

}  // namespace

TEST(ClusterMigration, EveryCommandFollowsAskToTheSlotsNewNode) {
  Cluster& c = cluster();
  const std::string name = c.name_on("ask", 0);
  const std::string key = lock_key(name);
  const int slot = c.slot_of(key);
  // Through the third node: MOVED to the source, then ASK to the target.
  Env env{{"REDLOCK_URL", c.url(2)}};
  const Held first = acquired(run({"acquire", "--json", "--ttl", "60s", name}, env));
  ASSERT_FALSE(first.token.empty());

  c.begin_migration(slot, 0, 1);
  c.move_key(key, 0, 1);
  c.move_key(key + ":fence", 0, 1);
  const long long asks = c.errors(0, "ASK");
  Result st = run({"status", name}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  Result renewed = run({"renew", "--token", first.token, "--ttl", "60s", name}, env);
  EXPECT_EQ(renewed.status, 0) << renewed.err;
  EXPECT_GE(c.errors(0, "ASK"), asks + 2) << "the source did not answer ASK: the test proved nothing";

  // acquire and release also name the lock's line of waiters, which exists
  // nowhere (nobody waits): on the target their keys are split, and they
  // meet TRYAGAIN there (after an ASK each time) until the migration ends.
  // They wait that out within --timeout.
  const long long split = c.errors(1, "TRYAGAIN");
  Child busy({"acquire", "--redis-timeout", "20s", name}, env);
  ASSERT_TRUE(eventually([&] { return c.errors(1, "TRYAGAIN") > split + 1; }, Seconds(10))) << busy.err_so_far();
  EXPECT_TRUE(busy.alive());
  EXPECT_GE(c.errors(0, "ASK"), asks + 4) << "acquire was not sent on by ASK again and again";
  c.finish_migration(slot, 0, 1);
  Result b = busy.wait();
  EXPECT_EQ(b.status, 75) << b.err;
  Result released = run({"release", "--token", first.token, name}, env);
  EXPECT_EQ(released.status, 0) << released.err;

  // The lock is free and its slot moves back, its fence counter first: a new
  // acquire is sent to the target by ASK and meets TRYAGAIN (its hash is
  // missing) until the migration ends; it waits that out within --timeout.
  c.begin_migration(slot, 1, 0);
  c.move_key(key + ":fence", 1, 0);
  const long long tryagains = c.errors(0, "TRYAGAIN");
  Child next({"acquire", "--json", "--redis-timeout", "20s", name}, env);
  ASSERT_TRUE(eventually([&] { return c.errors(0, "TRYAGAIN") > tryagains; }, Seconds(10))) << next.err_so_far();
  EXPECT_TRUE(next.alive());
  c.finish_migration(slot, 1, 0);
  const Held second = acquired(next.wait());
  EXPECT_GT(second.fence, first.fence);
  EXPECT_EQ(c.owner(slot), 0U);
  EXPECT_EQ(run({"release", "--token", second.token, name}, env).status, 0);
  EXPECT_EQ(c.holders(key), 0);
}

TEST(ClusterMigration, ScriptsWhoseKeysAreSplitRetryUntilTheyMeet) {
  Cluster& c = cluster();
  const std::string name = c.name_on("split", 1);
  const std::string key = lock_key(name);
  const int slot = c.slot_of(key);
  Env env{{"REDLOCK_URL", c.url(0)}};
  const Held held = acquired(run({"acquire", "--json", "--ttl", "60s", name}, env));
  ASSERT_FALSE(held.token.empty());

  // The fence counter moves first: the lock's hash is still on the source.
  c.begin_migration(slot, 1, 2);
  c.move_key(key + ":fence", 1, 2);
  // A one-key script (renew) is served where the hash is.
  Result renewed = run({"renew", "--token", held.token, "--ttl", "60s", name}, env);
  EXPECT_EQ(renewed.status, 0) << renewed.err;
  // Scripts of several keys (acquire, status) get TRYAGAIN: past --redis-timeout that is
  // Redis being unavailable for now (69), not an error reply (76).
  Result gave_up = run({"acquire", "--redis-timeout", "300ms", name}, env);
  EXPECT_EQ(gave_up.status, 69) << gave_up.err;
  EXPECT_NE(gave_up.err.find("TRYAGAIN"), std::string::npos) << gave_up.err;

  const size_t split = c.split_answered_by(1, 2);
  const long long tryagains = c.errors(split, "TRYAGAIN");
  Child status({"status", "--redis-timeout", "20s", name}, env);
  Child busy({"acquire", "--redis-timeout", "20s", name}, env);
  ASSERT_TRUE(eventually([&] { return c.errors(split, "TRYAGAIN") >= tryagains + 2; }, Seconds(10)));
  EXPECT_TRUE(status.alive());
  EXPECT_TRUE(busy.alive());
  c.move_key(key, 1, 2);  // the keys meet again, on the target: ASK from now on
  Result st = status.wait();
  EXPECT_EQ(st.status, 0) << st.err;
  // acquire and release also name the line of waiters (nobody waits, so it
  // exists nowhere): they go on once the migration is over.
  EXPECT_TRUE(busy.alive());
  c.finish_migration(slot, 1, 2);
  Result b = busy.wait();
  EXPECT_EQ(b.status, 75) << b.err;
  Result released = run({"release", "--token", held.token, name}, env);
  EXPECT_EQ(released.status, 0) << released.err;
  EXPECT_EQ(c.holders(key), 0);
}

TEST(ClusterMigration, AWaitWaitsOutAMigrationThatOutlastsTheTimeout) {
  // TRYAGAIN past --redis-timeout ended a waiting acquire with 69 at once, though
  // --wait had seconds left.
  Cluster& c = cluster();
  const std::string name = c.name_on("waitout", 1);
  const std::string key = lock_key(name);
  const int slot = c.slot_of(key);
  Env env{{"REDLOCK_URL", c.url(0)}};
  const Held first = acquired(run({"acquire", "--json", name}, env));
  ASSERT_EQ(run({"release", "--token", first.token, name}, env).status, 0);
  // Only the fence counter is left, on the source: a script that names it
  // and the lock's hash gets TRYAGAIN until the migration ends.
  c.begin_migration(slot, 1, 2);
  const size_t split = c.split_answered_by(1, 2);
  const long long tryagains = c.errors(split, "TRYAGAIN");
  const auto started = std::chrono::steady_clock::now();
  Child waiter({"acquire", "--json", "--redis-timeout", "200ms", "--wait", "20s", name}, env);
  ASSERT_TRUE(eventually(
      [&] {
        return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(1500) &&
               c.errors(split, "TRYAGAIN") > tryagains + 5;
      },
      Seconds(10)));
  EXPECT_TRUE(waiter.alive()) << waiter.err_so_far();
  c.finish_migration(slot, 1, 2);
  const Held second = acquired(waiter.wait());
  EXPECT_GT(second.fence, first.fence);
  EXPECT_EQ(run({"release", "--token", second.token, name}, env).status, 0);
}

TEST(ClusterMigration, ExecRenewsAndReleasesALockWhoseSlotMoves) {
  Cluster& c = cluster();
  const std::string name = c.name_on("exec", 2);
  const std::string key = lock_key(name);
  const int slot = c.slot_of(key);
  Env env{{"REDLOCK_URL", c.url(0)}};
  TempDir dir;
  const std::string go = dir.path() + "/go";
  // Renewals every 500 ms while CMD waits for the test's word.
  Child exec({"exec", "--ttl", "1500ms", name, "--", "sh", "-c",
              "while [ ! -e '" + go + "' ]; do sleep 0.05; done; echo done"},
             env);
  ASSERT_TRUE(eventually([&] { return c.holders(key) == 1; }, Seconds(10))) << exec.err_so_far();
  auto renewals_at = [&](size_t i) { return c.node(i).calls("evalsha"); };

  c.begin_migration(slot, 2, 0);
  c.move_key(key + ":fence", 2, 0);
  long long before = renewals_at(2);
  EXPECT_TRUE(eventually([&] { return renewals_at(2) > before; }, Seconds(5))) << "no renewal at the source";
  c.move_key(key, 2, 0);
  const long long asks = c.errors(2, "ASK");
  before = renewals_at(0);
  EXPECT_TRUE(eventually([&] { return c.errors(2, "ASK") > asks && renewals_at(0) > before + 1; }, Seconds(5)))
      << "no renewal by ASK at the target";
  c.finish_migration(slot, 2, 0);
  const long long moved = c.errors(2, "MOVED");
  before = renewals_at(0);
  EXPECT_TRUE(eventually([&] { return c.errors(2, "MOVED") > moved && renewals_at(0) > before; }, Seconds(5)))
      << "no renewal after MOVED";

  std::ofstream(go).put('\n');
  Result r = exec.wait();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(c.holders(key), 0);
}

// The loop, scaled down: execs on a few names while their slots keep
// moving between the three nodes, key by key. None may fail (76), lose its
// lock (74) or leave it behind.
TEST(ClusterMigration, ExecsDuringALiveReshardLeaveNothingBehind) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  std::vector<std::string> names;
  for (size_t i = 0; i < 6; ++i) {
    names.push_back(c.name_on("reshard" + std::to_string(i), i % c.size()));
  }
  std::atomic<bool> done{false};
  std::atomic<int> migrations{0};
  std::thread resharder([&] {
    const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(15)); };
    while (!done) {
      for (const auto& name : names) {
        const std::string key = lock_key(name);
        const int slot = c.slot_of(key);
        const size_t from = c.owner(slot);
        const size_t to = (from + 1) % c.size();
        c.begin_migration(slot, from, to);
        pause();
        for (const std::string& k : {key + ":fence", key}) {
          c.move_key(k, from, to);
          pause();
        }
        c.finish_migration(slot, from, to);
        ++migrations;
      }
    }
  });
  std::vector<int> statuses;
  std::mutex m;
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&, w] {
      for (int k = 0; k < 12; ++k) {
        const std::string& name = names[static_cast<size_t>(w * 5 + k) % names.size()];
        Result r = run({"exec", "--wait", "30s", "--ttl", "2s", name, "--", "sh", "-c", "sleep 0.02"}, env);
        std::lock_guard<std::mutex> lock(m);
        statuses.push_back(r.status);
        EXPECT_EQ(r.status, 0) << name << ": " << r.err;
      }
    });
  }
  for (auto& t : workers) {
    t.join();
  }
  done = true;
  resharder.join();
  EXPECT_EQ(statuses.size(), 36U);
  EXPECT_GE(migrations.load(), 6) << "the slots hardly moved: the test proved little";
  for (const auto& key : c.keys("redlock:{reshard*")) {
    EXPECT_NE(key.back(), '}') << key << " was left behind";
  }
}
