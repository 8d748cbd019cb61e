// What the scripts tell on a lock's events channel (includes/events.lua),
// kind by kind, in the order things happen to lock "a".

#include "events/events.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "lock/layout.hpp"
#include "lock/scripts.hpp"
#include "server.hpp"

namespace redlock::test {
namespace {

using lock::ScriptName;
using namespace std::chrono_literals;

lock::AcquireArgs take(const std::string& token, const std::string& waiter = "") {
  lock::AcquireArgs a;
  a.token = token;
  a.ttl = 30s;
  a.host = "h1";
  a.pid = 11;
  a.cmd = "c1";
  a.lease = 10s;
  a.waiter = waiter;
  return a;
}

lock::ReleaseArgs release(const std::string& token, bool quiet = false) {
  lock::ReleaseArgs a;
  a.token = token;
  a.quiet = quiet;
  return a;
}

// The events told since the last call, each as a JSON object.
std::vector<nlohmann::json> told(ScriptServer& s) {
  std::vector<nlohmann::json> out;
  for (const auto& m : s.events()) {
    out.push_back(nlohmann::json::parse(m));
  }
  return out;
}

// The kinds of `events`, in order.
std::vector<std::string> kinds(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(e.at("event").get<std::string>());
  }
  return out;
}

class ScriptEvents : public testing::Test {
 protected:
  void SetUp() override {
    s.reset();
    (void)s.events();
  }
  Value run(ScriptName name, const std::vector<std::string>& args) { return s.eval(name, args); }
  ScriptServer& s = script_server();
};

TEST_F(ScriptEvents, AHoldIsToldFromItsAcquireToItsRelease) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), [] {
              auto a = take("T9");
              a.reenter = "T1";
              return a;
            }()));
  (void)run(ScriptName::k_release, lock::to_args(keys(), release("T1")));
  (void)run(ScriptName::k_release, lock::to_args(keys(), release("T1")));
  const auto events = told(s);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"acquired", "reentered", "released", "released"}));
  const auto& acquired = events[0];
  EXPECT_EQ(acquired["host"], "h1");
  EXPECT_EQ(acquired["pid"], "11");
  EXPECT_EQ(acquired["cmd"], "c1");
  EXPECT_EQ(acquired["mode"], "exclusive");
  EXPECT_EQ(acquired["ttl_ms"], 30000);
  EXPECT_EQ(acquired["holder"], lock::hold_id("T1")) << "the holder is named by a digest, never its token";
  EXPECT_GT(std::stoll(acquired["ms"].get<std::string>()), 1'600'000'000'000LL);
  const std::string fence = acquired["fence"];
  EXPECT_GT(fence.size(), 15U) << "a fence goes whole, as a string of digits";
  EXPECT_EQ(events[1]["count"], 2);
  EXPECT_EQ(events[1]["fence"], fence);
  EXPECT_EQ(events[2]["count"], 1) << "one level dropped, one left";
  EXPECT_EQ(events[3]["count"], 0);
  EXPECT_EQ(events[3]["fence"], fence);
  EXPECT_TRUE(events[3].contains("held_ms"));
  for (const auto& e : events) {
    EXPECT_EQ(e.dump().find("T1"), std::string::npos) << "a token is never told: " << e.dump();
  }
}

TEST_F(ScriptEvents, AWaiterIsToldWhenItJoinsAndLeavesButNotOnItsHeartbeats) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  for (int beat = 0; beat < 3; ++beat) {
    (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T2", "w2")));
  }
  (void)run(ScriptName::k_leave, lock::to_args(keys(), lock::LeaveArgs{"w2"}));
  const auto events = told(s);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"acquired", "joined", "left"}));
  EXPECT_EQ(events[1]["waiter"], "w2");
  EXPECT_EQ(events[1]["place"], 1);
  EXPECT_EQ(events[2]["waiter"], "w2");
  EXPECT_EQ(events[2]["reason"], "left");
  EXPECT_EQ(events[2]["host"], "h1");
}

TEST_F(ScriptEvents, AWaiterWhoseTurnFindsAForeignLedgerIsToldAsLeft) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  auto recorded = take("T2", "w2");
  recorded.record_run = true;
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), recorded));
  (void)s.cmd({"RPUSH", keys().runs, "not redlock's"});
  (void)run(ScriptName::k_release, lock::to_args(keys(), release("T1")));
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), recorded));
  const auto events = told(s);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"acquired", "joined", "released", "left"}));
  EXPECT_EQ(events[3]["waiter"], "w2");
  EXPECT_EQ(events[3]["reason"], "left") << "its wait ended: it leaves the line, the lock untaken";
}

TEST_F(ScriptEvents, ADeadWaiterIsToldAsLeftWhenItIsPruned) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  auto short_lease = take("T2", "w2");
  short_lease.lease = 10ms;
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), short_lease));
  // A live waiter behind it keeps the line's keys (they expire with the
  // longest lease in them).
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T3", "w3")));
  std::this_thread::sleep_for(50ms);
  (void)run(ScriptName::k_release, lock::to_args(keys(), release("T1")));
  const auto events = told(s);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"acquired", "joined", "joined", "left", "released"}));
  EXPECT_EQ(events[3]["waiter"], "w2");
  EXPECT_EQ(events[3]["reason"], "dead");
}

TEST_F(ScriptEvents, ARenewalIsToldOnlyWhenItFindsTheLockLost) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  (void)run(ScriptName::k_renew, lock::to_args(keys(), lock::RenewArgs{"T1", 30s}));
  (void)run(ScriptName::k_break, lock::to_args(keys(), lock::BreakArgs{}));
  (void)run(ScriptName::k_renew, lock::to_args(keys(), lock::RenewArgs{"T1", 30s}));
  const auto events = told(s);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"acquired", "broken", "lost"}));
  EXPECT_EQ(events[1]["host"], "h1");
  EXPECT_EQ(events[1]["holder"], lock::hold_id("T1"));
  EXPECT_EQ(events[2]["holder"], lock::hold_id("T1"));
}

TEST_F(ScriptEvents, AQuietUndoTellsTheReleaseButNoLoss) {
  (void)run(ScriptName::k_release, lock::to_args(keys(), release("T1", true)));
  (void)run(ScriptName::k_release, lock::to_args(keys(), release("T1")));
  EXPECT_EQ(kinds(told(s)), (std::vector<std::string>{"lost"}));
}

TEST_F(ScriptEvents, AnOperatorsRevokeAndSuspensionAreTold) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  lock::RevokeArgs revoke;
  revoke.host = "op";
  revoke.pid = 99;
  revoke.grace = 5s;
  (void)run(ScriptName::k_revoke, lock::to_args(keys(), revoke));
  lock::SuspendArgs suspend;
  suspend.reason = "maintenance";
  suspend.host = "op";
  suspend.pid = 99;
  (void)run(ScriptName::k_suspend, lock::to_args(keys(), suspend));
  suspend.resume = true;
  (void)run(ScriptName::k_suspend, lock::to_args(keys(), suspend));
  (void)run(ScriptName::k_suspend, lock::to_args(keys(), suspend));  // not suspended: nothing to tell
  const auto events = told(s);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"acquired", "revoked", "suspended", "resumed"}));
  EXPECT_EQ(events[1]["holder"], lock::hold_id("T1"));
  EXPECT_EQ(events[1]["host"], "h1");
  EXPECT_EQ(events[1]["by_host"], "op");
  EXPECT_EQ(events[1]["grace_ms"], 5000);
  EXPECT_EQ(events[2]["reason"], "maintenance");
  EXPECT_EQ(events[2]["until_ms"], "-1");
  EXPECT_EQ(events[3]["by_pid"], "99");
}

TEST_F(ScriptEvents, EveryMessageIsAnEventRedlockReads) {
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T1")));
  (void)run(ScriptName::k_acquire, lock::to_args(keys(), take("T2", "w2")));
  (void)run(ScriptName::k_break, lock::to_args(keys(), lock::BreakArgs{}));
  const auto messages = s.events();
  ASSERT_FALSE(messages.empty());
  for (const auto& m : messages) {
    const auto e = events::parse_event("a", m);
    ASSERT_TRUE(e.has_value()) << m;
    EXPECT_FALSE(e->kind.empty());
    EXPECT_GT(e->time_ms, 0);
  }
}

}  // namespace
}  // namespace redlock::test
