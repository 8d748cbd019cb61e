// A lock of several names (acquire a b c, exec a b c -- CMD), against real
// servers and processes: all or nothing under one token, taken in sorted
// order (two commands asking in opposite orders never deadlock), the names
// already held kept alive while the next is waited for, lost together, a
// fence per name for the command, and nothing half-held after a failure,
// on one server and over three (Redlock).

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exec_support.hpp"
#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

// The exec fixture, with the binary under test as $RL for nested calls.
struct Fixture : ExecFixture {
  [[nodiscard]] Env env() const {
    Env e = ExecFixture::env();
    e["RL"] = redlock_binary();
    return e;
  }
};

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::string field(const RedisServer& redis, const std::string& name, const std::string& f) {
  return redis.cmd({"HGET", lock_key(name), f}).str;
}

long long pttl(const RedisServer& redis, const std::string& name) {
  return redis.cmd({"PTTL", lock_key(name)}).integer;
}

// The waiters in line for `name` on `redis`, as status --json says.
long long waiting(const Env& env, const std::string& name) {
  Result r = run({"status", "--json", name}, env);
  const json j = json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty()) {
    return -1;
  }
  const auto& w = j[0]["waiters"];
  return w.is_array() ? static_cast<long long>(w.size()) : (w.is_number() ? w.get<long long>() : -1);
}

}  // namespace

TEST(SeveralNames, AcquireTakesEveryNameUnderOneTokenAndReleaseGivesThemAllBack) {
  Fixture f;
  Result a = run({"acquire", "--json", "--ttl", "60s", "cc", "aa", "bb"}, f.env());
  ASSERT_EQ(a.status, 0) << a.err;
  const json j = json::parse(a.out);
  EXPECT_EQ(j["name"], "cc") << "the first name given";
  const std::string token = j["token"];
  ASSERT_EQ(j["locks"].size(), 3u) << a.out;
  const std::vector<std::string> order = {"aa", "bb", "cc"};
  for (size_t i = 0; i < order.size(); ++i) {
    const json& l = j["locks"][i];
    EXPECT_EQ(l["name"], order[i]) << "in the order taken";
    EXPECT_EQ(field(f.redis, order[i], "token"), token) << order[i];
    EXPECT_EQ(std::to_string(l["fence"].get<long long>()), field(f.redis, order[i], "fence")) << order[i];
    EXPECT_EQ(l["count"], 1);
  }
  EXPECT_EQ(j["fence"], j["locks"][2]["fence"]);
  EXPECT_EQ(run({"renew", "--token", token, "--ttl", "90s", "aa", "bb", "cc"}, f.env()).status, 0);
  EXPECT_GT(pttl(f.redis, "bb"), 60'000);
  Result rel = run({"release", "--token", token, "bb", "cc", "aa"}, f.env());
  EXPECT_EQ(rel.status, 0) << rel.err;
  for (const std::string name : {"aa", "bb", "cc"}) {
    EXPECT_FALSE(key_exists(f.redis, lock_key(name))) << name;
  }
}

TEST(SeveralNames, OneNameBusyTakesNothingAndNamesTheHolder) {
  Fixture f;
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "--note", "the other", "mid"}, f.env()).status, 0);
  // "mid" is taken second: the first name is taken, then given back.
  Result r = run({"acquire", "top", "mid", "low"}, f.env());
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(has(r.err, "mid is held")) << r.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("low")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("top")));
  Result e = run({"exec", "--wait", "300ms", "low", "mid", "top", "--", "touch", f.path("ran")}, f.env());
  EXPECT_EQ(e.status, 75) << e.err;
  EXPECT_FALSE(file_exists(f.path("ran"))) << "nothing runs without every name";
  EXPECT_FALSE(key_exists(f.redis, lock_key("low")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("top")));
}

TEST(SeveralNames, ReleaseAndRenewDoEveryNameTheTokenHoldsAndSayWhichItDoesNot) {
  Fixture f;
  Result a = run({"acquire", "--ttl", "60s", "p", "q"}, f.env());
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = a.out.substr(0, a.out.find('\n'));
  Result renew = run({"renew", "--token", token, "p", "q", "r"}, f.env());
  EXPECT_EQ(renew.status, 1);
  EXPECT_TRUE(has(renew.err, "r is not held")) << renew.err;
  Result rel = run({"release", "--token", token, "p", "q", "r"}, f.env());
  EXPECT_EQ(rel.status, 1);
  EXPECT_TRUE(has(rel.err, "r is not held")) << rel.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("p")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("q")));
}

TEST(SeveralNames, NamesTheTokenDoesNotHoldAreSaidInOneLine) {
  Fixture f;
  Result a = run({"acquire", "--ttl", "60s", "p"}, f.env());
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = a.out.substr(0, a.out.find('\n'));
  for (const std::string verb : {"renew", "release"}) {
    Result r = run({verb, "--token", token, "p", "r", "s"}, f.env());
    EXPECT_EQ(r.status, 1) << verb;
    EXPECT_TRUE(has(r.err, "r and s are not held by this token")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line, as for any status 1: " << r.err;
  }
  EXPECT_FALSE(key_exists(f.redis, lock_key("p")));
}

TEST(SeveralNames, ExecGivesAFencePerNameAndReleasesThemAll) {
  Fixture f;
  Result r = run({"exec", "zeta", "alpha", "--", "sh", "-c",
                  "echo \"$REDLOCK_NAME $REDLOCK_FENCE\"; printf '%s\\n' \"$REDLOCK_FENCES\" > \"$D/fences\"; "
                  "\"$RL\" status --json zeta alpha > \"$D/status\""},
                 f.env());
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(read_file(f.path("fences")));
  std::string line;
  std::vector<std::pair<std::string, long long>> fences;
  while (std::getline(lines, line)) {
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    fences.emplace_back(line.substr(space + 1), std::stoll(line.substr(0, space)));
  }
  ASSERT_EQ(fences.size(), 2u);
  EXPECT_EQ(fences[0].first, "alpha") << "in the order taken";
  EXPECT_EQ(fences[1].first, "zeta");
  EXPECT_EQ(r.out, "zeta " + std::to_string(fences[1].second) + "\n") << "REDLOCK_FENCE is the first name given's";
  EXPECT_FALSE(key_exists(f.redis, lock_key("alpha")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("zeta")));
}

TEST(SeveralNames, ANameWithSpacesAndBracesHasItsOwnFenceLine) {
  Fixture f;
  Result r = run({"exec", "a {b} c", "a", "--", "sh", "-c", "printf '%s\\n' \"$REDLOCK_FENCES\""}, f.env());
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(first.substr(first.find(' ') + 1), "a");
  EXPECT_EQ(second.substr(second.find(' ') + 1), "a {b} c");
}

TEST(SeveralNames, LosingOneOfThreeWhileTheCommandRunsEndsItWith74) {
  Fixture f;
  Child holder({"exec", "--ttl", "3s", "one", "two", "three", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_EQ(run({"break", "two"}, f.env()).status, 0);
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_TRUE(has(h.err, "two")) << h.err;
  EXPECT_TRUE(file_exists(f.path("term"))) << "the command got SIGTERM";
  for (const std::string name : {"one", "two", "three"}) {
    EXPECT_FALSE(key_exists(f.redis, lock_key(name))) << name << " was given back";
  }
}

TEST(SeveralNames, ANameTakenFirstIsKeptAliveWhileTheNextIsWaitedFor) {
  Fixture f;
  Result holder = run({"acquire", "--ttl", "60s", "second"}, f.env());
  ASSERT_EQ(holder.status, 0) << holder.err;
  const std::string token = holder.out.substr(0, holder.out.find('\n'));
  // A TTL of 1.5s: "first" would expire while "second" is waited for,
  // unless the waiting acquire renews it.
  Child waiter({"acquire", "--ttl", "1500ms", "--wait", "30s", "second", "first"}, f.env());
  ASSERT_TRUE(eventually([&] { return key_exists(f.redis, lock_key("first")); }, Seconds(10))) << waiter.err_so_far();
  const long long before = pttl(f.redis, "first");
  ASSERT_TRUE(eventually([&] { return pttl(f.redis, "first") > before; }, Seconds(10)))
      << "renewed while waiting: " << waiter.err_so_far();
  ASSERT_TRUE(eventually([&] { return waiting(f.env(), "second") == 1; }, Seconds(10))) << waiter.err_so_far();
  EXPECT_EQ(run({"release", "--token", token, "second"}, f.env()).status, 0);
  Result w = waiter.wait(Seconds(20));
  ASSERT_EQ(w.status, 0) << w.err;
  const std::string got = w.out.substr(0, w.out.find('\n'));
  EXPECT_EQ(field(f.redis, "first", "token"), got);
  EXPECT_EQ(field(f.redis, "second", "token"), got);
}

TEST(SeveralNames, AStopSignalWhileWaitingForTheSecondGivesTheFirstBack) {
  Fixture f;
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "yy"}, f.env()).status, 0);
  Child waiter({"acquire", "--wait", "60s", "xx", "yy"}, f.env());
  ASSERT_TRUE(eventually([&] { return waiting(f.env(), "yy") == 1; }, Seconds(10))) << waiter.err_so_far();
  EXPECT_TRUE(key_exists(f.redis, lock_key("xx")));
  waiter.signal(SIGTERM);
  Result w = waiter.wait(Seconds(10));
  EXPECT_EQ(w.status, 143) << w.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("xx")));
}

// A run starts once every name is held, just before the command: an exec
// killed while it waits for the second name (a reboot during a long --wait)
// leaves no run of a command that never ran, and the next run has nothing
// to say of it.
TEST(SeveralNames, AnExecKilledWhileWaitingForTheSecondNameLeavesNoRun) {
  Fixture f;
  Result holder = run({"acquire", "--ttl", "60s", "yy"}, f.env());
  ASSERT_EQ(holder.status, 0) << holder.err;
  const std::string token = holder.out.substr(0, holder.out.find('\n'));
  Child waiter({"exec", "--ttl", "1s", "--wait", "60s", "xx", "yy", "--", "true"}, f.env());
  ASSERT_TRUE(eventually([&] { return waiting(f.env(), "yy") == 1; }, Seconds(10))) << waiter.err_so_far();
  EXPECT_TRUE(key_exists(f.redis, lock_key("xx")));
  waiter.signal(SIGKILL);
  (void)waiter.wait(Seconds(10));
  for (const std::string name : {"xx", "yy"}) {
    Result h = run({"history", "--json", name}, f.env());
    EXPECT_EQ(h.status, 1) << name << ": " << h.out;
  }
  EXPECT_EQ(run({"release", "--token", token, "yy"}, f.env()).status, 0);
  ASSERT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("xx")); }, Seconds(10)));
  // The dead waiter's place in the line of yy lasts until its lease ends.
  Result next = run({"-q", "exec", "--wait", "30s", "xx", "yy", "--", "true"}, f.env());
  EXPECT_EQ(next.status, 0) << next.err;
  EXPECT_EQ(next.err, "") << "no run was abandoned";
  for (const std::string name : {"xx", "yy"}) {
    const json h = json::parse(run({"history", "--json", name}, f.env()).out);
    ASSERT_EQ(h.size(), 1u) << name << ": " << h.dump();
    EXPECT_EQ(h[0]["outcome"], "ok") << name;
  }
}

// Two commands that ask for the same names in opposite orders take them in
// one order: 100 rounds each, at once, never deadlock nor overlap.
TEST(SeveralNames, OppositeOrdersNeverDeadlockNorOverlap) {
  Fixture f;
  const std::string body =
      "for i in $(seq 100); do\n"
      "  \"$RL\" exec --wait 60s --ttl 10s \"$1\" \"$2\" -- sh -c 'mkdir \"$D/in\" && rmdir \"$D/in\"' || exit 1\n"
      "done\n";
  const std::string script = f.script(body);
  Child xy({script, "x", "y"}, f.env(), "sh");
  Child yx({script, "y", "x"}, f.env(), "sh");
  Result a = xy.wait(Seconds(120));
  Result b = yx.wait(Seconds(120));
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_LT(a.seconds, 100.0) << "a deadlock would wait out the 60s --wait";
  EXPECT_FALSE(key_exists(f.redis, lock_key("x")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("y")));
}

TEST(SeveralNames, ANestedExecReentersTheNamesItsExecHoldsAndTakesTheRest) {
  Fixture f;
  // The outer exec holds "b" and "c"; inside, exec "a b" re-enters "b"
  // and takes "a" (which sorts first) under the same token.
  Result r = run({"exec", "c", "b", "--", "sh", "-c",
                  "\"$RL\" exec a b -- sh -c '\"$RL\" status --json a b > \"$D/inner\"; echo \"$REDLOCK_TOKEN\"'; "
                  "echo \"$REDLOCK_TOKEN\"; \"$RL\" status --json b > \"$D/outer\""},
                 f.env());
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string inner, outer;
  std::getline(lines, inner);
  std::getline(lines, outer);
  EXPECT_EQ(inner, outer) << "one token for the names of both";
  const json in = json::parse(read_file(f.path("inner")));
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[1]["holders"][0]["count"], 2) << in.dump();
  const json out = json::parse(read_file(f.path("outer")));
  EXPECT_EQ(out[0]["holders"][0]["count"], 1) << "the inner exec gave back its level only: " << out.dump();
  EXPECT_FALSE(key_exists(f.redis, lock_key("a")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("b")));
}

TEST(SeveralNames, OverThreeServersOneDownMidWaitStillTakesEveryName) {
  Servers s(3);
  Result holder = run({"acquire", "--ttl", "60s", "n3"}, s.env());
  ASSERT_EQ(holder.status, 0) << holder.err;
  const std::string token = holder.out.substr(0, holder.out.find('\n'));
  Child waiter({"acquire", "--ttl", "10s", "--wait", "30s", "--redis-timeout", "300ms", "n1", "n2", "n3"}, s.env());
  ASSERT_TRUE(eventually([&] { return s.holders("n1") == 3 && s.holders("n2") == 3; }, Seconds(10)))
      << waiter.err_so_far();
  s[0].kill();
  EXPECT_EQ(run({"release", "--token", token, "--redis-timeout", "300ms", "n3"}, s.env()).status, 0);
  Result w = waiter.wait(Seconds(30));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(s.holders("n3"), 2);
  EXPECT_EQ(s.holders("n1"), 2);
}

TEST(SeveralNames, OverThreeServersAMajorityLostMidWaitLeavesNothingHeld) {
  Servers s(3);
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "m3"}, s.env()).status, 0);
  // A wait rides out an outage until it is spent: then 69.
  Child waiter({"acquire", "--ttl", "10s", "--wait", "4s", "--redis-timeout", "300ms", "--connect-timeout", "300ms",
                "m1", "m2", "m3"},
               s.env());
  ASSERT_TRUE(eventually([&] { return s.holders("m1") == 3 && s.holders("m2") == 3; }, Seconds(10)))
      << waiter.err_so_far();
  s[0].kill();
  s[1].kill();
  Result w = waiter.wait(Seconds(30));
  EXPECT_EQ(w.status, 69) << w.err;
  EXPECT_EQ(s.holders("m1"), 0) << "given back on the server left";
  EXPECT_EQ(s.holders("m2"), 0);
}

TEST(SeveralNames, LimitAndSharedApplyToEachName) {
  Fixture f;
  // --limit 2: each name a semaphore of two places.
  EXPECT_EQ(run({"acquire", "--limit", "2", "s1", "s2"}, f.env()).status, 0);
  EXPECT_EQ(run({"acquire", "--limit", "2", "s2", "s1"}, f.env()).status, 0);
  EXPECT_EQ(run({"acquire", "--limit", "2", "s1", "s2"}, f.env()).status, 75);
  // --shared: readers share each name; a writer of one of them is busy.
  EXPECT_EQ(run({"acquire", "--shared", "r1", "r2"}, f.env()).status, 0);
  EXPECT_EQ(run({"acquire", "--shared", "r2", "r1"}, f.env()).status, 0);
  Result w = run({"acquire", "r0", "r2"}, f.env());
  EXPECT_EQ(w.status, 75) << w.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("r0"))) << "given back";
}

TEST(SeveralNames, ARevokeOfTheSecondNameIsHeardAtOnce) {
  // A TTL of 60s: heard on the revoke channel, long before a renewal.
  Fixture f;
  Child holder({"exec", "--ttl", "60s", "rv1", "rv2", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  const std::string channel = redlock::lock::keys_for("redlock:", "rv2").revoke_channel;
  ASSERT_TRUE(eventually(
      [&] {
        const redlock::redis::Reply r = f.redis.cmd({"PUBSUB", "NUMSUB", channel});
        return r.elements.size() == 2 && r.elements[1].integer >= 1;
      },
      Seconds(10)))
      << holder.err_so_far();
  Result r = run({"revoke", "rv2", "--grace", "5s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_LT(h.seconds, 20.0);
  EXPECT_FALSE(key_exists(f.redis, lock_key("rv1")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("rv2")));
}
