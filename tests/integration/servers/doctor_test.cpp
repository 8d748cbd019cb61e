// redlock doctor against real servers: each finding that should fail a
// deployment does (exit 1), what it cannot read is a warning, and a server
// that cannot be reached is a failed check rather than an error.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

// The line of the report for `check` whose level is `level`, or "".
std::string line_of(const std::string& out, const std::string& level, const std::string& check) {
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = out.find('\n', at);
    const std::string line = out.substr(at, end - at);
    if (line.rfind(level, 0) == 0 && line.find(" " + check + " ") != std::string::npos) {
      return line;
    }
    if (end == std::string::npos) {
      break;
    }
    at = end + 1;
  }
  return "";
}

// The part of the report under "server URL": that server's checks.
std::string section_of(const std::string& out, const std::string& url) {
  const std::string header = "server " + url + "\n";
  const size_t at = out.find(header);
  if (at == std::string::npos) {
    return "";
  }
  const size_t end = out.find("\n\n", at);
  return out.substr(at + header.size(), end == std::string::npos ? std::string::npos : end + 1 - at - header.size());
}

// A port nothing listens on (a server started, then stopped).
int dead_port() {
  RedisServer gone;
  const int port = gone.port();
  gone.stop();
  return port;
}

}  // namespace

TEST(Doctor, AHealthyServerPassesWithOnlyWarnings) {
  RedisServer redis;
  Result r = run({"doctor"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  for (const char* check : {"reach", "auth", "version", "acl", "eviction", "clients", "replicas", "clock", "rtt"}) {
    EXPECT_NE(line_of(r.out, "ok", check), "") << check << "\n" << r.out;
  }
  // The test servers keep nothing: a restart forgets every lock.
  EXPECT_NE(line_of(r.out, "warn", "persistence").find("restart"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
  // The one server is named once, above its checks.
  const std::string header = "server " + redis.url() + "\n";
  EXPECT_EQ(r.out.rfind(header, 0), 0U) << r.out;
  EXPECT_EQ(r.out.find(redis.url(), header.size()), std::string::npos) << r.out;
}

TEST(Doctor, AnEvictingPolicyWithAMemoryLimitFails) {
  RedisServer redis(RedisServer::Options{.extra = {"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"}});
  Result r = run({"doctor"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(line_of(r.out, "fail", "eviction").find("noeviction"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("eviction"), std::string::npos) << r.err;
}

TEST(Doctor, AServerNearlyOutOfClientSlotsFails) {
  // Each exec that holds a lock keeps two connections (its renewals, and the
  // revoke channel): four of them nearly fill a server of ten client slots.
  RedisServer redis(RedisServer::Options{.extra = {"--maxclients", "10"}});
  const Env env{{"REDLOCK_URL", redis.url()}};
  Result roomy = run({"doctor"}, env);
  EXPECT_NE(line_of(roomy.out, "ok", "clients").find("of maxclients 10 connected"), std::string::npos) << roomy.out;
  std::vector<std::unique_ptr<Child>> holders;
  for (int i = 0; i < 4; ++i) {
    holders.push_back(std::make_unique<Child>(
        std::vector<std::string>{"exec", "--ttl", "60s", "job" + std::to_string(i), "--", "sleep", "60"}, env));
  }
  const auto connected = [&] {
    const std::string info = redis.cmd({"INFO", "clients"}).str;
    const size_t at = info.find("connected_clients:");
    return at == std::string::npos ? 0 : std::stoi(info.substr(at + 18));
  };
  ASSERT_TRUE(eventually([&] { return connected() >= 9; }, Seconds(20))) << connected();
  Result full = run({"doctor"}, env);
  EXPECT_EQ(full.status, 1) << full.out << full.err;
  EXPECT_NE(line_of(full.out, "fail", "clients").find("maxclients"), std::string::npos) << full.out;
  EXPECT_NE(full.err.find("clients"), std::string::npos) << full.err;
  for (auto& h : holders) {
    h->signal(SIGTERM);
  }
  for (auto& h : holders) {
    (void)h->wait(Seconds(20));
  }
}

TEST(Doctor, AMasterAndItsReplicaAreNotARedlock) {
  Servers s(2);
  s[1].cmd({"REPLICAOF", "127.0.0.1", std::to_string(s[0].port())});
  for (int i = 0; i < 100 && s[1].cmd({"INFO", "replication"}).str.find("master_link_status:up") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Result r = run({"doctor", "-r", s[0].url(), "-r", s[1].url()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(line_of(r.out, "fail", "independence"), "") << r.out;
  EXPECT_NE(line_of(section_of(r.out, s[1].url()), "fail", "replicas"), "") << r.out;
  EXPECT_EQ(line_of(section_of(r.out, s[0].url()), "fail", "replicas"), "") << r.out;
}

TEST(Doctor, OneServerUnderTwoNamesIsNotARedlock) {
  Servers s(2);
  Result r = run({"doctor", "-r", s[0].url(), "-r", s[0].url() + "/1", "-r", s[1].url()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(line_of(r.out, "fail", "independence").find("one server"), std::string::npos) << r.out;
  Result ok = run({"doctor", "--json"}, s.env());
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  const json j = json::parse(ok.out);
  ASSERT_TRUE(j.is_array());
  bool independent = false;
  for (const auto& f : j) {
    ASSERT_TRUE(f.contains("check") && f.contains("level") && f.contains("server") && f.contains("detail") &&
                f.contains("advice"))
        << f.dump();
    independent |= f["check"] == "independence" && f["level"] == "ok" && f["server"].is_null();
  }
  EXPECT_TRUE(independent) << ok.out;
}

TEST(Doctor, AUserWithoutTheRightsFailsWithoutALockTaken) {
  RedisServer redis;
  ASSERT_EQ(redis.cmd({"ACL", "SETUSER", "other", "on", ">pw", "~elsewhere:*", "+@all"}).str, "OK");
  const Env env{{"REDLOCK_URL", "redis://other:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "pw"}};
  Result r = run({"doctor"}, env);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(line_of(r.out, "fail", "acl").find("redlock:{doctor}"), std::string::npos) << r.out;
  EXPECT_EQ(redis.cmd({"DBSIZE"}).integer, 0) << "nothing written";
}

TEST(Doctor, WhatTheUserMayNotReadIsAWarningNotACrash) {
  // The least ACL redlock-safety(7) gives: no INFO, no CONFIG, no ACL commands.
  RedisServer redis;
  ASSERT_EQ(redis
                .cmd({"ACL",           "SETUSER",    "locker",  "on",     ">pw",      "resetkeys",  "~redlock:*",
                      "resetchannels", "&redlock:*", "-@all",   "+eval",  "+evalsha", "+subscribe", "+unsubscribe",
                      "+ping",         "+scan",      "+wait",   "+type",  "+hmget",   "+hgetall",   "+hset",
                      "+hdel",         "+hincrby",   "+del",    "+get",   "+set",     "+pexpire",   "+pttl",
                      "+time",         "+publish",   "+hget",   "+zadd",  "+zrem",    "+zrange",    "+zrangebyscore",
                      "+zrank",        "+zscore",    "+zcount", "+zcard", "+zscan",   "+xadd",      "+xdel",
                      "+xrevrange",    "+xlen"})
                .str,
            "OK");
  const Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "pw"}};
  Result r = run({"doctor"}, env);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(line_of(r.out, "ok", "acl"), "") << r.out;
  EXPECT_NE(line_of(r.out, "warn", "eviction").find("could not read"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "warn", "persistence"), "") << r.out;
  EXPECT_NE(line_of(r.out, "warn", "version"), "") << r.out;
}

TEST(Doctor, AServerThatCannotBeReachedIsAFailedCheck) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(dead_port());
  Result r = run({"doctor", "--connect-timeout", "300ms"}, {{"REDLOCK_URL", url}});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(line_of(r.out, "fail", "reach"), "") << r.out;
  RedisServer locked(RedisServer::Options{.requirepass = "right"});
  Result wrong = run({"doctor"}, {{"REDLOCK_URL", locked.url()}, {"REDLOCK_PASSWORD", "wrong"}});
  EXPECT_EQ(wrong.status, 1) << wrong.out << wrong.err;
  EXPECT_NE(line_of(wrong.out, "fail", "auth"), "") << wrong.out;
  EXPECT_EQ(wrong.out.find("wrong"), std::string::npos) << "the password is never shown";
}

TEST(Doctor, BadInputIsAUsageErrorBeforeAnyTraffic) {
  RedisServer redis;
  const long long before = redis.commands_run();
  Result r = run({"doctor", "--ttl", "soon"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_EQ(redis.commands_run(), before);
}
