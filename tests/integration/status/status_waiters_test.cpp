// status for operators: the line of waiters under each named lock, the
// WAITING column, the JSON waiters array, the states of semaphores and
// readers, --watch, and --format prometheus.

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

class StatusWaiters : public WithRedis {
 protected:
  // A holder for `name`, and two waiters behind it: an acquire that waits up
  // to 30s (recorded with this process's pid, as acquire records its
  // caller) and an exec that waits for as long as it takes.
  void hold_with_two_waiters(const std::string& name) {
    token = take(name, {"--ttl", "60s"});
    first = queue_up(redis, name, {"acquire", "--wait", "30s", name}, env());
    second = queue_up(redis, name, {"exec", "--wait", "inf", name, "--", "true"}, env());
  }
  void TearDown() override {
    for (auto* c : {first.get(), second.get()}) {
      if (c != nullptr && c->alive()) {
        c->signal(SIGTERM);
        (void)c->wait(Seconds(5));
      }
    }
  }
  std::string token;
  std::unique_ptr<Child> first, second;
};

std::string column(const std::string& table, size_t row, const std::string& name) {
  auto lines = split_lines(table);
  auto header = words(lines.at(0));
  auto cells = words(lines.at(row));
  auto at = std::find(header.begin(), header.end(), name);
  if (at == header.end() || static_cast<size_t>(at - header.begin()) >= cells.size()) {
    ADD_FAILURE() << "no column " << name << " in row " << row << " of " << table;
    return {};
  }
  return cells[static_cast<size_t>(at - header.begin())];
}

}  // namespace

TEST_F(StatusWaiters, ANamedLockListsItsWaitersInLineUnderItsHolder) {
  hold_with_two_waiters("job");
  Result s = rl({"status", "job"});
  ASSERT_EQ(s.status, 0) << s.err;
  auto lines = split_lines(s.out);
  ASSERT_EQ(lines.size(), 4u) << s.out;
  EXPECT_EQ(column(s.out, 1, "WAITING"), "2");
  EXPECT_EQ(column(s.out, 1, "PID"), std::to_string(getpid()));  // the holder: this test
  EXPECT_EQ(lines[2].rfind("  waiting 1  " + this_host() + " pid " + std::to_string(getpid()) + " for ", 0), 0u)
      << s.out;
  EXPECT_NE(lines[2].find(", gives up in "), std::string::npos) << s.out;
  EXPECT_EQ(lines[3].rfind("  waiting 2  " + this_host() + " pid " + std::to_string(second->pid()) + " for ", 0), 0u)
      << s.out;
  EXPECT_NE(lines[3].find(", no time limit: "), std::string::npos) << s.out;
  EXPECT_NE(lines[3].find("true"), std::string::npos) << s.out;
}

TEST_F(StatusWaiters, TheListOfEveryLockCountsWaitersWithoutListingThem) {
  hold_with_two_waiters("job");
  take("other", {"--ttl", "60s"});
  Result s = rl({"status"});
  ASSERT_EQ(s.status, 0) << s.err;
  auto lines = split_lines(s.out);
  ASSERT_EQ(lines.size(), 3u) << s.out;
  EXPECT_EQ(column(s.out, 1, "NAME"), "job");
  EXPECT_EQ(column(s.out, 1, "WAITING"), "2");
  EXPECT_EQ(column(s.out, 2, "NAME"), "other");
  EXPECT_EQ(column(s.out, 2, "WAITING"), "0");
}

TEST_F(StatusWaiters, JsonHasTheWaitersInOrderWithWhenTheyGiveUp) {
  hold_with_two_waiters("job");
  Result s = rl({"status", "--json", "job"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out).at(0);
  ASSERT_EQ(j["waiters"].size(), 2u) << s.out;
  const json& a = j["waiters"][0];
  const json& b = j["waiters"][1];
  EXPECT_EQ(a["position"], 1);
  EXPECT_EQ(a["pid"], getpid());
  EXPECT_EQ(a["host"], this_host());
  EXPECT_EQ(a["mode"], "exclusive");
  EXPECT_GT(a["left_ms"].get<long long>(), 0);
  EXPECT_LE(a["left_ms"].get<long long>(), 30000);
  // Its --wait 30s, counted from when it started waiting (by two clocks: a ms or two apart).
  EXPECT_NEAR(a["until_ms"].get<double>() - a["since_ms"].get<double>(), 30000, 1000) << a;
  EXPECT_GE(a["age_ms"].get<long long>(), 0);
  EXPECT_EQ(b["position"], 2);
  EXPECT_EQ(b["pid"], second->pid());
  EXPECT_TRUE(b["left_ms"].is_null()) << b;
  EXPECT_TRUE(b["until_ms"].is_null()) << b;
  EXPECT_NE(b["cmd"].get<std::string>().find("true"), std::string::npos) << b;
  EXPECT_LE(a["since_ms"].get<long long>(), b["since_ms"].get<long long>());

  // A free lock has an empty line.
  Result free = rl({"status", "--json", "nobody"});
  EXPECT_EQ(free.status, 1);
  EXPECT_EQ(json::parse(free.out).at(0)["waiters"], json::array());
}

TEST_F(StatusWaiters, AWaiterThatStopsWaitingLeavesTheListAtOnce) {
  hold_with_two_waiters("job");
  first->signal(SIGTERM);
  Result r = first->wait(Seconds(5));
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  Result s = rl({"status", "--json", "job"});
  json j = json::parse(s.out).at(0);
  ASSERT_EQ(j["waiters"].size(), 1u) << s.out;
  EXPECT_EQ(j["waiters"][0]["position"], 1);
  EXPECT_EQ(j["waiters"][0]["pid"], second->pid());
}

TEST_F(StatusWaiters, SemaphoresAndReadersReadTheSameWay) {
  take("pool", {"--ttl", "60s", "--limit", "3"});
  take("pool", {"--ttl", "60s", "--limit", "3"});
  take("docs", {"--ttl", "60s", "--shared"});
  take("docs", {"--ttl", "60s", "--shared"});
  take("docs", {"--ttl", "60s", "--shared"});
  Result s = rl({"status", "pool", "docs"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("pool  held 2/3"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("docs  shared 3"), std::string::npos) << s.out;
}

TEST_F(StatusWaiters, PrometheusMetricsGiveEachLocksNumbers) {
  hold_with_two_waiters("job");
  Result s = rl({"status", "--format", "prometheus", "job", "free"});
  // The metrics are written, and the status is the same as in every format:
  // a named lock is free.
  ASSERT_EQ(s.status, 1) << s.err;
  std::map<std::string, double> sample;
  const std::regex line(R"re(^(redlock_lock_[a-z_]+)\{name="([^"]*)"\} ([0-9.e+-]+)$)re");
  for (const auto& l : split_lines(s.out)) {
    std::smatch m;
    if (l.rfind("# ", 0) == 0 || l.find("{server=\"") != std::string::npos) {
      continue;  // the servers' own families (redlock_up...): metrics_test.cpp
    }
    ASSERT_TRUE(std::regex_match(l, m, line)) << "not a sample line: " << l;
    sample[m[1].str() + "/" + m[2].str()] = std::stod(m[3].str());
  }
  EXPECT_EQ(sample["redlock_lock_held/job"], 1);
  EXPECT_EQ(sample["redlock_lock_holders/job"], 1);
  EXPECT_EQ(sample["redlock_lock_waiters/job"], 2);
  EXPECT_GT(sample["redlock_lock_ttl_seconds/job"], 50);
  EXPECT_LE(sample["redlock_lock_ttl_seconds/job"], 60);
  EXPECT_GE(sample["redlock_lock_age_seconds/job"], 0);
  EXPECT_LT(sample["redlock_lock_age_seconds/job"], 10);
  EXPECT_EQ(sample["redlock_lock_held/free"], 0);
  EXPECT_EQ(sample["redlock_lock_waiters/free"], 0);
  EXPECT_EQ(sample.count("redlock_lock_ttl_seconds/free"), 0u) << "a free lock has no TTL";
}

TEST_F(StatusWaiters, WatchShowsABlockPerIntervalAndEndsWith0OnCtrlC) {
  take("job", {"--ttl", "60s"});
  Child w({"status", "--watch", "--interval", "200ms", "job"}, env());
  auto blocks = [&] {
    const std::string out = w.out_so_far();
    size_t n = 0;
    for (size_t at = out.find("NAME"); at != std::string::npos; at = out.find("NAME", at + 1)) {
      ++n;
    }
    return n;
  };
  ASSERT_TRUE(eventually([&] { return blocks() >= 3; }, Seconds(10))) << w.out_so_far() << w.err_so_far();
  w.signal(SIGINT);
  Result r = w.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Blocks, not a redrawn screen, when standard output is not a terminal.
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
  EXPECT_NE(r.out.find("\n\nNAME"), std::string::npos) << r.out;
}

TEST_F(StatusWaiters, WatchEndsWith0WhenTwoStopSignalsComeTogether) {
  // The watch took the first and ended; the second, still pending, made
  // redlock say "interrupted by SIGTERM" and exit 143.
  take("job", {"--ttl", "60s"});
  Child w({"status", "--watch", "--interval", "10s", "job"}, env());
  ASSERT_TRUE(eventually([&] { return w.out_so_far().find("NAME") != std::string::npos; }, Seconds(10)));
  w.signal(SIGINT);
  w.signal(SIGTERM);
  Result r = w.wait(Seconds(5));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(StatusWaiters, WatchShowsRedisTroubleAndCarriesOn) {
  take("job", {"--ttl", "60s"});
  Child w({"status", "--watch", "--interval", "200ms", "--redis-timeout", "300ms", "job"}, env());
  ASSERT_TRUE(eventually([&] { return w.out_so_far().find("NAME") != std::string::npos; }, Seconds(10)));
  redis.kill();
  ASSERT_TRUE(eventually([&] { return w.out_so_far().find("redlock: ") != std::string::npos; }, Seconds(10)))
      << w.out_so_far();
  EXPECT_TRUE(w.alive());
  redis.start();
  take("job", {"--ttl", "60s"});
  ASSERT_TRUE(eventually(
      [&] {
        const std::string out = w.out_so_far();
        return out.find("NAME", out.find("redlock: ")) != std::string::npos;
      },
      Seconds(10)))
      << w.out_so_far();
  w.signal(SIGTERM);
  EXPECT_EQ(w.wait(Seconds(5)).status, 0);
}
