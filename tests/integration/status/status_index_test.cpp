// status without names lists the locks from the index of held locks that
// the scripts keep (<prefix>index), reads them fifty a call, pipelined,
// and never scans a keyspace it shares with others; it scans where there
// is no index (a server only older versions used) and with --scan.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lock/keys.hpp"
#include "lock_support.hpp"
#include "servers.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

// A lock hash as a redlock before 0.2 writes it: no entry in the index.
void hold_the_old_way(const RedisServer& redis, const std::string& name) {
  const std::string k = lock_key(name);
  redis.cmd({"HSET", k,          "schema", "redlock/1", "token", "old", "count",    "1", "fence",  "1",
             "host", "old-host", "pid",    "1",         "cmd",   "c",   "since_ms", "1", "ttl_ms", "60000"});
  redis.cmd({"PEXPIRE", k, "60000"});
}

std::vector<std::string> names_in(const std::string& out) {
  std::vector<std::string> names;
  for (const auto& l : json::parse(out)) {
    names.push_back(l["name"]);
  }
  return names;
}

RedisServer::Options with_debug() {
  RedisServer::Options o;
  o.extra = debug_command_options();
  return o;
}

class StatusIndex : public WithRedis {
 protected:
  StatusIndex() : WithRedis(with_debug()) {}
};

}  // namespace

TEST_F(StatusIndex, ListsTwentyLocksBesideManyOtherKeysWithoutScanning) {
  // A Redis shared with a cache: SCAN would take 200 calls to find 20 locks.
  ASSERT_EQ(redis.cmd({"DEBUG", "POPULATE", "200000", "cache"}).str, "OK");
  hold_locks(redis, 20);
  (void)redis.cmd({"CONFIG", "RESETSTAT"});
  Result s = rl({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out).size(), 20u);
  EXPECT_EQ(redis.calls("scan"), 0);
  EXPECT_EQ(redis.calls("keys"), 0);
  EXPECT_EQ(redis.calls("zscan"), 1);
  // No SCAN, and a few commands: the time is the benchmark's to measure
  // (status of 20 locks beside 1,000,000 keys).
  EXPECT_LE(client_commands(redis), 10);
}

TEST_F(StatusIndex, FiveHundredLocksCostFewCommandsAndOneValidDocument) {
  hold_locks(redis, 500);
  take("mine");
  (void)redis.cmd({"CONFIG", "RESETSTAT"});
  Result s = rl({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  const json all = json::parse(s.out);  // throws (a failure) unless one whole document
  ASSERT_TRUE(all.is_array());
  EXPECT_EQ(all.size(), 501u);
  for (const auto& l : all) {
    EXPECT_EQ(l["held"], true) << l;
  }
  // 11 calls of inspect and 11 of the line (50 locks a call), one ZSCAN:
  // no SCAN, no CONFIG GET (doctor's and the metrics'), nothing per lock.
  EXPECT_EQ(redis.calls("config|get"), 0);
  EXPECT_LE(client_commands(redis), 40) << redis.cmd({"INFO", "commandstats"}).str;
  EXPECT_EQ(redis.calls("scan"), 0);
  Result t = rl({"status"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(split_lines(t.out).size(), 502u);
}

TEST_F(StatusIndex, ALockLeavesTheIndexWithItsReleaseAndAnEndedOneIsPruned) {
  const std::string index = redlock::lock::index_key("redlock:");
  const std::string token = take("kept");
  EXPECT_GT(redis.cmd({"ZSCORE", index, key("kept")}).str, "");
  ASSERT_EQ(rl({"exec", "brief", "--", "true"}).status, 0);
  ASSERT_EQ(rl({"release", "--token", token, "kept"}).status, 0);
  // The marker alone stays: the index never expires, and holds no lock.
  EXPECT_EQ(redis.cmd({"ZCARD", index}).integer, 1);
  EXPECT_EQ(redis.cmd({"PTTL", index}).integer, -1);
  // A lock that expires is found free by status, and pruned by the next write.
  take("expires", {"--ttl", "200ms"});
  sleep_for(0.4);
  Result s = rl({"status", "--json"});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out), json::array());
  take("next");
  EXPECT_EQ(redis.cmd({"ZSCORE", index, key("expires")}).type, redlock::redis::Reply::Type::k_nil);
  EXPECT_EQ(names_in(rl({"status", "--json"}).out), std::vector<std::string>{"next"});
}

TEST_F(StatusIndex, TheIndexScoreIsTheEndOfTheLease) {
  const std::string index = redlock::lock::index_key("redlock:");
  const std::string token = take("lease", {"--ttl", "10s"});
  const auto end_of_lease = [&] {
    return std::stoll(redis.cmd({"ZSCORE", index, key("lease")}).str) - redis.time_us() / 1000;
  };
  EXPECT_GT(end_of_lease(), 9'000);
  EXPECT_LE(end_of_lease(), 10'000);
  ASSERT_EQ(rl({"renew", "--token", token, "--ttl", "60s", "lease"}).status, 0);
  EXPECT_GT(end_of_lease(), 59'000);
  EXPECT_LE(end_of_lease(), 60'000);
}

TEST_F(StatusIndex, LocksOfOlderVersionsAreScannedWhereNoIndexIsAndWithScan) {
  // Only versions before 0.2 have held locks here: no index, SCAN finds them.
  hold_the_old_way(redis, "old");
  Result before = rl({"status", "--json"});
  ASSERT_EQ(before.status, 0) << before.err;
  EXPECT_EQ(names_in(before.out), std::vector<std::string>{"old"});
  EXPECT_GT(redis.calls("scan"), 0);
  // Once a new redlock holds a lock, the index lists what it holds...
  take("new");
  Result indexed = rl({"status", "--json"});
  ASSERT_EQ(indexed.status, 0) << indexed.err;
  EXPECT_EQ(names_in(indexed.out), std::vector<std::string>{"new"});
  // ... and --scan, or the name, finds the others too.
  Result scanned = rl({"status", "--json", "--scan"});
  ASSERT_EQ(scanned.status, 0) << scanned.err;
  EXPECT_EQ(names_in(scanned.out), (std::vector<std::string>{"new", "old"}));
  Result named = rl({"status", "old"});
  EXPECT_EQ(named.status, 0) << named.err;
  EXPECT_NE(named.out.find("old-host"), std::string::npos) << named.out;
}

// An empty listing read from the index says where an old host's locks are;
// one that scanned the keyspace has nothing more to find.
TEST_F(StatusIndex, AnEmptyListingFromTheIndexPointsAtScan) {
  Result scanned = rl({"status"});
  ASSERT_EQ(scanned.status, 0) << scanned.err;
  EXPECT_NE(scanned.err.find("no locks under the prefix"), std::string::npos) << scanned.err;
  EXPECT_EQ(scanned.err.find("--scan"), std::string::npos) << "no index: the listing scanned already";
  const std::string token = take("gone");
  ASSERT_EQ(rl({"release", "--token", token, "gone"}).status, 0);
  Result indexed = rl({"status"});
  ASSERT_EQ(indexed.status, 0) << indexed.err;
  EXPECT_NE(indexed.err.find("status --scan also lists the locks of redlock versions before 0.2"), std::string::npos)
      << indexed.err;
  Result with_scan = rl({"status", "--scan"});
  EXPECT_EQ(with_scan.err.find("also lists"), std::string::npos) << with_scan.err;
}

TEST_F(StatusIndex, AnIndexKeyRedlockDidNotWriteIsLeftAloneAndScannedAround) {
  const std::string index = redlock::lock::index_key("redlock:");
  redis.cmd({"SET", index, "someone else's"});
  take("a");
  Result s = rl({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(names_in(s.out), std::vector<std::string>{"a"});
  EXPECT_EQ(redis.cmd({"GET", index}).str, "someone else's");
}

TEST_F(StatusIndex, NamesWithBracesAndPrefixesWithTagsAreListedAsGiven) {
  for (const std::string name : {"{a}", "a}b", "}{", "c{"}) {
    take(name);
  }
  take("x", {"--prefix", "app{1}:"});
  Result s = rl({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(names_in(s.out), (std::vector<std::string>{"a}b", "c{", "{a}", "}{"}));
  EXPECT_EQ(redis.calls("scan"), 0);
  Result tagged = rl({"status", "--json", "--prefix", "app{1}:"});
  ASSERT_EQ(tagged.status, 0) << tagged.err;
  EXPECT_EQ(names_in(tagged.out), std::vector<std::string>{"x"});
}

TEST(StatusIndexRedlock, EachServerKeepsItsIndexAndStatusListsWhatAnyHolds) {
  Servers s(3);
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "everywhere"}, s.env()).status, 0);
  // A lock that only one server holds (the others lost it) is still listed.
  s[1].cmd({"HSET",   lock_key("one"), "schema", "redlock/1", "token", "t",   "count", "1",        "fence",
            "1",      "host",          "h",      "pid",       "1",     "cmd", "c",     "since_ms", "1",
            "ttl_ms", "60000"});
  s[1].cmd({"PEXPIRE", lock_key("one"), "60000"});
  s[1].cmd({"ZADD", redlock::lock::index_key("redlock:"), "9999999999999", lock_key("one")});
  Result st = run({"status", "--json"}, s.env());
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_EQ(names_in(st.out), (std::vector<std::string>{"everywhere"}));  // "one" lacks a quorum: not held
  Result named = run({"status", "--json", "one"}, s.env());
  EXPECT_EQ(named.status, 1) << named.err;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s[i].calls("scan"), 0) << i;
    EXPECT_GE(s[i].calls("zscan"), 1) << i;
  }
}
