// Acquire, release, renew, re-entry and fences on one real redis-server,
// driven through the built binary: one behaviour per test, asserted on exit
// status, output and the keys in Redis (redlock-acquire(1), EXIT STATUS;
// redlock-safety(7), KEYS and SAFETY).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

class Acquire : public WithRedis {};
class Release : public WithRedis {};
class Renew : public WithRedis {};
class Reentry : public WithRedis {};
class Fence : public WithRedis {};

// The --json answer for a lock that kept its 2-minute lease though a
// shorter TTL was asked for.
void expect_two_minute_lease(const Result& r) {
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_GT(j["ttl_ms"].get<long long>(), 100'000) << r.out;
  EXPECT_LE(j["ttl_ms"].get<long long>(), 120'000) << r.out;
}

}  // namespace

// ---------------------------------------------------------------- acquire

TEST_F(Acquire, PrintsAFreshHexTokenAndStoresTheOwner) {
  const long long before_us = redis.time_us();
  Result r = rl({"acquire", "job", "--ttl", "10s"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  std::string token = first_line(r.out);
  EXPECT_EQ(r.out, token + "\n");
  EXPECT_GE(token.size(), 32u);
  EXPECT_TRUE(is_hex(token)) << token;
  auto h = hgetall(key("job"));
  EXPECT_EQ(h["token"], token);
  EXPECT_EQ(h["count"], "1");
  EXPECT_GE(std::stoll(h["fence"]), before_us);  // never below the server's clock in µs
  EXPECT_EQ(h["schema"], "redlock/1");
  EXPECT_EQ(h["host"], this_host());
  EXPECT_EQ(h["pid"], std::to_string(getpid()));
  EXPECT_EQ(h["ttl_ms"], "10000");
  EXPECT_FALSE(h["cmd"].empty());
  // since_ms is the server's clock (TIME), in milliseconds.
  auto time = redis.cmd({"TIME"});
  ASSERT_EQ(time.elements.size(), 2u);
  const long long server_ms = std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
  const long long since = std::stoll(h["since_ms"]);
  EXPECT_LE(since, server_ms);
  EXPECT_GT(since, server_ms - 5000);
}

TEST_F(Acquire, NeverLeavesTheLockWithoutAnExpiry) {
  take("ttl", {"--ttl", "10s"});
  long long left = pttl(key("ttl"));
  EXPECT_GT(left, 8000);
  EXPECT_LE(left, 10000);
}

TEST_F(Acquire, NamesThatAreAlsoSubcommandsAreLockNames) {
  // Only the first subcommand word is a subcommand: later ones are its own
  // words, as the whole command line reads them (the quick reading builds
  // no other subcommand).
  Result one = rl({"acquire", "status"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(hgetall(key("status"))["token"], first_line(one.out));
  Result two = rl({"acquire", "--ttl", "10s", "release", "exec"});
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_FALSE(hgetall(key("release")).empty());
  EXPECT_FALSE(hgetall(key("exec")).empty());
  Result gone = rl({"release", "--token", first_line(two.out), "release", "exec"});
  EXPECT_EQ(gone.status, 0) << gone.err;
  EXPECT_TRUE(hgetall(key("exec")).empty());
}

TEST_F(Acquire, HandsOutADifferentTokenEachTime) {
  std::string a = take("one");
  std::string b = take("two");
  EXPECT_NE(a, b);
}

TEST_F(Acquire, SecondHolderGetsBusyWithTtlLeft) {
  std::string holder = take("deploy", {"--ttl", "20s"});
  Result r = rl({"acquire", "deploy"});
  EXPECT_EQ(r.status, 75);
  EXPECT_TRUE(r.out.empty()) << r.out;
  ASSERT_TRUE(one_line(r.err));
  EXPECT_NE(r.err.find("deploy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(this_host()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pid " + std::to_string(getpid())), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more"), std::string::npos) << r.err;  // "for 19.9s more"
  EXPECT_EQ(hget(key("deploy"), "token"), holder);
}

TEST_F(Acquire, OfTwoAtOnceExactlyOneWins) {
  for (int round = 0; round < 5; ++round) {
    std::string name = "race" + std::to_string(round);
    Child a({"acquire", name, "--ttl", "10s"}, env());
    Child b({"acquire", name, "--ttl", "10s"}, env());
    Result ra = a.wait(Seconds(10));
    Result rb = b.wait(Seconds(10));
    std::vector<int> statuses{ra.status, rb.status};
    std::sort(statuses.begin(), statuses.end());
    ASSERT_EQ(statuses, (std::vector<int>{0, 75})) << ra.err << rb.err;
    const Result& winner = ra.status == 0 ? ra : rb;
    const Result& loser = ra.status == 0 ? rb : ra;
    EXPECT_EQ(hget(key(name), "token"), first_line(winner.out));
    EXPECT_TRUE(loser.out.empty());
    EXPECT_TRUE(one_line(loser.err));
    EXPECT_NE(loser.err.find(this_host()), std::string::npos) << loser.err;
  }
}

TEST_F(Acquire, ExpiryFreesTheLock) {
  // Long enough for a loaded machine to start the second redlock in it.
  std::string first = take("short", {"--ttl", "2s"});
  const long long first_fence = std::stoll(hget(key("short"), "fence"));
  EXPECT_EQ(rl({"acquire", "short"}).status, 75);
  ASSERT_TRUE(eventually([&] { return !exists(key("short")); }, Seconds(10)));
  Result r = rl({"acquire", "short"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(first_line(r.out), first);
  EXPECT_GT(std::stoll(hget(key("short"), "fence")), first_fence);
}

TEST_F(Acquire, JsonHasTokenFenceTtlAndValidity) {
  Result r = rl({"acquire", "js", "--ttl", "5s", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_TRUE(j["token"].is_string());
  std::string token = j["token"];
  EXPECT_GE(token.size(), 32u);
  EXPECT_EQ(hget(key("js"), "token"), token);
  EXPECT_EQ(std::to_string(j["fence"].get<long long>()), hget(key("js"), "fence"));
  EXPECT_EQ(j["ttl_ms"], 5000);
  ASSERT_TRUE(j["validity_ms"].is_number_integer());
  long long validity = j["validity_ms"];
  // ttl - elapsed - (ttl * 1% + 2ms): below 4948, and well above 0 here.
  EXPECT_LE(validity, 4948);
  EXPECT_GT(validity, 3000);
}

TEST_F(Acquire, ConflictExitCodeReplaces75) {
  take("cc");
  Result r = rl({"acquire", "cc", "--conflict-exit-code", "3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(one_line(r.err));
}

TEST_F(Acquire, QuietSaysNothingWhenBusy) {
  take("q");
  Result r = rl({"-q", "acquire", "q"});
  EXPECT_EQ(r.status, 75);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
}

TEST_F(Acquire, ATokenNeverTakesAFreeLockUnderTheCallersString) {
  const std::string mine(40, 'a');
  Result r = rl({"acquire", "free", "--token", mine});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string token = first_line(r.out);
  EXPECT_NE(token, mine);
  EXPECT_TRUE(is_hex(token));
  EXPECT_EQ(hget(key("free"), "token"), token);
  EXPECT_EQ(hget(key("free"), "count"), "1");
}

TEST_F(Acquire, ATokenThatDoesNotHoldTheLockIsBusy) {
  std::string holder = take("other", {"--ttl", "10s"});
  auto before = hgetall(key("other"));
  Result r = rl({"acquire", "other", "--token", std::string(40, 'b')});
  EXPECT_EQ(r.status, 75);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(hgetall(key("other")), before);
}

// ---------------------------------------------------------------- release / renew

TEST_F(Release, FreesTheLockAndItsKey) {
  std::string t = take("rel");
  Result r = rl({"release", "rel", "--token", t});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(exists(key("rel")));
  EXPECT_FALSE(take("rel").empty());
}

TEST_F(Release, TakesTheTokenFromTheEnvironment) {
  std::string t = take("envtok");
  Result r = rl({"release", "envtok"}, {{"REDLOCK_TOKEN", t}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(exists(key("envtok")));
}

TEST_F(Release, WrongTokenExits1AndChangesNothing) {
  std::string t = take("wr", {"--ttl", "20s"});
  std::string other = take("elsewhere");  // a real token, of another lock
  auto before = hgetall(key("wr"));
  long long ttl_before = pttl(key("wr"));
  for (const std::string& wrong : {std::string(40, 'f'), other, t.substr(0, 39), t + "0"}) {
    SCOPED_TRACE(wrong);
    Result r = rl({"release", "wr", "--token", wrong});
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(one_line(r.err));
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(hgetall(key("wr")), before);
  long long ttl_after = pttl(key("wr"));
  EXPECT_LE(ttl_after, ttl_before);
  EXPECT_GT(ttl_after, ttl_before - 3000);
}

TEST_F(Release, AnExpiredHoldersTokenCannotReleaseTheNextHolder) {
  std::string old = take("succ", {"--ttl", "200ms"});
  ASSERT_TRUE(eventually([&] { return !exists(key("succ")); }, Seconds(3)));
  std::string now = take("succ", {"--ttl", "10s"});
  Result r = rl({"release", "succ", "--token", old});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(hget(key("succ"), "token"), now);
}

TEST_F(Release, OfAFreeLockExits1) {
  Result r = rl({"release", "never", "--token", std::string(40, 'c')});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(one_line(r.err));
  EXPECT_FALSE(exists(key("never")));
}

TEST_F(Renew, ExtendsTheHoldersTtl) {
  std::string t = take("ren", {"--ttl", "2s"});
  Result r = rl({"renew", "ren", "--token", t, "--ttl", "60s"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_GT(pttl(key("ren")), 50'000);
  EXPECT_EQ(hget(key("ren"), "ttl_ms"), "60000");
  EXPECT_EQ(hget(key("ren"), "token"), t);
}

TEST_F(Renew, JsonHasTtlAndValidity) {
  std::string t = take("renj", {"--ttl", "5s"});
  Result r = rl({"renew", "renj", "--token", t, "--ttl", "10s", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["ttl_ms"], 10000);
  long long validity = j["validity_ms"];
  EXPECT_LE(validity, 10000 - 102);
  EXPECT_GT(validity, 8000);
}

TEST_F(Renew, JsonReportsTheLeaseKeptWhenItIsLongerThanAsked) {
  // A renewal never shortens a lease, so --json reports the 2 minutes the
  // lock keeps, not the 5 s asked for.
  std::string t = take("renl", {"--ttl", "2m"});
  expect_two_minute_lease(rl({"renew", "renl", "--token", t, "--ttl", "5s", "--json"}));
  EXPECT_GT(pttl(key("renl")), 100'000);
}

TEST_F(Renew, WrongTokenExits1AndChangesNothing) {
  take("wn", {"--ttl", "10s"});
  auto before = hgetall(key("wn"));
  long long ttl_before = pttl(key("wn"));
  Result r = rl({"renew", "wn", "--token", std::string(40, 'e'), "--ttl", "60s"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(one_line(r.err));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(hgetall(key("wn")), before);
  long long ttl_after = pttl(key("wn"));
  EXPECT_LE(ttl_after, ttl_before);
  EXPECT_GT(ttl_after, ttl_before - 3000);
}

TEST_F(Renew, AfterExpiryDoesNotRecreateTheKey) {
  std::string t = take("gone", {"--ttl", "200ms"});
  ASSERT_TRUE(eventually([&] { return !exists(key("gone")); }, Seconds(3)));
  Result r = rl({"renew", "gone", "--token", t, "--ttl", "30s"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(one_line(r.err));
  EXPECT_FALSE(exists(key("gone")));
}

// ---------------------------------------------------------------- re-entry

TEST_F(Reentry, CountsUpAndReleaseCountsDown) {
  std::string t = take("re", {"--ttl", "20s"});
  std::string fence = hget(key("re"), "fence");

  Result again = rl({"acquire", "re", "--token", t});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(first_line(again.out), t);
  EXPECT_EQ(hget(key("re"), "count"), "2");
  Result third = rl({"acquire", "re"}, {{"REDLOCK_TOKEN", t}});
  ASSERT_EQ(third.status, 0) << third.err;
  EXPECT_EQ(first_line(third.out), t);
  EXPECT_EQ(hget(key("re"), "count"), "3");
  EXPECT_EQ(hget(key("re"), "fence"), fence);  // the same holder keeps its fence

  EXPECT_EQ(rl({"release", "re", "--token", t}).status, 0);
  EXPECT_EQ(hget(key("re"), "count"), "2");
  EXPECT_EQ(rl({"release", "re", "--token", t}).status, 0);
  EXPECT_EQ(hget(key("re"), "count"), "1");
  EXPECT_TRUE(exists(key("re")));
  EXPECT_EQ(rl({"release", "re", "--token", t}).status, 0);
  EXPECT_FALSE(exists(key("re")));
  EXPECT_EQ(rl({"release", "re", "--token", t}).status, 1);
}

TEST_F(Reentry, JsonReportsTheDepth) {
  std::string t = take("rej");
  Result r = rl({"acquire", "rej", "--token", t, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["token"], t);
  EXPECT_EQ(std::to_string(j["fence"].get<long long>()), hget(key("rej"), "fence"));  // the holder's own fence
  EXPECT_EQ(j["count"], 2);
}

TEST_F(Reentry, JsonReportsTheLeaseKeptWhenItIsLongerThanAsked) {
  std::string t = take("rel", {"--ttl", "2m"});
  expect_two_minute_lease(rl({"acquire", "rel", "--token", t, "--ttl", "5s", "--json"}));
}

TEST_F(Reentry, ExtendsAShorterTtl) {
  std::string t = take("ext", {"--ttl", "2s"});
  ASSERT_EQ(rl({"acquire", "ext", "--token", t, "--ttl", "60s"}).status, 0);
  EXPECT_GT(pttl(key("ext")), 50'000);
}

// ---------------------------------------------------------------- fences

TEST_F(Fence, StrictlyIncreasesOver100Holders) {
  long long last = 0;
  for (int i = 0; i < 100; ++i) {
    Result a = rl({"acquire", "fenced", "--json"});
    ASSERT_EQ(a.status, 0) << a.err;
    json j = json::parse(a.out);
    long long fence = j["fence"];
    ASSERT_GT(fence, last) << "holder " << i;
    last = fence;
    ASSERT_EQ(rl({"release", "fenced", "--token", j["token"].get<std::string>()}).status, 0);
  }
  EXPECT_EQ(redis.cmd({"GET", key("fenced") + ":fence"}).str, std::to_string(last));
  EXPECT_EQ(pttl(key("fenced") + ":fence"), -1);  // the counter never expires
}

TEST_F(Fence, IncreasesAcrossAnExpiry) {
  Result first = rl({"acquire", "fx", "--ttl", "150ms", "--json"});
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_TRUE(eventually([&] { return !exists(key("fx")); }, Seconds(3)));
  Result r = rl({"acquire", "fx", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(json::parse(r.out)["fence"].get<long long>(), json::parse(first.out)["fence"].get<long long>());
}

TEST(AcquireOutput, ATokenThatCannotBeWrittenIsGivenBack) {
  RedisServer redis;
  for (const std::string redirect : {">&-", ">/dev/full"}) {
    Child shell({"-c", "\"$0\" acquire --redis \"$1\" unwritten " + redirect, redlock_binary(), redis.url()}, {},
                std::string("sh"));
    Result r = shell.wait();
    EXPECT_EQ(r.status, 74) << redirect << ": " << r.err;
    EXPECT_NE(r.err.find("released"), std::string::npos) << r.err;
    EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{unwritten}"}).integer, 0) << redirect;
  }
}

TEST_F(Acquire, AFenceCounterThatIsNotANumberExits76AndWritesNothing) {
  // The lock key is free but its fence counter is someone else's list:
  // it is refused as foreign, before anything is written.
  const std::string fence = key("fc") + ":fence";
  redis.cmd({"RPUSH", fence, "x"});
  Result r = rl({"acquire", "fc"});
  EXPECT_EQ(r.status, 76) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(r.err));
  // Said as any key redlock did not write, not as a raw script error.
  EXPECT_NE(r.err.find("(it holds a list where its fence counter (" + fence + ") belongs)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("remove it or use another --prefix"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(key("fc")));
  EXPECT_EQ(redis.cmd({"LRANGE", fence, "0", "-1"}).elements.size(), 1u);
  // A string that is not a number fails the same way.
  redis.cmd({"SET", key("fs") + ":fence", "not a number"});
  Result s = rl({"acquire", "fs"});
  EXPECT_EQ(s.status, 76) << s.err;
  EXPECT_FALSE(exists(key("fs")));
  EXPECT_EQ(redis.cmd({"GET", key("fs") + ":fence"}).str, "not a number");
}

TEST_F(Fence, ACounterTheScriptCannotIncreaseExactlyExits76AndWritesNothing) {
  // The script's numbers are doubles: from 2^53 on they skip integers, so
  // counter + 1 may equal the counter (or print as garbage). Such a counter
  // was not written by redlock, whose fences are microseconds since 1970.
  const std::string counter = key("big") + ":fence";
  for (const std::string stored : {"9223372036854775807", "9223372036854775000", "9007199254740992", "9007199254740991",
                                   "1e30", "1.5", "-1", "inf", "nan"}) {
    SCOPED_TRACE(stored);
    redis.cmd({"SET", counter, stored});
    Result r = rl({"acquire", "big", "--json"});
    EXPECT_EQ(r.status, 76) << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(one_line(r.err));
    EXPECT_NE(r.err.find(counter), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("delete it only if you know no holder relies on its fences"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(key("big")));
    EXPECT_EQ(redis.cmd({"GET", counter}).str, stored);
  }
}

TEST_F(Fence, TheLastFenceBelowTwoToTheFiftyThreeIsHandedOutOnceAndThenRefused) {
  const std::string counter = key("top") + ":fence";
  redis.cmd({"SET", counter, "9007199254740990"});
  Result a = rl({"acquire", "top", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["fence"].get<long long>(), 9'007'199'254'740'991);
  EXPECT_EQ(redis.cmd({"GET", counter}).str, "9007199254740991");
  ASSERT_EQ(rl({"release", "--token", json::parse(a.out)["token"].get<std::string>(), "top"}).status, 0);
  Result b = rl({"acquire", "top", "--json"});
  EXPECT_EQ(b.status, 76) << b.out << b.err;
  EXPECT_TRUE(b.out.empty()) << b.out;
  EXPECT_FALSE(exists(key("top")));
}

TEST_F(Fence, ReenteringALockWhoseFenceIsUnusableExits76AndTakesNoLevel) {
  const std::string token = take("rebad");
  // What an older redlock's fence raising could leave in the lock's hash.
  redis.cmd({"HSET", key("rebad"), "fence", "9223372036854775807"});
  Result r = rl({"acquire", "rebad", "--token", token, "--json"});
  EXPECT_EQ(r.status, 76) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_NE(r.err.find("redlock break"), std::string::npos) << r.err;
  EXPECT_EQ(hget(key("rebad"), "count"), "1") << "no level was taken";
  // status and break show no fence rather than a number someone could use.
  Result st = rl({"status", "rebad", "--json"});
  ASSERT_EQ(st.status, 0) << st.err;
  json sj = json::parse(st.out)[0];
  EXPECT_TRUE(sj["fence"].is_null()) << st.out;
  EXPECT_TRUE(sj["holders"][0]["fence"].is_null()) << st.out;
  EXPECT_TRUE(sj["servers"][0]["fence"].is_null()) << st.out;
  Result table = rl({"status", "rebad"});
  EXPECT_EQ(table.out.find("9223372036854775807"), std::string::npos) << table.out;
  Result b = rl({"break", "rebad", "--json"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(json::parse(b.out)[0]["holders"][0]["fence"].is_null()) << b.out;
  EXPECT_FALSE(exists(key("rebad")));
}

TEST_F(Fence, ReenteringASemaphorePlaceWhoseFenceIsUnusableExits76AndTakesNoLevel) {
  const std::string token = take("sembad", {"--limit", "2"});
  const std::string field = "h:" + token;
  json entry = json::parse(hget(key("sembad"), field));
  entry["fence"] = "1e30";
  redis.cmd({"HSET", key("sembad"), field, entry.dump()});
  Result r = rl({"acquire", "sembad", "--limit", "2", "--token", token});
  EXPECT_EQ(r.status, 76) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_EQ(json::parse(hget(key("sembad"), field))["count"], 1) << "no level was taken";
  Result st = rl({"status", "sembad", "--json"});
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_TRUE(json::parse(st.out)[0]["holders"][0]["fence"].is_null()) << st.out;
}

// ---------------------------------------------------------------- names

// A name is any UTF-8 without control characters, braces included: with
// the default prefix every key of a lock is tagged by the name up to its
// first '}', and no two names share a key, not even one that looks like
// another lock's fence or line.
TEST_F(Acquire, NamesWithBracesAreLocksOfTheirOwn) {
  const std::vector<std::string> names = {"a",  "{a}",    "a}", "a{b}c", "a}:fence", "a}:line",
                                          "x{", "job{1}", "}",  "}x",    "}{a}"};
  std::map<std::string, std::string> tokens;
  for (const auto& name : names) {
    Result r = rl({"acquire", "--ttl", "60s", name});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    tokens[name] = first_line(r.out);
    EXPECT_EQ(hgetall(key(name))["token"], tokens[name]) << name;
  }
  for (const auto& name : names) {
    EXPECT_EQ(rl({"acquire", name}).status, 75) << name;
  }
  Result st = rl({"status", "--json"});
  ASSERT_EQ(st.status, 0) << st.err;
  std::set<std::string> listed;
  for (const auto& l : json::parse(st.out)) {
    listed.insert(l["name"].get<std::string>());
  }
  EXPECT_EQ(listed, std::set<std::string>(names.begin(), names.end()));
  for (const auto& name : names) {
    EXPECT_EQ(rl({"release", "--token", tokens[name], name}).status, 0) << name;
    EXPECT_EQ(redis.cmd({"EXISTS", key(name)}).integer, 0) << name;
  }
}

// Two prefixes are two name spaces even where braces would make their keys
// meet: prefix 'a' with name 'b}{c' was prefix 'a{b}' with name 'c'.
TEST_F(Acquire, BracesNeverMakeTwoPrefixesShareALock) {
  Result first = rl({"--prefix", "a", "acquire", "--ttl", "60s", "b}{c"});
  ASSERT_EQ(first.status, 0) << first.err;
  Result second = rl({"--prefix", "a{b}", "acquire", "--ttl", "60s", "c"});
  EXPECT_EQ(second.status, 0) << second.err;
  Result st = rl({"--prefix", "a", "status", "--json"});
  ASSERT_EQ(st.status, 0) << st.err;
  const auto listed = json::parse(st.out);
  ASSERT_EQ(listed.size(), 1U) << st.out;
  EXPECT_EQ(listed[0]["name"], "b}{c");
}

// A prefix may hold braces too: 'app{1}:' puts every lock in the slot of
// '1' (one Cluster node), 'en{v' tags each lock by 'v{' and its name.
TEST_F(Acquire, PrefixesWithBracesKeepEachLockToItself) {
  for (const std::string prefix : {"app{1}:", "en{v", "x}y:"}) {
    SCOPED_TRACE(prefix);
    std::map<std::string, std::string> tokens;
    for (const std::string name : {"a", "b", "{a}"}) {
      Result r = rl({"--prefix", prefix, "acquire", "--ttl", "60s", name});
      ASSERT_EQ(r.status, 0) << r.err;
      tokens[name] = first_line(r.out);
      EXPECT_EQ(redis.cmd({"HGET", lock_key(name, prefix), "token"}).str, tokens[name]);
      EXPECT_EQ(rl({"--prefix", prefix, "acquire", name}).status, 75);
    }
    Result st = rl({"--prefix", prefix, "status", "--json"});
    ASSERT_EQ(st.status, 0) << st.err;
    std::set<std::string> listed;
    for (const auto& l : json::parse(st.out)) {
      listed.insert(l["name"].get<std::string>());
    }
    EXPECT_EQ(listed, (std::set<std::string>{"a", "b", "{a}"}));
    for (const auto& [name, token] : tokens) {
      EXPECT_EQ(rl({"--prefix", prefix, "release", "--token", token, name}).status, 0) << name;
    }
  }
}
