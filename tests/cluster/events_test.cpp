// redlock events on a Redis Cluster: the scripts PUBLISH, which the cluster
// broadcasts, so one node hears the events of locks on every master.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "cluster_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

TEST(ClusterEvents, OneNodeHearsTheLocksOfEveryMaster) {
  Cluster& c = cluster();
  const Env env{{"REDLOCK_URL", c.url(0)}};
  Child events({"events"}, env);
  ASSERT_TRUE(eventually([&] {
    const auto r = c.node(0).cmd({"PUBSUB", "NUMPAT"});
    return r.integer >= 1;
  })) << events.err_so_far();
  std::vector<std::string> names;
  for (size_t i = 0; i < c.size(); ++i) {
    names.push_back(c.name_on("told", i));
    const Result a = run({"acquire", "--ttl", "60s", names.back()}, env);
    ASSERT_EQ(a.status, 0) << a.err;
  }
  ASSERT_TRUE(eventually([&] {
    const std::string out = events.out_so_far();
    for (const auto& name : names) {
      if (out.find(" acquired " + name + " ") == std::string::npos) {
        return false;
      }
    }
    return true;
  })) << events.out_so_far()
      << events.err_so_far();
  events.signal(SIGTERM);
  EXPECT_EQ(events.wait(Seconds(5)).status, 0);
  for (const auto& name : names) {
    (void)run({"break", name}, env);
  }
}
