// A Redis Cluster endpoint: each lock's keys share one hash slot ({NAME}),
// and a MOVED answer sends redlock to the node that owns the slot.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

TEST(Cluster, LocksLandOnTheNodeThatOwnsTheirSlot) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  int moved = 0;
  for (int i = 0; i < 12; ++i) {
    const std::string name = "job-" + std::to_string(i);
    const std::string key = "redlock:{" + name + "}";
    moved += c.node(0).cmd({"EXISTS", key}).is_error();
    Result a = run({"acquire", "--json", name}, env);
    ASSERT_EQ(a.status, 0) << name << ": " << a.err;
    EXPECT_EQ(c.holders(key), 1) << name;
    EXPECT_EQ(run({"acquire", name}, env).status, 75) << name;
    Result st = run({"status", name}, env);
    EXPECT_EQ(st.status, 0) << st.err;
    const std::string token = a.out.substr(a.out.find("\"token\":\"") + 9, 40);
    EXPECT_EQ(run({"renew", "--token", token, name}, env).status, 0);
    EXPECT_EQ(run({"release", "--token", token, name}, env).status, 0);
    EXPECT_EQ(c.holders(key), 0) << name;
  }
  EXPECT_GT(moved, 0) << "no name needed a redirection: the test proved nothing";
}

TEST(Cluster, ExecAndWaitingWorkThroughRedirections) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(1)}};
  TempDir dir;
  // Several names, so that some live on other nodes than the one we name.
  for (const std::string name : {"alpha", "beta", "gamma", "delta"}) {
    Result holder = run({"acquire", "--ttl", "800ms", "--json", name}, env);
    ASSERT_EQ(holder.status, 0) << holder.err;
    const long long holder_fence = nlohmann::json::parse(holder.out)["fence"];
    Result r = run({"exec", "--wait", "10s", "--ttl", "2s", name, "--", "sh", "-c", "echo \"$REDLOCK_FENCE\""}, env);
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_GT(std::stoll(r.out), holder_fence) << name;
    EXPECT_EQ(c.holders("redlock:{" + name + "}"), 0) << name;
  }
}

// Braces in a name: the lock's keys still meet in one slot (tagged by the
// name up to its first '}'), so every script, waiting included, runs
// without CROSSSLOT.
TEST(Cluster, NamesWithBracesKeepTheirKeysInOneSlot) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  // The name's braces are other bytes inside the tag (lock/keys.hpp), so
  // even a name that starts with '}' keeps a tag of its own.
  for (const std::string name : {"{a}", "a}b", "b{c}d", "}{", "}x"}) {
    const std::string key = lock_key(name);
    const long long slot = c.node(0).cmd({"CLUSTER", "KEYSLOT", key}).integer;
    for (const std::string suffix : {":fence", ":line", ":beats", ":waiters", ":writers"}) {
      EXPECT_EQ(c.node(0).cmd({"CLUSTER", "KEYSLOT", key + suffix}).integer, slot) << name << suffix;
    }
    Result holder = run({"acquire", "--ttl", "800ms", "--json", name}, env);
    ASSERT_EQ(holder.status, 0) << name << ": " << holder.err;
    EXPECT_EQ(c.holders(key), 1) << name;
    Result r = run({"exec", "--wait", "10s", "--ttl", "2s", name, "--", "true"}, env);
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(c.holders(key), 0) << name;
  }
}

// A prefix with a tag of its own ('app{1}:') puts every lock in that tag's
// slot; the scripts run there, on whichever node is named.
TEST(Cluster, APrefixWithItsOwnHashTagWorksFromAnyNode) {
  Cluster& c = cluster();
  for (size_t from = 0; from < c.size(); ++from) {
    Env env{{"REDLOCK_URL", c.url(from)}, {"REDLOCK_PREFIX", "app{1}:"}};
    const std::string name = "job-" + std::to_string(from);
    Result r = run({"exec", "--wait", "5s", name, "--", "true"}, env);
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    Result holder = run({"acquire", "--ttl", "60s", name}, env);
    ASSERT_EQ(holder.status, 0) << holder.err;
    EXPECT_EQ(c.holders("app{1}:{" + name + "}"), 1);
    Result st = run({"status", name}, env);
    EXPECT_EQ(st.status, 0) << st.err;
    EXPECT_EQ(run({"release", "--token", holder.out.substr(0, holder.out.find('\n')), name}, env).status, 0);
  }
}

// A lock of several names whose keys live on three different nodes: taken
// name by name (no script spans slots), all or nothing, and given back.
TEST(Cluster, SeveralNamesOnDifferentNodesAreOneLock) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  const std::vector<std::string> names = {c.name_on("multi", 0), c.name_on("multi", 1), c.name_on("multi", 2)};
  const auto key = [](const std::string& name) { return "redlock:{" + name + "}"; };
  Result r = run({"exec", names[2], names[0], names[1], "--", "sh", "-c", "printf '%s\\n' \"$REDLOCK_FENCES\""}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  for (const auto& name : names) {
    EXPECT_NE(r.out.find(" " + name + "\n"), std::string::npos) << r.out;
    EXPECT_EQ(c.holders(key(name)), 0) << name;
  }
  // One busy name: nothing is taken.
  Result holder = run({"acquire", "--ttl", "30s", names[1]}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  Result busy = run({"acquire", names[0], names[1], names[2]}, env);
  EXPECT_EQ(busy.status, 75) << busy.err;
  EXPECT_EQ(c.holders(key(names[0])), 0);
  EXPECT_EQ(c.holders(key(names[2])), 0);
  const std::string token = holder.out.substr(0, holder.out.find('\n'));
  EXPECT_EQ(run({"release", "--token", token, names[1]}, env).status, 0);
}
