// What a Cluster looks like from outside: `status` without a name lists the
// locks of every master (by SCAN: the index of held locks would lie in
// another slot than the locks, so the scripts go without it), and several --redis URLs that reach one cluster (or
// one server named twice) are refused, never counted as independent Redlock
// voters.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

std::string token_of(const Result& r) {
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST(ClusterTopology, StatusWithoutANameListsTheLocksOfEveryMaster) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  std::vector<std::string> names;
  std::vector<std::string> tokens;
  for (size_t i = 0; i < c.size(); ++i) {
    names.push_back(c.name_on("listed", i));
    Result a = run({"acquire", "--ttl", "60s", names.back()}, env);
    ASSERT_EQ(a.status, 0) << a.err;
    tokens.push_back(token_of(a));
  }
  for (size_t from = 0; from < c.size(); ++from) {
    Result st = run({"status", "--json"}, Env{{"REDLOCK_URL", c.url(from)}});
    EXPECT_EQ(st.status, 0) << st.err;
    for (const auto& name : names) {
      EXPECT_NE(st.out.find("\"" + name + "\""), std::string::npos)
          << name << " missing from node " << from << "'s listing: " << st.out;
    }
  }
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c.node(i).cmd({"EXISTS", "redlock:index"}).integer, 0) << "node " << i;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(run({"release", "--token", tokens[i], names[i]}, env).status, 0);
  }
}

// The metrics of a job that is not running: the names come from the
// ledgers SCAN finds on every master (the index of ledgers would lie in
// another slot), so the alert on the last ok run sees every job.
TEST(ClusterTopology, MetricsCarryTheLastRunOfFreeJobsOnEveryMaster) {
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  std::vector<std::string> names;
  for (size_t i = 0; i < c.size(); ++i) {
    names.push_back(c.name_on("nightly", i));
    Result r = run({"exec", names.back(), "--", "true"}, env);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  for (size_t from = 0; from < c.size(); ++from) {
    Result m = run({"status", "--format", "prometheus"}, Env{{"REDLOCK_URL", c.url(from)}});
    EXPECT_EQ(m.status, 0) << m.err;
    for (const auto& name : names) {
      EXPECT_NE(m.out.find("redlock_last_success_timestamp_seconds{name=\"" + name + "\""), std::string::npos)
          << name << " has no last run in node " << from << "'s metrics: " << m.out;
    }
  }
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c.node(i).cmd({"EXISTS", "redlock:ledgers"}).integer, 0) << "node " << i;
  }
}

TEST(ClusterTopology, StatusReadsEachLockInTwoCalls) {
  // One call reads the lock's four keys (its hash, fence and marks), one its
  // line of waiters: a lock's keys share a slot, and only a slot that moves
  // makes status read them apart.
  Cluster& c = cluster();
  Env env{{"REDLOCK_URL", c.url(0)}};
  std::vector<std::string> names;
  std::vector<std::string> tokens;
  for (size_t i = 0; i < c.size(); ++i) {
    names.push_back(c.name_on("counted", i));
    Result a = run({"acquire", "--ttl", "60s", names.back()}, env);
    ASSERT_EQ(a.status, 0) << a.err;
    tokens.push_back(token_of(a));
  }
  const auto scripts_run = [&] {
    long long calls = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      const std::string stats = c.node(i).cmd({"INFO", "commandstats"}).str;
      for (const std::string cmd : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
        if (const size_t at = stats.find(cmd); at != std::string::npos) {
          calls += std::stoll(stats.substr(at + cmd.size()));
        }
      }
    }
    return calls;
  };
  const long long before = scripts_run();
  Result st = run({"status"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  for (const auto& name : names) {
    EXPECT_NE(st.out.find(name), std::string::npos) << st.out;
  }
  // Two a lock, and a refused batch (CROSSSLOT) or two on the way.
  EXPECT_LE(scripts_run() - before, static_cast<long long>(2 * names.size() + 2));
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(run({"release", "--token", tokens[i], names[i]}, env).status, 0);
  }
}

TEST(ClusterTopology, DoctorFindsEverySlotAssigned) {
  Cluster& c = cluster();
  Result r = run({"doctor"}, Env{{"REDLOCK_URL", c.url(0)}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("server " + c.url(0) + "\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("ok    cluster       every one of the 16384 slots is assigned"), std::string::npos) << r.out;
  // Before Redis 7.0 the rights cannot be checked: a warning, not a failure.
  EXPECT_TRUE(r.out.find("ok    acl ") != std::string::npos || r.out.find("before Redis 7.0") != std::string::npos)
      << r.out;
}

TEST(ClusterTopology, UrlsOfOneClusterAreRefusedNotCountedAsVoters) {
  Cluster& c = cluster();
  const std::string name = c.name_on("voters", 1);
  const std::string key = lock_key(name);
  // The slot's owner among the URLs, or not; two or three of them.
  for (const auto& urls : std::vector<std::vector<std::string>>{
           {c.url(0), c.url(1)}, {c.url(0), c.url(2)}, {c.url(0), c.url(1), c.url(2)}}) {
    std::vector<std::string> args;
    for (const auto& u : urls) {
      args.insert(args.end(), {"--redis", u});
    }
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.begin(), args.begin(), args.end());
      return run(more, Env{{"REDLOCK_URL", ""}});
    };
    for (const auto& cmd :
         std::vector<std::vector<std::string>>{{"acquire", name},
                                               {"acquire", "--wait", "5s", name},
                                               {"exec", name, "--", "true"},
                                               {"renew", "--token", "0123456789abcdef0123456789abcdef", name},
                                               {"release", "--token", "0123456789abcdef0123456789abcdef", name},
                                               {"status", name},
                                               {"status"}}) {
      SCOPED_TRACE(urls.size() == 2 ? urls[1] + " " + cmd[0] : "three " + cmd[0]);
      Result r = with(cmd);
      EXPECT_EQ(r.status, 64) << r.err;
      EXPECT_LT(r.seconds, 3.0);
      EXPECT_NE(r.err.find("not independent"), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(c.holders(key), 0) << "left half-held";
    }
  }
}

TEST(ClusterTopology, OneServerNamedTwiceIsRefused) {
  RedisServer redis;
  Result r = run({"--redis", redis.url(), "--redis", redis.url() + "/0", "acquire", "twice"}, Env{{"REDLOCK_URL", ""}});
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_NE(r.err.find("same Redis node"), std::string::npos) << r.err;
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("twice")}).integer, 0);
  // Spelt differently (an alias the text does not give away), it is found
  // once connected.
  const std::string alias = "redis://localhost:" + std::to_string(redis.port());
  Result a = run({"--redis", redis.url(), "--redis", alias, "acquire", "twice"}, Env{{"REDLOCK_URL", ""}});
  EXPECT_EQ(a.status, 64) << a.err;
  EXPECT_NE(a.err.find("reach the same Redis node"), std::string::npos) << a.err;
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("twice")}).integer, 0);
}
