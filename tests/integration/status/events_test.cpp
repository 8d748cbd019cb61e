// redlock events: every kind of event, in the order things happen, from a
// real redis-server; across a restart of the server; ending with 0 on a
// stop signal.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// The JSON objects of `out`, one a line.
std::vector<nlohmann::json> lines_of(const std::string& out) {
  std::vector<nlohmann::json> all;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    all.push_back(nlohmann::json::parse(line));
  }
  return all;
}

std::vector<std::string> kinds_of(const std::string& out) {
  std::vector<std::string> kinds;
  for (const auto& j : lines_of(out)) {
    kinds.push_back(j.at("event").get<std::string>() + " " + j.at("name").get<std::string>());
  }
  return kinds;
}

// How many clients listen to `channel` (SUBSCRIBE) on `redis`.
long long listeners(const RedisServer& redis, const std::string& channel) {
  try {
    const auto r = redis.cmd({"PUBSUB", "NUMSUB", channel});
    return r.elements.size() == 2 ? r.elements[1].integer : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

long long patterns(const RedisServer& redis) {
  try {
    return redis.cmd({"PUBSUB", "NUMPAT"}).integer;
  } catch (const std::exception&) {
    return -1;
  }
}

size_t line_count(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

const std::string k_channel = redlock::lock::events_channel("redlock:", "ev");

}  // namespace

TEST(Events, EveryKindIsToldInTheOrderItHappens) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Child events({"events", "--json", "ev"}, env);
  ASSERT_TRUE(eventually([&] { return listeners(redis, k_channel) >= 1; })) << events.err_so_far();

  const std::string tok = run({"acquire", "--ttl", "30s", "ev"}, env).out;
  ASSERT_FALSE(tok.empty());
  const std::string token = tok.substr(0, tok.find('\n'));
  ASSERT_EQ(run({"acquire", "--token", token, "ev"}, env).status, 0);
  ASSERT_EQ(run({"release", "--token", token, "ev"}, env).status, 0);
  EXPECT_EQ(run({"acquire", "--wait", "500ms", "ev"}, env).status, 75);  // joins the line, then leaves it
  ASSERT_EQ(run({"release", "--token", token, "ev"}, env).status, 0);
  EXPECT_EQ(run({"renew", "--token", token, "ev"}, env).status, 1);
  ASSERT_EQ(run({"acquire", "--ttl", "30s", "ev"}, env).status, 0);
  ASSERT_EQ(run({"break", "ev"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--ttl", "300ms", "ev"}, env).status, 0);

  const std::vector<std::string> expected = {"acquired ev", "reentered ev", "released ev", "joined ev",
                                             "left ev",     "released ev",  "lost ev",     "acquired ev",
                                             "broken ev",   "acquired ev",  "expired ev"};
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= expected.size(); }, Seconds(10)))
      << events.out_so_far() << events.err_so_far();
  events.signal(SIGTERM);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(kinds_of(r.out), expected) << r.out;

  const auto all = lines_of(r.out);
  const auto& first = all.at(0);
  EXPECT_EQ(first["mode"], "exclusive");
  EXPECT_EQ(first["ttl_ms"], 30000);
  EXPECT_TRUE(first["pid"].is_number());
  EXPECT_TRUE(first["fence"].is_number());
  EXPECT_TRUE(first["time_ms"].is_number());
  EXPECT_NEAR(first["time_ms"].get<double>(), static_cast<double>(redis.time_us() / 1000), 60'000.0)
      << "the server's clock";
  EXPECT_EQ(all.at(1)["count"], 2);
  EXPECT_EQ(all.at(2)["count"], 1);
  EXPECT_EQ(all.at(3)["place"], 1);
  EXPECT_EQ(all.at(5)["count"], 0);
  EXPECT_EQ(all.at(6)["holder"], first["holder"]) << "the loss names the hold by its holder's id";
  EXPECT_EQ(all.at(8)["fence"], all.at(7)["fence"]);
  EXPECT_EQ(all.at(10)["fence"], all.at(9)["fence"]);
  EXPECT_EQ(r.out.find(token), std::string::npos) << "no token is ever shown";
}

TEST(Events, ALossIsToldOnceThoughTheRenewalAndTheReleaseBothFindIt) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Child events({"events", "--json", "ev"}, env);
  ASSERT_TRUE(eventually([&] { return listeners(redis, k_channel) >= 1; })) << events.err_so_far();
  Child holder({"exec", "--ttl", "3s", "ev", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= 1; }, Seconds(10))) << holder.err_so_far();
  redis.cmd({"DEL", lock_key("ev")});
  const Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  // Whatever comes after the loss is in the stream before this acquire is.
  ASSERT_EQ(run({"acquire", "--ttl", "30s", "ev"}, env).status, 0);
  ASSERT_TRUE(eventually(
      [&] { return events.out_so_far().rfind("\"acquired\"") > events.out_so_far().find("\"lost\""); }, Seconds(10)))
      << events.out_so_far();
  events.signal(SIGTERM);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(kinds_of(r.out), (std::vector<std::string>{"acquired ev", "lost ev", "acquired ev"})) << r.out;
}

TEST(Events, WithoutANameEveryLockUnderThePrefixIsFollowedAndNoOther) {
  RedisServer redis;
  // Glob characters in a prefix match only themselves, braces in a name
  // are the name's.
  const Env env{{"REDLOCK_URL", redis.url()}, {"REDLOCK_PREFIX", "p*[x]:"}};
  Child events({"events"}, env);
  ASSERT_TRUE(eventually([&] { return patterns(redis) >= 1; })) << events.err_so_far();
  ASSERT_EQ(run({"acquire", "--prefix", "pQQ[x]:", "other"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--prefix", "px:", "other"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "a{b}"}, env).status, 0);
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= 1; })) << events.err_so_far();
  events.signal(SIGINT);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(line_count(r.out), 1U) << r.out;
  EXPECT_NE(r.out.find(" acquired a{b} host="), std::string::npos) << r.out;
}

TEST(Events, ARestartedServerIsSubscribedToAgainAndWhatItLostIsTold) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Child events({"events", "--json", "ev"}, env);
  ASSERT_TRUE(eventually([&] { return listeners(redis, k_channel) >= 1; })) << events.err_so_far();
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "ev"}, env).status, 0);
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= 1; }));

  redis.stop();
  ASSERT_TRUE(eventually([&] { return events.err_so_far().find("lost the events of") != std::string::npos; }))
      << events.err_so_far();
  redis.start();  // empty, on the same port
  ASSERT_TRUE(eventually([&] { return listeners(redis, k_channel) >= 1; }, Seconds(15))) << events.err_so_far();
  EXPECT_NE(events.err_so_far().find("subscribed to the events of"), std::string::npos) << events.err_so_far();
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "ev"}, env).status, 0);
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= 3; })) << events.out_so_far();

  events.signal(SIGTERM);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(kinds_of(r.out), (std::vector<std::string>{"acquired ev", "expired ev", "acquired ev"}))
      << "the hold the restart lost is read back and told: " << r.out;
}

TEST(Events, AnUnreachableServerIsUnavailableAndABadNameIsUsage) {
  const Env env{{"REDLOCK_URL", "redis://127.0.0.1:" + std::to_string(free_port())}};
  const Result r = run({"events", "ev"}, env);
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_EQ(run({"events", ""}, env).status, 64);
}

TEST(Events, OverSeveralServersAnEventIsToldOnceAMajorityToldIt) {
  RedisServer a, b, c;
  const Env env{{"REDLOCK_URL", a.url() + "," + b.url() + "," + c.url()}};
  Child events({"events", "--json", "ev"}, env);
  ASSERT_TRUE(eventually([&] {
    return listeners(a, k_channel) >= 1 && listeners(b, k_channel) >= 1 && listeners(c, k_channel) >= 1;
  })) << events.err_so_far();
  const Result got = run({"acquire", "--ttl", "30s", "ev"}, env);
  ASSERT_EQ(got.status, 0) << got.err;
  const std::string token = got.out.substr(0, got.out.find('\n'));
  const auto stored = [&](const RedisServer& s) { return std::stoll(s.cmd({"GET", lock_key("ev") + ":fence"}).str); };
  const long long largest = std::max({stored(a), stored(b), stored(c)});
  ASSERT_EQ(run({"release", "--token", token, "ev"}, env).status, 0);
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= 2; })) << events.out_so_far();
  // A grant of one server alone (a minority) is not told.
  ASSERT_EQ(run({"acquire", "-r", a.url(), "--ttl", "30s", "ev"}, {}).status, 0);
  sleep_for(0.5);
  events.signal(SIGINT);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(kinds_of(r.out), (std::vector<std::string>{"acquired ev", "released ev"})) << r.out;
  const auto all = lines_of(r.out);
  const long long fence = all.at(0)["fence"].get<long long>();
  // The fence told is the holder's: the largest of the servers'.
  EXPECT_EQ(fence, largest);
}

TEST(Events, SuspendedAndResumedNameWhoDidIt) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Child events({"events", "--json", "ev"}, env);
  ASSERT_TRUE(eventually([&] { return listeners(redis, k_channel) >= 1; })) << events.err_so_far();
  ASSERT_EQ(run({"suspend", "ev", "--reason", "window"}, env).status, 0);
  ASSERT_EQ(run({"resume", "ev"}, env).status, 0);
  ASSERT_TRUE(eventually([&] { return line_count(events.out_so_far()) >= 2; })) << events.out_so_far();
  events.signal(SIGTERM);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(kinds_of(r.out), (std::vector<std::string>{"suspended ev", "resumed ev"})) << r.out;
  const auto all = lines_of(r.out);
  EXPECT_EQ(all.at(0)["reason"], "window");
  // Both operators are this test's process (redlock names its parent).
  for (const auto& e : all) {
    EXPECT_EQ(e["by_host"], all.at(0)["by_host"]) << e.dump();
    EXPECT_NE(e["by_host"], "") << e.dump();
    EXPECT_EQ(e["by_pid"], static_cast<long long>(getpid())) << e.dump();
  }
}

TEST(Events, WaitersInLinePublishNothingAsTheyBeat) {
  // A fleet of waiters on one lock: joining and leaving are told, their
  // heartbeats (every 500 ms near the head) are not.
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "ev"}, env).status, 0);
  std::vector<std::unique_ptr<Child>> waiters;
  for (int i = 0; i < 6; ++i) {
    waiters.push_back(std::make_unique<Child>(std::vector<std::string>{"acquire", "--wait", "20s", "ev"}, env));
  }
  ASSERT_TRUE(eventually([&] { return redis.cmd({"ZCARD", lock_key("ev") + ":line"}).integer == 6; }));
  const long long scripts = redis.calls("evalsha") + redis.calls("eval");
  const long long published = redis.calls("publish");
  sleep_for(2.0);
  EXPECT_GT(redis.calls("evalsha") + redis.calls("eval") - scripts, 6) << "the waiters beat";
  EXPECT_EQ(redis.calls("publish") - published, 0) << "but publish nothing";
  for (auto& w : waiters) {
    w->signal(SIGTERM);
    (void)w->wait(Seconds(5));
  }
}

TEST(Events, AServerThatNotifiesExpiriesIsListenedTo) {
  RedisServer::Options options;
  options.extra = {"--notify-keyspace-events", "Kx"};
  RedisServer redis(options);
  const Env env{{"REDLOCK_URL", redis.url()}};
  Child events({"events", "ev"}, env);
  const std::string keyspace = "__keyspace@0__:" + lock_key("ev");
  ASSERT_TRUE(eventually([&] { return listeners(redis, keyspace) >= 1; })) << events.err_so_far();
  ASSERT_EQ(run({"acquire", "--ttl", "200ms", "ev"}, env).status, 0);
  ASSERT_TRUE(eventually([&] { return events.out_so_far().find(" expired ev ") != std::string::npos; }))
      << events.out_so_far() << events.err_so_far();
  events.signal(SIGTERM);
  const Result r = events.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(line_count(r.out), 2U) << "told once: " << r.out;
}

TEST(Events, AReaderThatGoesAwayEndsThemQuietly) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  for (const bool ignored : {false, true}) {
    SCOPED_TRACE(ignored ? "SIGPIPE ignored" : "SIGPIPE");
    TempDir dir;
    // `events | head -1` once head has its line: the next event's write
    // meets a closed pipe.
    const auto events = with_gone_reader({"events", "ev"}, env, dir, ignored);
    ASSERT_TRUE(eventually(
        [&] {
          const std::string out = run({"acquire", "--ttl", "30s", "ev"}, env).out;
          (void)run({"release", "--token", out.substr(0, out.find('\n')), "ev"}, env);
          return !events->alive();
        },
        Seconds(20)))
        << events->err_so_far();
    EXPECT_EQ(events->wait(Seconds(5)).err, ignored ? "rc=0\n" : "rc=141\n");
  }
}
