// --min-replicas: after acquire/renew, WAIT for N replicas or the lock does
// not count as held.

#include <gtest/gtest.h>
#include <unistd.h>

#include "harness.hpp"

using namespace redlock::test;

namespace {

bool replica_connected(RedisServer& replica) {
  auto role = replica.cmd({"ROLE"});
  return role.elements.size() > 3 && role.elements[3].str == "connected";
}

}  // namespace

TEST(MinReplicas, AcquireSucceedsWhenTheReplicaAcknowledges) {
  RedisServer master;
  RedisServer replica(RedisServer::Options{.extra = {"--replicaof", "127.0.0.1", std::to_string(master.port())}});
  ASSERT_TRUE(eventually([&] { return replica_connected(replica); }, Seconds(10)));
  Env env{{"REDLOCK_URL", master.url()}};
  // WAIT gets half of --timeout: the default (500 ms) is not always enough
  // for a replica on a loaded machine (or under the sanitizers) to answer.
  Result a = run({"acquire", "--min-replicas", "1", "--redis-timeout", "5s", "replicated"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(replica.cmd({"HGET", lock_key("replicated"), "token"}).str + "\n", a.out)
      << "the replica has the lock when acquire returns";
  const std::string token = a.out.substr(0, a.out.find('\n'));
  Result r = run({"renew", "--min-replicas", "1", "--redis-timeout", "5s", "--token", token, "replicated"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(MinReplicas, WithoutEnoughReplicasNothingIsHeld) {
  RedisServer master;
  Env env{{"REDLOCK_URL", master.url()}};
  Result a = run({"acquire", "--min-replicas", "1", "--redis-timeout", "300ms", "lonely"}, env);
  EXPECT_EQ(a.status, 69) << a.err;
  EXPECT_NE(a.err.find("replica"), std::string::npos) << a.err;
  EXPECT_EQ(master.cmd({"EXISTS", lock_key("lonely")}).integer, 0) << "the unconfirmed lock was released";
}

TEST(MinReplicas, AReplicaLaggingDuringOneRenewalIsRetriedWithinTheValidity) {
  RedisServer master;
  RedisServer replica(RedisServer::Options{.extra = {"--replicaof", "127.0.0.1", std::to_string(master.port())}});
  ASSERT_TRUE(eventually([&] { return replica_connected(replica); }, Seconds(10)));
  TempDir dir;
  Env env{{"REDLOCK_URL", master.url()}, {"D", dir.path()}};
  // Renewals every 1 s; the replica stalls through one of them, then
  // catches up well before the lock's 3 s validity ends.
  Child c({"--min-replicas", "1", "--redis-timeout", "400ms", "exec", "--ttl", "3s", "lagging", "--", "sh", "-c",
           "touch \"$D/started\"; sleep 4"},
          env);
  ASSERT_TRUE(eventually([&] { return access((dir.path() + "/started").c_str(), F_OK) == 0; }, Seconds(10)));
  struct timespec before {
    0, 800'000'000
  };
  nanosleep(&before, nullptr);
  replica.pause();
  struct timespec stall {
    1, 0
  };
  nanosleep(&stall, nullptr);
  replica.resume();
  Result r = c.wait(Seconds(20));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(master.cmd({"EXISTS", lock_key("lagging")}).integer, 0);
}
