// A Redis Cluster endpoint: each lock's keys share one hash slot ({NAME}),
// and a MOVED answer sends redlock to the node that owns the slot.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// Three masters with every slot assigned, made with redis-cli --cluster create.
class Cluster {
 public:
  Cluster() {
    std::vector<std::string> create = {"--cluster", "create"};
    for (int i = 0; i < 3; ++i) {
      nodes.push_back(std::make_unique<RedisServer>(
          RedisServer::Options{.extra = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                         "--cluster-node-timeout", "5000"}}));
      create.push_back("127.0.0.1:" + std::to_string(nodes.back()->port()));
    }
    create.insert(create.end(), {"--cluster-replicas", "0", "--cluster-yes"});
    Child cli(create, Env{}, std::string("redis-cli"));
    Result r = cli.wait(Seconds(30));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    for (auto& n : nodes) {
      EXPECT_TRUE(eventually(
          [&] {
            return n->cmd({"CLUSTER", "INFO"}).str.find("cluster_state:ok") != std::string::npos;
          },
          Seconds(20)));
    }
  }
  // How many nodes hold `key` (a node that does not own its slot answers MOVED).
  int holders(const std::string& key) {
    int count = 0;
    for (auto& n : nodes) {
      auto r = n->cmd({"EXISTS", key});
      count += !r.is_error() && r.integer == 1;
    }
    return count;
  }
  std::vector<std::unique_ptr<RedisServer>> nodes;
};

}  // namespace

TEST(Cluster, LocksLandOnTheNodeThatOwnsTheirSlot) {
  Cluster cluster;
  Env env{{"REDLOCK_URL", cluster.nodes[0]->url()}};
  int moved = 0;
  for (int i = 0; i < 12; ++i) {
    const std::string name = "job-" + std::to_string(i);
    const std::string key = "redlock:{" + name + "}";
    moved += cluster.nodes[0]->cmd({"EXISTS", key}).is_error();
    Result a = run({"acquire", "--json", name}, env);
    ASSERT_EQ(a.status, 0) << name << ": " << a.err;
    EXPECT_EQ(cluster.holders(key), 1) << name;
    EXPECT_EQ(run({"acquire", name}, env).status, 75) << name;
    Result st = run({"status", name}, env);
    EXPECT_EQ(st.status, 0) << st.err;
    const std::string token = a.out.substr(a.out.find("\"token\":\"") + 9, 40);
    EXPECT_EQ(run({"renew", "--token", token, name}, env).status, 0);
    EXPECT_EQ(run({"release", "--token", token, name}, env).status, 0);
    EXPECT_EQ(cluster.holders(key), 0) << name;
  }
  EXPECT_GT(moved, 0) << "no name needed a redirection: the test proved nothing";
}

TEST(Cluster, ExecAndWaitingWorkThroughRedirections) {
  Cluster cluster;
  Env env{{"REDLOCK_URL", cluster.nodes[1]->url()}};
  TempDir dir;
  // Several names, so that some live on other nodes than the one we name.
  for (const std::string name : {"alpha", "beta", "gamma", "delta"}) {
    Result holder = run({"acquire", "--ttl", "800ms", "--json", name}, env);
    ASSERT_EQ(holder.status, 0) << holder.err;
    const long long holder_fence = nlohmann::json::parse(holder.out)["fence"];
    Result r = run({"exec", "--wait", "10s", "--ttl", "2s", name, "--", "sh", "-c", "echo \"$REDLOCK_FENCE\""}, env);
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_GT(std::stoll(r.out), holder_fence) << name;
    EXPECT_EQ(cluster.holders("redlock:{" + name + "}"), 0) << name;
  }
}
