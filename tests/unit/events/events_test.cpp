// What `redlock events` makes of the scripts' messages: reading them, the
// holds they reveal and their expiries, one event out of a Redlock's
// copies, and the lines it writes.

#include "events/events.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/show/event_format.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"

namespace redlock::events {
namespace {

using namespace std::chrono_literals;

Event acquired(const std::string& holder, const std::string& fence, long long ttl_ms = 1000) {
  Event e;
  e.kind = "acquired";
  e.name = "deploy";
  e.time_ms = 1'733'146'501'123;
  e.fields = {{"holder", holder},
              {"host", "web-3"},
              {"pid", "4411"},
              {"fence", fence},
              {"ttl_ms", std::to_string(ttl_ms)},
              {"cmd", "./deploy.sh prod"}};
  return e;
}

Event of_kind(const std::string& kind, const std::string& holder) {
  Event e;
  e.kind = kind;
  e.name = "deploy";
  e.time_ms = 1'733'146'502'000;
  e.fields = {{"holder", holder}};
  return e;
}

TEST(EventParse, AScriptsMessageIsReadFieldByField) {
  const auto e = parse_event(
      "deploy", R"({"event":"acquired","ms":"1733146501123","fence":"1733146501123456","pid":"4411","ttl_ms":30000})");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, "acquired");
  EXPECT_EQ(e->name, "deploy");
  EXPECT_EQ(e->time_ms, 1'733'146'501'123);
  EXPECT_EQ(e->field("fence"), "1733146501123456");
  EXPECT_EQ(e->field("ttl_ms"), "30000");
  EXPECT_EQ(e->field("event"), "") << "the kind is not a field";
}

TEST(EventParse, WhatIsNotAnEventIsLeftOut) {
  for (const char* m : {"released", "", "{}", "[1]", R"({"event":"acquired"})", R"({"ms":"5"})", "{\"event\":"}) {
    EXPECT_FALSE(parse_event("a", m).has_value()) << m;
  }
}

TEST(EventParse, AHolderIsNamedByTheFirstDigitsOfItsTokensSha1) {
  EXPECT_EQ(lock::hold_id("abc"), "a9993e364706816a");
  EXPECT_EQ(lock::hold_id(""), "");
}

TEST(EventKeys, ANamesEventsChannelAndItsPatternReadBack) {
  EXPECT_EQ(lock::events_channel("redlock:", "deploy"), "redlock:{deploy}:events");
  EXPECT_EQ(lock::events_channel("p:", "a{b}"),
            "p:{a\x01"
            "b\x02}:events");
  EXPECT_EQ(lock::name_of_events_channel("p:",
                                         "p:{a\x01"
                                         "b\x02}:events"),
            "a{b}");
  EXPECT_EQ(lock::name_of_events_channel("p:", "p:{x:events}:events"), "x:events");
  EXPECT_EQ(lock::name_of_events_channel("p:", "p:{a}:released"), std::nullopt);
  EXPECT_EQ(lock::name_of_events_channel("q:", "p:{a}:events"), std::nullopt);
  EXPECT_EQ(lock::events_pattern("redlock:"), "redlock:{*}:events");
  EXPECT_EQ(lock::events_pattern("a*b?[c]\\:"), "a\\*b\\?\\[c\\]\\\\:{*}:events")
      << "glob characters match only themselves";
}

TEST(HoldTracker, AHoldIsDueWhenItsLeaseShouldEnd) {
  HoldTracker t(1);
  const TimePoint now = Clock::now();
  (void)t.learn(0, acquired("h1", "7", 1000), now);
  EXPECT_TRUE(t.due(now + 999ms).empty());
  EXPECT_EQ(t.due(now + 2s), std::vector<std::string>{"deploy"});
  ASSERT_TRUE(t.next_due().has_value());
}

TEST(HoldTracker, AHoldGoneUnreleasedIsToldAsExpiredOnce) {
  HoldTracker t(1);
  const TimePoint now = Clock::now();
  (void)t.learn(0, acquired("h1", "7"), now);
  lock::ServerView view;
  view.now_ms = 1'733'146'510'000;
  auto out = t.checked(0, "deploy", view, now + 2s, 1s);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].kind, "expired");
  EXPECT_EQ(out[0].field("host"), "web-3");
  EXPECT_EQ(out[0].field("fence"), "7");
  EXPECT_EQ(out[0].time_ms, view.now_ms);
  EXPECT_FALSE(t.next_due().has_value());
  EXPECT_TRUE(t.checked(0, "deploy", view, now + 3s, 1s).empty());
}

TEST(HoldTracker, AHoldStillThereIsExpectedAgainWhenItsLeaseAsReadEnds) {
  HoldTracker t(1);
  const TimePoint now = Clock::now();
  (void)t.learn(0, acquired(lock::hold_id("T1"), "7"), now);
  lock::ServerView view;
  lock::HolderView holder;
  holder.token = "T1";
  holder.ttl_ms = 20'000;
  view.holders.push_back(holder);
  EXPECT_TRUE(t.checked(0, "deploy", view, now + 2s, 1s).empty());
  EXPECT_TRUE(t.due(now + 21s).empty());
  EXPECT_FALSE(t.due(now + 23s).empty());
}

TEST(HoldTracker, AReleasedHoldIsForgottenAndALossNamesItsHolder) {
  HoldTracker t(1);
  const TimePoint now = Clock::now();
  (void)t.learn(0, acquired("h1", "7"), now);
  Event released = of_kind("released", "h1");
  released.fields["count"] = "0";
  (void)t.learn(0, released, now);
  EXPECT_FALSE(t.next_due().has_value());
  (void)t.learn(0, acquired("h2", "8"), now);
  const Event lost = t.learn(0, of_kind("lost", "h2"), now);
  EXPECT_EQ(lost.field("host"), "web-3") << "a renewal does not say who it was";
  EXPECT_EQ(lost.field("fence"), "8");
  EXPECT_FALSE(t.next_due().has_value());
}

TEST(HoldTracker, AFailedReadPutsTheCheckOff) {
  HoldTracker t(1);
  const TimePoint now = Clock::now();
  (void)t.learn(0, acquired("h1", "7"), now);
  lock::ServerView view;
  view.error = "unreachable";
  EXPECT_TRUE(t.checked(0, "deploy", view, now + 2s, 1s).empty());
  EXPECT_TRUE(t.due(now + 2500ms).empty());
  EXPECT_FALSE(t.due(now + 3500ms).empty());
}

TEST(HoldTracker, AKeyspaceExpiryTellsEveryHoldOfTheKey) {
  HoldTracker t(2);
  const TimePoint now = Clock::now();
  (void)t.learn(1, acquired("h1", "7"), now);
  EXPECT_TRUE(t.key_expired(0, "deploy", 5).empty()) << "another server's hold";
  const auto out = t.key_expired(1, "deploy", 5);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].kind, "expired");
  EXPECT_TRUE(t.key_expired(1, "deploy", 5).empty());
}

TEST(EventMerger, OneServersEventsAreShownAtOnce) {
  EventMerger m(1);
  EXPECT_EQ(m.add(0, acquired("h1", "7"), Clock::now()).size(), 1U);
  EXPECT_EQ(m.add(0, acquired("h1", "7"), Clock::now()).size(), 1U);
}

TEST(EventMerger, ARedlocksCopiesAreShownOnceWithTheLargestFence) {
  EventMerger m(3);
  const TimePoint now = Clock::now();
  EXPECT_TRUE(m.add(0, acquired("h1", "7"), now).empty());
  EXPECT_TRUE(m.add(2, acquired("h1", "9"), now).empty()) << "a majority: the last copy is waited for a moment";
  const auto shown = m.add(1, acquired("h1", "8"), now);
  ASSERT_EQ(shown.size(), 1U);
  EXPECT_EQ(shown[0].field("fence"), "9");
  EXPECT_TRUE(m.add(0, acquired("h1", "10"), now).empty()) << "happening again starts a new count";
}

TEST(EventMerger, AMajorityIsShownOnceTheLastCopyIsWaitedFor) {
  EventMerger m(3);
  const TimePoint now = Clock::now();
  EXPECT_TRUE(m.add(0, acquired("h1", "7"), now).empty());
  EXPECT_TRUE(m.add(1, acquired("h1", "9"), now).empty());
  ASSERT_TRUE(m.next_due().has_value());
  EXPECT_TRUE(m.flush(now + EventMerger::k_grace / 2).empty());
  const auto shown = m.flush(now + EventMerger::k_grace);
  ASSERT_EQ(shown.size(), 1U);
  EXPECT_EQ(shown[0].field("fence"), "9");
  EXPECT_TRUE(m.add(2, acquired("h1", "11"), now + 1s).empty()) << "the late copy is swallowed";
  EXPECT_FALSE(m.next_due().has_value());
}

TEST(EventMerger, EventsAreShownInTheOrderTheirMajoritiesCame) {
  EventMerger m(3);
  const TimePoint now = Clock::now();
  (void)m.add(0, acquired("h1", "7"), now);
  (void)m.add(1, acquired("h1", "7"), now);  // a majority; server 2 is slow
  Event released = of_kind("released", "h1");
  released.fields["count"] = "0";
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(m.add(i, released, now).empty());
  }
  EXPECT_TRUE(m.add(2, released, now).empty()) << "the release waits behind the acquire";
  const auto shown = m.flush(now + EventMerger::k_grace);
  ASSERT_EQ(shown.size(), 2U);
  EXPECT_EQ(shown[0].kind, "acquired");
  EXPECT_EQ(shown[1].kind, "released");
}

TEST(EventMerger, AGrantOfAMinorityIsNotShown) {
  EventMerger m(3);
  const TimePoint now = Clock::now();
  EXPECT_TRUE(m.add(0, acquired("h1", "7"), now).empty());
  EXPECT_TRUE(m.add(0, acquired("h2", "8"), now + 1s).empty());
  EXPECT_TRUE(m.add(1, acquired("h1", "8"), now + 31s).empty()) << "too late to count with the first";
  EXPECT_TRUE(m.flush(now + 40s).empty());
}

TEST(EventFormat, ALineSaysWhenWhatAndWhoWithNoToken) {
  const std::string line = cli::event_line(acquired("a9993e364706816a", "7"));
  EXPECT_EQ(line,
            "2024-12-02T13:35:01Z acquired deploy host=web-3 pid=4411 fence=7 cmd=\"./deploy.sh prod\" "
            "ttl_ms=1000\n")
      << "the time as status and history write one (format_time); --json keeps the milliseconds";
}

TEST(EventFormat, NothingFromTheChannelCanStartALine) {
  Event e = acquired("h", "7");
  e.name = "x\ny";
  e.fields["host"] = "evil\r\033[2J";
  const std::string line = cli::event_line(e);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.find('\033'), std::string::npos);
  EXPECT_EQ(line.find('\r'), std::string::npos);
}

TEST(EventFormat, JsonHasNumbersAsNumbersAndTheHolderId) {
  const auto j = nlohmann::json::parse(cli::event_json(acquired("a9993e364706816a", "1733146501123456")));
  EXPECT_EQ(j["event"], "acquired");
  EXPECT_EQ(j["name"], "deploy");
  EXPECT_EQ(j["time"], "2024-12-02T13:35:01.123Z");
  EXPECT_EQ(j["time_ms"], 1'733'146'501'123);
  EXPECT_EQ(j["fence"], 1'733'146'501'123'456);
  EXPECT_EQ(j["pid"], 4411);
  EXPECT_EQ(j["host"], "web-3");
  EXPECT_EQ(j["holder"], "a9993e364706816a");
  const std::string text = cli::event_json(acquired("h", "7"));
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one object a line";
  EXPECT_EQ(text.rfind("{\"event\":\"acquired\",\"name\":\"deploy\",\"time\":", 0), 0U) << text;
}

TEST(EventFormat, ARevokeWithTheHoldersOwnGraceHasANullGrace) {
  // As status --json says a pending revoke's: 0 is each holder's own --kill-after.
  Event e = of_kind("revoked", "a9993e364706816a");
  e.fields["by_host"] = "ops-1";
  e.fields["by_pid"] = "77";
  e.fields["grace_ms"] = "0";
  auto j = nlohmann::json::parse(cli::event_json(e));
  EXPECT_TRUE(j["grace_ms"].is_null()) << j.dump();
  EXPECT_EQ(j["by_pid"], 77);
  e.fields["grace_ms"] = "2500";
  j = nlohmann::json::parse(cli::event_json(e));
  EXPECT_EQ(j["grace_ms"], 2500);
}

TEST(EventFormat, EveryKindIsDocumented) {
  std::vector<std::string> kinds;
  for (const auto& k : event_kinds()) {
    kinds.emplace_back(k.kind);
  }
  for (const char* k : {"acquired", "reentered", "released", "expired", "lost", "broken", "joined", "left"}) {
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k;
  }
}

}  // namespace
}  // namespace redlock::events
