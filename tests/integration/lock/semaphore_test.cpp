// Counting semaphores (--limit N) and readers/writer locks (exec --shared).

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// How many holders `status` sees on lock `name` (-1 if status failed).
long long holder_count(const RedisServer& redis, const std::string& name) {
  Result st = run({"status", "--json", "--redis", redis.url(), name});
  if (st.status != 0) {
    return st.status == 1 ? 0 : -1;
  }
  return static_cast<long long>(json::parse(st.out)[0]["holders"].size());
}

// The largest number of intervals [start, end] (one per line "start end" in
// `log`) that overlap at one instant.
int max_overlap(const std::string& log) {
  std::vector<std::pair<double, int>> events;
  std::istringstream in(log);
  double a = 0;
  double b = 0;
  while (in >> a >> b) {
    events.emplace_back(a, 1);
    events.emplace_back(b, -1);
  }
  std::sort(events.begin(), events.end(),
            [](auto& x, auto& y) { return x.first < y.first || (x.first == y.first && x.second < y.second); });
  int now = 0;
  int most = 0;
  for (auto& [t, d] : events) {
    now += d;
    most = std::max(most, now);
  }
  return most;
}

}  // namespace

TEST(Semaphore, LimitTwoAdmitsTwoHoldersAndTheThirdIsBusy) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--limit", "2", "pool"}, env);
  Result b = run({"acquire", "--limit", "2", "pool"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(a.out, b.out);
  Result c = run({"acquire", "--limit", "2", "pool"}, env);
  EXPECT_EQ(c.status, 75) << c.err;
  EXPECT_NE(c.err.find("pool is held"), std::string::npos) << c.err;
  EXPECT_EQ(run({"release", "--token", first_line(a.out), "pool"}, env).status, 0);
  EXPECT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 0) << "a place was freed";
}

TEST(Semaphore, AWaiterWakesWhenAPlaceIsReleased) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--limit", "2", "--ttl", "60s", "pool"}, env);
  ASSERT_EQ(run({"acquire", "--limit", "2", "--ttl", "60s", "pool"}, env).status, 0);
  Child waiter({"acquire", "--limit", "2", "--wait", "20s", "pool"}, env);
  ASSERT_TRUE(await_waiters(redis, "pool")) << waiter.err_so_far();
  ASSERT_TRUE(waiter.alive()) << waiter.err_so_far();
  const double released = now_seconds();
  ASSERT_EQ(run({"release", "--token", first_line(a.out), "pool"}, env).status, 0);
  Result w = waiter.wait();
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_LT(now_seconds() - released, 1.0);
}

TEST(Semaphore, HoldersExpireOneByOne) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  // Long enough for a loaded machine to start the next two redlocks in it.
  ASSERT_EQ(run({"acquire", "--limit", "2", "--ttl", "2s", "pool"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--limit", "2", "--ttl", "20s", "pool"}, env).status, 0);
  EXPECT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 75);
  // The short-lived place expires on its own; nothing else frees it.
  EXPECT_TRUE(eventually(
      [&] {
        return run({"acquire", "--limit", "2", "pool"}, env).status == 0;
      },
      Seconds(10)))
      << "the short-lived place never expired";
  EXPECT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 75);
}

TEST(Semaphore, ALimitThatDisagreesWithTheHoldersIs64) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--limit", "3", "pool"}, env).status, 0);
  Result other = run({"acquire", "--limit", "2", "pool"}, env);
  EXPECT_EQ(other.status, 64) << other.err;
  EXPECT_NE(other.err.find("--limit 3"), std::string::npos) << other.err;
  EXPECT_EQ(run({"acquire", "pool"}, env).status, 64) << "a plain lock on a semaphore";
  ASSERT_EQ(run({"acquire", "single"}, env).status, 0);
  EXPECT_EQ(run({"acquire", "--limit", "2", "single"}, env).status, 64) << "a semaphore on a plain lock";
}

// The holder's own token does not make a --limit agree: a plain lock is
// not re-entered as a semaphore, nor by an exec nested in its holder's.
TEST(Semaphore, ALimitThatDisagreesIs64EvenForTheHoldersToken) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result held = run({"acquire", "plain"}, env);
  ASSERT_EQ(held.status, 0) << held.err;
  const std::string token = first_line(held.out);
  Result again = run({"acquire", "--limit", "2", "--token", token, "plain"}, env);
  EXPECT_EQ(again.status, 64) << again.err;
  EXPECT_EQ(redis.cmd({"HGET", "redlock:{plain}", "count"}).str, "1") << "nothing was re-entered";
  Result nested =
      run({"exec", "outer", "--", "sh", "-c", "\"$0\" exec --limit 2 outer -- true", redlock_binary()}, env);
  EXPECT_EQ(nested.status, 64) << nested.err;
  EXPECT_NE(nested.err.find("--limit"), std::string::npos) << nested.err;
}

TEST(Semaphore, RenewAndReleaseTouchOnlyTheirOwnPlace) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  // Long enough for a loaded machine to run the next four redlocks in it.
  Result a = run({"acquire", "--limit", "2", "--ttl", "3s", "pool"}, env);
  Result b = run({"acquire", "--limit", "2", "--ttl", "3s", "pool"}, env);
  ASSERT_EQ(a.status, 0);
  ASSERT_EQ(b.status, 0);
  EXPECT_EQ(run({"renew", "--token", first_line(a.out), "--ttl", "20s", "pool"}, env).status, 0);
  EXPECT_EQ(run({"renew", "--token", "not-a-holder", "pool"}, env).status, 1);
  EXPECT_EQ(run({"release", "--token", "not-a-holder", "pool"}, env).status, 1);
  // b expires; a was renewed.
  ASSERT_TRUE(eventually([&] { return holder_count(redis, "pool") == 1; }, Seconds(10)));
  EXPECT_EQ(run({"renew", "--token", first_line(b.out), "pool"}, env).status, 1) << "never recreated";
  Result st = run({"status", "--json", "pool"}, env);
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_EQ(json::parse(st.out)[0]["holders"].size(), 1u);
  EXPECT_EQ(run({"release", "--token", first_line(a.out), "pool"}, env).status, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("pool")}).integer, 0) << "the last holder deletes the key";
}

TEST(Semaphore, ReentryCountsUpAndDownOnOnePlace) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--limit", "2", "--json", "pool"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = json::parse(a.out)["token"];
  Result again = run({"acquire", "--limit", "2", "--token", token, "--json", "pool"}, env);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["count"], 2);
  EXPECT_EQ(json::parse(again.out)["token"], token);
  EXPECT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 0) << "re-entry used no second place";
  EXPECT_EQ(run({"release", "--token", token, "pool"}, env).status, 0);
  EXPECT_EQ(run({"release", "--token", token, "pool"}, env).status, 0);
  EXPECT_EQ(run({"release", "--token", token, "pool"}, env).status, 1);
}

TEST(Semaphore, StatusShowsEveryHolderAndTheLimit) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--limit", "3", "--json", "pool"}, env);
  Result b = run({"acquire", "--limit", "3", "--json", "pool"}, env);
  ASSERT_EQ(a.status, 0);
  ASSERT_EQ(b.status, 0);
  EXPECT_GT(json::parse(b.out)["fence"].get<long long>(), json::parse(a.out)["fence"].get<long long>());
  Result st = run({"status", "--json", "pool"}, env);
  ASSERT_EQ(st.status, 0) << st.err;
  json j = json::parse(st.out)[0];
  EXPECT_EQ(j["mode"], "semaphore");
  EXPECT_EQ(j["limit"], 3);
  ASSERT_EQ(j["holders"].size(), 2u);
  EXPECT_GT(j["holders"][0]["ttl_ms"].get<long long>(), 20000);
  Result table = run({"status"}, env);
  EXPECT_NE(table.out.find("held 2/3"), std::string::npos) << table.out;
}

TEST(Semaphore, ExecWithLimitTwoRunsAtMostTwoAtOnce) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}};
  const std::string log = dir.path() + "/log";
  const std::string body = "s=$(date +%s.%N); sleep 0.3; echo \"$s $(date +%s.%N)\" >> " + log;
  std::vector<std::unique_ptr<Child>> jobs;
  for (int i = 0; i < 6; ++i) {
    jobs.push_back(std::make_unique<Child>(
        std::vector<std::string>{"exec", "--limit", "2", "--wait", "30s", "pool", "--", "sh", "-c", body}, env));
  }
  for (auto& j : jobs) {
    Result r = j->wait();
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(max_overlap(read_file(log)), 2) << read_file(log);
}

TEST(ReadersWriter, ReadersShareAndTheWriterWaitsForThemAll) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}};
  const std::string log = dir.path() + "/log";
  const std::string reader = "s=$(date +%s.%N); sleep 0.6; echo \"$s $(date +%s.%N)\" >> " + log;
  Child r1({"exec", "--shared", "doc", "--", "sh", "-c", reader}, env);
  Child r2({"exec", "--shared", "--wait", "5s", "doc", "--", "sh", "-c", reader}, env);
  ASSERT_TRUE(eventually(
      [&] {
        return redis.cmd({"HLEN", lock_key("doc")}).integer >= 4;
      },
      Seconds(3)))
      << "two readers hold it together";
  Result writer_busy = run({"exec", "doc", "--", "true"}, env);
  EXPECT_EQ(writer_busy.status, 75) << writer_busy.err;
  Result writer = run({"exec", "--wait", "10s", "doc", "--", "sh", "-c", "date +%s.%N"}, env);
  EXPECT_EQ(writer.status, 0) << writer.err;
  EXPECT_EQ(r1.wait().status, 0);
  EXPECT_EQ(r2.wait().status, 0);
  EXPECT_EQ(max_overlap(read_file(log)), 2) << "the readers overlapped";
  double wrote_at = std::stod(writer.out);
  std::istringstream in(read_file(log));
  double a = 0;
  double b = 0;
  while (in >> a >> b) {
    EXPECT_GT(wrote_at, b) << "the writer ran only after every reader ended";
  }
}

TEST(ReadersWriter, AReaderWaitsForTheWriter) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result w = run({"acquire", "--ttl", "20s", "doc"}, env);
  ASSERT_EQ(w.status, 0);
  Result reader = run({"exec", "--shared", "doc", "--", "true"}, env);
  EXPECT_EQ(reader.status, 75) << reader.err;
  EXPECT_EQ(run({"release", "--token", first_line(w.out), "doc"}, env).status, 0);
  EXPECT_EQ(run({"exec", "--shared", "doc", "--", "true"}, env).status, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("doc")}).integer, 0);
}

TEST(ReadersWriter, SharedDoesNotGoWithLimit) {
  Result r = run({"exec", "--shared", "--limit", "2", "doc", "--", "true"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64) << r.err;
  Result zero = run({"acquire", "--limit", "0", "doc"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(zero.status, 64) << zero.err;
}

TEST(Semaphore, WorksAcrossThreeServers) {
  RedisServer s1;
  RedisServer s2;
  RedisServer s3;
  Env env{{"REDLOCK_URL", s1.url() + "," + s2.url() + "," + s3.url()}};
  ASSERT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 0);
  ASSERT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 0);
  EXPECT_EQ(run({"acquire", "--limit", "2", "pool"}, env).status, 75);
  Result st = run({"status", "--json", "pool"}, env);
  EXPECT_EQ(json::parse(st.out)[0]["holders"].size(), 2u) << st.out;
}

TEST(Semaphore, AModeMismatchOnAnyServerTakesNothingAnywhere) {
  RedisServer s1;
  RedisServer s2;
  RedisServer s3;
  // Only the first server has a semaphore under this name.
  ASSERT_EQ(run({"acquire", "--limit", "2", "--redis", s1.url(), "mixed"}).status, 0);
  Env env{{"REDLOCK_URL", s1.url() + "," + s2.url() + "," + s3.url()}};
  Result r = run({"acquire", "mixed"}, env);
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_EQ(s2.cmd({"EXISTS", lock_key("mixed")}).integer, 0);
  EXPECT_EQ(s3.cmd({"EXISTS", lock_key("mixed")}).integer, 0);
  // Likewise when the mismatch is on the last server to answer.
  Env reversed{{"REDLOCK_URL", s2.url() + "," + s3.url() + "," + s1.url()}};
  EXPECT_EQ(run({"acquire", "mixed"}, reversed).status, 64);
  EXPECT_EQ(s2.cmd({"EXISTS", lock_key("mixed")}).integer, 0);
  EXPECT_EQ(s3.cmd({"EXISTS", lock_key("mixed")}).integer, 0);
}

// Revoke asks every holder; one that is not an exec is broken after the
// grace, as on a plain lock, and the 75 line names only who is left.
TEST(Semaphore, RevokeBreaksThePlaceOfAHolderThatIsNotAnExec) {
  ExecFixture f;
  Child exec({"exec", "--limit", "3", "--ttl", "60s", "job", "--", "sleep", "30"}, f.env());
  ASSERT_TRUE(await_revoke_listeners(f.redis, "job")) << exec.err_so_far();
  Result got = run({"acquire", "--limit", "3", "--ttl", "60s", "job"}, f.env());
  ASSERT_EQ(got.status, 0) << got.err;
  Result r = run({"revoke", "job", "--grace", "1s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("broke"), std::string::npos) << r.out;
  EXPECT_EQ(holder_count(f.redis, "job"), 0);
  EXPECT_EQ(run({"release", "--token", first_line(got.out), "job"}, f.env()).status, 1) << "its place was broken";
  Result e = exec.wait(Seconds(20));
  EXPECT_EQ(e.status, 74) << e.err;
}

TEST(Semaphore, RevokesStillHeldLineNamesOnlyTheHoldersLeft) {
  ExecFixture f;
  Child stuck({"exec", "--limit", "3", "--ttl", "60s", "job", "--", "sleep", "40"}, f.env());
  ASSERT_TRUE(await_revoke_listeners(f.redis, "job", 1)) << stuck.err_so_far();
  Child leaves({"exec", "--limit", "3", "--ttl", "60s", "job", "--", "sleep", "41"}, f.env());
  ASSERT_TRUE(await_revoke_listeners(f.redis, "job", 2)) << leaves.err_so_far();
  Result got = run({"acquire", "--limit", "3", "--ttl", "60s", "job"}, f.env());
  ASSERT_EQ(got.status, 0) << got.err;
  stuck.signal(SIGSTOP);  // it listens but cannot act
  Result r = run({"revoke", "job", "--grace", "1s"}, f.env(), Seconds(30));
  stuck.signal(SIGCONT);
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_NE(r.err.find("sleep 40"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("sleep 41"), std::string::npos) << "it gave its place back: " << r.err;
  EXPECT_EQ(run({"release", "--token", first_line(got.out), "job"}, f.env()).status, 1) << "its place was broken";
  EXPECT_EQ(leaves.wait(Seconds(20)).status, 74);
  EXPECT_EQ(stuck.wait(Seconds(20)).status, 74);
}

// The same on a readers' lock: every reader is asked, an exec gives its
// share back, and a reader that is not an exec is broken after the grace.
TEST(ReadersWriter, RevokeBreaksTheShareOfAReaderThatIsNotAnExec) {
  ExecFixture f;
  Child exec({"exec", "--shared", "--ttl", "60s", "doc", "--", "sleep", "30"}, f.env());
  ASSERT_TRUE(await_revoke_listeners(f.redis, "doc")) << exec.err_so_far();
  Result got = run({"acquire", "--shared", "--ttl", "60s", "doc"}, f.env());
  ASSERT_EQ(got.status, 0) << got.err;
  ASSERT_EQ(holder_count(f.redis, "doc"), 2);
  Result r = run({"revoke", "doc", "--grace", "1s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sleep 30"), std::string::npos) << "the exec gave its share back: " << r.out;
  EXPECT_NE(r.out.find("broke"), std::string::npos) << r.out;
  EXPECT_EQ(holder_count(f.redis, "doc"), 0);
  EXPECT_EQ(run({"release", "--token", first_line(got.out), "doc"}, f.env()).status, 1) << "its share was broken";
  Result e = exec.wait(Seconds(20));
  EXPECT_EQ(e.status, 74) << e.err;
  EXPECT_NE(e.err.find("revoked"), std::string::npos) << e.err;
}

TEST(ReadersWriter, RevokesStillHeldLineNamesOnlyTheReadersLeft) {
  ExecFixture f;
  Child stuck({"exec", "--shared", "--ttl", "60s", "doc", "--", "sleep", "40"}, f.env());
  ASSERT_TRUE(await_revoke_listeners(f.redis, "doc", 1)) << stuck.err_so_far();
  Child leaves({"exec", "--shared", "--ttl", "60s", "doc", "--", "sleep", "41"}, f.env());
  ASSERT_TRUE(await_revoke_listeners(f.redis, "doc", 2)) << leaves.err_so_far();
  Result got = run({"acquire", "--shared", "--ttl", "60s", "doc"}, f.env());
  ASSERT_EQ(got.status, 0) << got.err;
  stuck.signal(SIGSTOP);  // it listens but cannot act
  Result r = run({"revoke", "doc", "--grace", "1s"}, f.env(), Seconds(30));
  stuck.signal(SIGCONT);
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_NE(r.err.find("sleep 40"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("sleep 41"), std::string::npos) << "it gave its share back: " << r.err;
  EXPECT_NE(r.err.find("broke the hold of"), std::string::npos) << r.err;
  EXPECT_EQ(run({"release", "--token", first_line(got.out), "doc"}, f.env()).status, 1) << "its share was broken";
  EXPECT_EQ(leaves.wait(Seconds(20)).status, 74);
  EXPECT_EQ(stuck.wait(Seconds(20)).status, 74);
}
