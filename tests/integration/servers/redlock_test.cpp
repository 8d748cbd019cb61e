// The Redlock algorithm over N independent redis-servers (issue: Redlock).

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "fake_redis.hpp"
#include "harness.hpp"
#include "lock/lua_scripts.hpp"
#include "lock/scripts.hpp"
#include "servers.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

// N servers; REDLOCK_URL lists them all.

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// Writes a lock held by someone else directly, as another redlock would.
void hold_elsewhere(RedisServer& s, const std::string& name, const std::string& ttl_ms = "30000") {
  const std::string key = lock_key(name);
  s.cmd({"HSET", key, "schema", "redlock/1", "token", "someone-else", "count", "1", "fence", "1", "host", "other",
         "pid", "1"});
  s.cmd({"PEXPIRE", key, ttl_ms});
}

}  // namespace

TEST(Redlock, AcquiresOnAllFiveAndReportsVotersAndValidity) {
  Servers s(5);
  Result r = run({"acquire", "--ttl", "10s", "--json", "five"}, s.env());
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["voted"].size(), 5u);
  EXPECT_GT(j["validity_ms"].get<long long>(), 9000);
  EXPECT_LE(j["validity_ms"].get<long long>(), 10000 - 102);
  EXPECT_EQ(s.holders("five"), 5);
  Result rel = run({"release", "--token", j["token"].get<std::string>(), "five"}, s.env());
  EXPECT_EQ(rel.status, 0) << rel.err;
  EXPECT_EQ(s.holders("five"), 0);
}

TEST(Redlock, MinorityStoppedStillAcquiresInAboutOneTimeout) {
  Servers s(5);
  s[1].pause();
  s[3].pause();
  Result r = run({"acquire", "--redis-timeout", "400ms", "--json", "minority"}, s.env());
  s[1].resume();
  s[3].resume();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["voted"].size(), 3u);
  EXPECT_LT(r.seconds, 1.5) << "the stopped servers are waited for in parallel, once";
}

TEST(Redlock, MinorityDownStillAcquires) {
  Servers s(3);
  s[2].kill();
  Result r = run({"acquire", "--json", "down1"}, s.env());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["voted"].size(), 2u);
}

TEST(Redlock, MajorityDownIs69NamingServersAndLeavesNoKey) {
  Servers s(5);
  const std::string dead0 = s[0].url();
  s[0].kill();
  s[2].kill();
  s[4].kill();
  Result r = run({"acquire", "--connect-timeout", "300ms", "majority"}, s.env());
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_NE(r.err.find(dead0.substr(dead0.find("//") + 2)), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(s.holders("majority"), 0) << "partial votes must be released";
}

TEST(Redlock, MajorityStoppedIs69AndNoKeyRemainsAfterResume) {
  Servers s(3);
  s[0].pause();
  s[1].pause();
  Result r = run({"acquire", "--redis-timeout", "300ms", "stopped"}, s.env());
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_LT(r.seconds, 3.0);
  s[0].resume();
  s[1].resume();
  // The requests the stopped servers run on resume are undone by the
  // releases that were queued behind them.
  EXPECT_TRUE(eventually([&] { return s.holders("stopped") == 0; }, Seconds(3)));
}

TEST(Redlock, MinorityForeignValueIsOutvoted) {
  Servers s(5);
  s[0].cmd({"SET", "redlock:{clog}", "foreign"});
  s[4].cmd({"SET", "redlock:{clog}", "foreign"});
  Result r = run({"acquire", "--json", "clog"}, s.env());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["voted"].size(), 3u);
  EXPECT_EQ(s[0].cmd({"GET", "redlock:{clog}"}).str, "foreign");
  EXPECT_EQ(s[4].cmd({"GET", "redlock:{clog}"}).str, "foreign");
}

TEST(Redlock, MajorityHeldIsBusyAndPartialVotesAreRemoved) {
  Servers s(5);
  hold_elsewhere(s[0], "held");
  hold_elsewhere(s[1], "held");
  hold_elsewhere(s[2], "held");
  Result r = run({"acquire", "held"}, s.env());
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_NE(r.err.find("other pid 1"), std::string::npos) << r.err;
  EXPECT_EQ(s[3].cmd({"EXISTS", "redlock:{held}"}).integer, 0);
  EXPECT_EQ(s[4].cmd({"EXISTS", "redlock:{held}"}).integer, 0);
  EXPECT_EQ(s[0].cmd({"HGET", "redlock:{held}", "token"}).str, "someone-else");
}

// Like go-redsync's quorum test: clog every subset of the five servers with
// a foreign value; the lock is acquired exactly when the free servers form
// a majority.
TEST(Redlock, AcquiredExactlyWhenTheFreeServersAreAMajority) {
  Servers s(5);
  for (unsigned mask = 0; mask < 32; ++mask) {
    int clogged = __builtin_popcount(mask);
    for (size_t i = 0; i < 5; ++i) {
      if (mask & (1u << i)) {
        s[i].cmd({"SET", "redlock:{subset}", "clogged"});
      }
    }
    Result r = run({"acquire", "subset"}, s.env());
    if (5 - clogged >= 3) {
      EXPECT_EQ(r.status, 0) << "mask " << mask << ": " << r.err;
    } else {
      EXPECT_NE(r.status, 0) << "mask " << mask;
      EXPECT_TRUE(r.status == 75 || r.status == 76) << "mask " << mask << ": " << r.status << " " << r.err;
    }
    for (size_t i = 0; i < 5; ++i) {
      if (mask & (1u << i)) {
        EXPECT_EQ(s[i].cmd({"GET", "redlock:{subset}"}).str, "clogged") << "foreign values are never touched";
      }
      s[i].cmd({"DEL", "redlock:{subset}"});
    }
  }
}

TEST(Redlock, RenewNeedsAMajority) {
  Servers s(3);
  Result a = run({"acquire", "--ttl", "20s", "renew3"}, s.env());
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = first_line(a.out);
  EXPECT_EQ(run({"renew", "--token", token, "--ttl", "20s", "renew3"}, s.env()).status, 0);
  s[0].cmd({"DEL", "redlock:{renew3}"});
  EXPECT_EQ(run({"renew", "--token", token, "renew3"}, s.env()).status, 0) << "2 of 3 still hold it";
  s[1].cmd({"DEL", "redlock:{renew3}"});
  Result r = run({"renew", "--token", token, "renew3"}, s.env());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(s[0].cmd({"EXISTS", "redlock:{renew3}"}).integer, 0) << "renew never recreates";
}

TEST(Redlock, ReleaseReachesEveryServer) {
  Servers s(3);
  Result a = run({"acquire", "rel3"}, s.env());
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(s.holders("rel3"), 3);
  EXPECT_EQ(run({"release", "--token", first_line(a.out), "rel3"}, s.env()).status, 0);
  EXPECT_EQ(s.holders("rel3"), 0);
}

TEST(Redlock, StatusShowsEachServersViewAndTheVerdict) {
  Servers s(3);
  Result a = run({"acquire", "--ttl", "30s", "seen"}, s.env());
  ASSERT_EQ(a.status, 0) << a.err;
  s[1].cmd({"DEL", "redlock:{seen}"});
  const std::string dead = s[2].url();
  s[2].kill();
  Result st = run({"status", "--json", "--connect-timeout", "300ms", "seen"}, s.env());
  // 1 of 3 holds it: no quorum, so the verdict is "free" (exit 1).
  EXPECT_EQ(st.status, 1) << st.err;
  json j = json::parse(st.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["held"], false);
  ASSERT_EQ(j[0]["servers"].size(), 3u);
  EXPECT_EQ(j[0]["servers"][0]["state"], "held");
  EXPECT_GT(j[0]["servers"][0]["ttl_ms"].get<long long>(), 20000);
  EXPECT_EQ(j[0]["servers"][1]["state"], "free");
  EXPECT_EQ(j[0]["servers"][2]["state"], "unreachable");
  EXPECT_EQ(j[0]["servers"][2]["url"], dead);

  Result table = run({"status", "--connect-timeout", "300ms", "seen"}, s.env());
  EXPECT_NE(table.out.find("unreachable"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(s[0].url()), std::string::npos) << table.out;
}

TEST(Redlock, StatusVerdictIsHeldWithAQuorum) {
  Servers s(3);
  ASSERT_EQ(run({"acquire", "q"}, s.env()).status, 0);
  s[0].cmd({"DEL", "redlock:{q}"});
  Result st = run({"status", "--json", "q"}, s.env());
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_EQ(json::parse(st.out)[0]["held"], true);
}

TEST(Redlock, StatusTableCallsASemaphoreOrSharedLockWithoutAQuorumFree) {
  // A semaphore place held on 2 of 3 servers is no grant (more than L*M/(L+1)
  // servers are needed): the table calls it free, not "held 0/3" or
  // "shared 0".
  Servers s(3);
  ASSERT_EQ(run({"acquire", "--limit", "3", "sem"}, s.env()).status, 0);
  ASSERT_EQ(run({"acquire", "--shared", "rw"}, s.env()).status, 0);
  s[0].cmd({"DEL", "redlock:{sem}"});
  s[0].cmd({"DEL", "redlock:{rw}"});
  s[1].cmd({"DEL", "redlock:{rw}"});
  for (const char* name : {"sem", "rw"}) {
    Result st = run({"status", name}, s.env());
    EXPECT_EQ(st.status, 1) << st.err;
    const std::string row = first_line(st.out.substr(st.out.find('\n') + 1));
    EXPECT_EQ(row.rfind(std::string(name) + " ", 0), 0U) << st.out;
    EXPECT_EQ(row.find(" held "), std::string::npos) << st.out;
    EXPECT_EQ(row.find(" shared "), std::string::npos) << st.out;
    EXPECT_NE(row.find(" free "), std::string::npos) << st.out;
  }
}

TEST(Redlock, ReentryAndWaitingWorkAcrossServers) {
  Servers s(3);
  Result a = run({"acquire", "--ttl", "1500ms", "--json", "re"}, s.env());
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = json::parse(a.out)["token"];
  Result again = run({"acquire", "--token", token, "--json", "re"}, s.env());
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["count"], 2);
  EXPECT_EQ(run({"release", "--token", token, "re"}, s.env()).status, 0);
  EXPECT_EQ(s.holders("re"), 3) << "one level released, still held";

  Child waiter({"acquire", "--wait", "10s", "re"}, s.env());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(waiter.alive());
  const double released_at = now_seconds();
  EXPECT_EQ(run({"release", "--token", token, "re"}, s.env()).status, 0);
  Result w = waiter.wait();
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_LT(now_seconds() - released_at, 1.0) << "woken by the release message";
}

// A server killed and restarted empty while exec runs: exec carries on while
// a majority still holds the lock and ends with 74 once it does not.
TEST(Redlock, ExecSurvivesOneRestartAndEndsWith74WhenTheMajorityIsGone) {
  Servers s(3);
  TempDir dir;
  const std::string marker = dir.path() + "/term";
  Child exec({"exec", "--ttl", "900ms", "--redis-timeout", "200ms", "restart", "--", "sh", "-c",
              "trap 'echo term > " + marker + "; exit 0' TERM; sleep 30 & wait"},
             s.env());
  ASSERT_TRUE(eventually([&] { return s.holders("restart") == 3; }));
  s[0].kill();
  s[0].start();                                                  // empty
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // several renewal periods
  EXPECT_TRUE(exec.alive()) << exec.err_so_far();
  EXPECT_TRUE(read_file(marker).empty());
  s[1].kill();
  s[1].start();  // empty: only 1 of 3 still holds it
  Result r = exec.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_EQ(read_file(marker), "term\n");
}

// A stopped server costs each round one --timeout, but the lease on the
// others runs from when the round was sent: exec must not count that wait
// twice (once in the validity left, once more from the send time) and take
// the lock for lost while two of three servers renew it.
TEST(Redlock, ExecKeepsALockTwoOfThreeRenewWhileTheThirdIsStopped) {
  Servers s(3);
  TempDir dir;
  const std::string ready = dir.path() + "/ready";
  Child exec({"exec", "--ttl", "6s", "--redis-timeout", "1s", "stopped-third", "--", "sh", "-c",
              "echo > " + ready + "; sleep 8; exit 5"},
             s.env());
  ASSERT_TRUE(eventually([&] { return !read_file(ready).empty(); }, Seconds(5))) << exec.err_so_far();
  s[2].pause();
  Result r = exec.wait(Seconds(20));
  s[2].resume();
  EXPECT_EQ(r.status, 5) << "the lock was taken for lost: " << r.err;
  EXPECT_EQ(r.err.find("lost"), std::string::npos) << r.err;
}

// Fences strictly increase over successive holders while servers are killed
// and restarted empty one at a time; each stays down longer than the TTL
// (the Redlock description's delayed restart).
TEST(Redlock, FencesIncreaseAcrossRestartsOfSingleServers) {
  Servers s(3);
  long long last = 0;
  for (int i = 0; i < 50; ++i) {
    if (i % 10 == 5) {
      size_t victim = static_cast<size_t>(i / 10) % 3;
      s[victim].kill();
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // > --ttl
      s[victim].start();
    }
    // A TTL that outlives a slow release (under the sanitizers, on a busy
    // machine): the release must find the lock.
    Result a = run({"acquire", "--ttl", "1s", "--connect-timeout", "300ms", "--json", "fenced"}, s.env());
    ASSERT_EQ(a.status, 0) << i << ": " << a.err;
    json j = json::parse(a.out);
    long long fence = j["fence"];
    EXPECT_GT(fence, last) << "holder " << i;
    last = fence;
    ASSERT_EQ(run({"release", "--token", j["token"].get<std::string>(), "fenced"}, s.env()).status, 0);
  }
}

TEST(Redlock, ContentionAcrossFiveServersNeverOverlaps) {
  Servers s(5);
  TempDir dir;
  const std::string script = dir.path() + "/critical.sh";
  {
    std::ofstream f(script);
    f << "d=" << dir.path() << "\n"
      << "mkdir \"$d/inside\" 2>/dev/null || echo overlap >> \"$d/overlaps\"\n"
      << "n=$(cat \"$d/count\" 2>/dev/null || echo 0)\n"
      << "sleep 0.01\n"
      << "echo $((n + 1)) > \"$d/count\"\n"
      << "rmdir \"$d/inside\"\n";
  }
  std::vector<std::unique_ptr<Child>> workers;
  for (int w = 0; w < 6; ++w) {
    workers.push_back(std::make_unique<Child>(
        std::vector<std::string>{"-c",
                                 "for i in 1 2 3 4 5; do \"$0\" exec --wait 60s contended -- sh \"$1\" || exit 9; done",
                                 redlock_binary(), script},
        s.env(), "sh"));
  }
  for (auto& w : workers) {
    Result r = w->wait(Seconds(90));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(read_file(dir.path() + "/overlaps"), "");
  EXPECT_EQ(read_file(dir.path() + "/count"), "30\n");
}

TEST(Redlock, AWaiterOnAHolderWithTwoOfThreeServersSleepsInsteadOfSpinning) {
  // The holder lost the third server (restarted empty). A waiter wins that
  // server, misses the quorum and gives it back; undoing must not wake
  // anyone (least of all itself), and it sleeps to the holder's TTL.
  Servers s(3);
  Result holder = run({"acquire", "--ttl", "30s", "spin"}, s.env());
  ASSERT_EQ(holder.status, 0) << holder.err;
  s[2].stop();
  s[2].start();
  const auto scripts_run = [&] { return s[2].calls("evalsha") + s[2].calls("eval"); };
  const long long before = scripts_run();
  // What wakes waiters: the release channels. (Each grant and its undo are
  // told on the events channel, which wakes nobody.)
  Child wakes({"-p", std::to_string(s[2].port()), "psubscribe", lock_key("spin") + ":released*"}, {}, "redis-cli");
  ASSERT_TRUE(eventually([&] { return s[2].cmd({"PUBSUB", "NUMPAT"}).integer >= 1; }));
  Result waiter = run({"acquire", "--wait", "3s", "spin"}, s.env());
  EXPECT_EQ(waiter.status, 75) << waiter.err;
  EXPECT_GT(waiter.seconds, 2.5);
  const long long scripts = scripts_run() - before;
  // Its tries (one per heartbeat of its place in line, every half second,
  // each won here and undone) and leaving at the end: a few dozen scripts
  // (the commands inside them grow with the line's keys, so they are not
  // what is counted). A spinning waiter runs thousands.
  EXPECT_LT(scripts, 40) << "scripts run on the free server during a 3 s wait";
  sleep_for(0.2);
  EXPECT_EQ(wakes.out_so_far().find("pmessage"), std::string::npos) << wakes.out_so_far();
  EXPECT_EQ(s[2].cmd({"EXISTS", "redlock:{spin}"}).integer, 0) << "nothing left on the free server";
}

TEST(Redlock, AServerThatGrantsWithAnUnusableFenceDoesNotCountAndRaisesNothing) {
  // Two honest servers and one that answers every request with a grant
  // whose fence no counter could follow (a broken or hostile server).
  Servers s(2);
  FakeRedis hostile("*5\r\n$8\r\nacquired\r\n$3\r\ntok\r\n:9223372036854775807\r\n:1\r\n:30000\r\n");
  const Env env{{"REDLOCK_URL", s.urls() + "," + hostile.url()}};
  constexpr long long k_max_fence = 9'007'199'254'740'991;  // 2^53 - 1
  long long last = s[0].time_us();
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    Result a = run({"acquire", "--json", "--redis-timeout", "500ms", "hostile"}, env);
    ASSERT_EQ(a.status, 0) << a.err;
    json j = json::parse(a.out);
    const long long fence = j["fence"].get<long long>();
    EXPECT_GT(fence, last);
    EXPECT_LE(fence, k_max_fence);
    EXPECT_EQ(j["voted"].size(), 2u) << a.out;
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(s[i].cmd({"HGET", lock_key("hostile"), "fence"}).str, std::to_string(fence));
      EXPECT_LE(std::stoll(s[i].cmd({"GET", lock_key("hostile") + ":fence"}).str), fence);
    }
    Result rel = run({"release", "--token", j["token"].get<std::string>(), "hostile"}, env);
    EXPECT_EQ(rel.status, 0) << rel.err;
    last = fence;
  }
  // Its grants were given back at once (the release of an attempt: 'quiet').
  EXPECT_NE(hostile.received().find("$5\r\nquiet\r\n"), std::string::npos);
}

TEST(Redlock, RaisingAFenceRefusesOneNoServerHandsOut) {
  // Redlock raises the servers behind to the majority's largest fence: a
  // fence past 2^53 - 1 would leave a counter no later fence could follow.
  Servers s(1);
  const std::string body(redlock::lock::script(redlock::lock::ScriptName::k_raise_fence).body);
  const std::string counter = lock_key("raise") + ":fence";
  for (const std::string bad : {"9223372036854775807", "9007199254740992", "1e30", "0", "-1", "1.5", "abc"}) {
    SCOPED_TRACE(bad);
    redlock::redis::Reply r = s[0].cmd({"EVAL", body, "2", lock_key("raise"), counter, "tok", bad});
    EXPECT_TRUE(r.is_error()) << r.text();
    EXPECT_EQ(s[0].cmd({"EXISTS", counter}).integer, 0);
  }
  redlock::redis::Reply ok = s[0].cmd({"EVAL", body, "2", lock_key("raise"), counter, "tok", "1796057741501083"});
  EXPECT_FALSE(ok.is_error()) << ok.text();
  EXPECT_EQ(s[0].cmd({"GET", counter}).str, "1796057741501083");
  // A counter that is not a number is not redlock's: it stays as it is.
  s[0].cmd({"SET", counter, "someone's"});
  redlock::redis::Reply foreign = s[0].cmd({"EVAL", body, "2", lock_key("raise"), counter, "tok", "1796057741501084"});
  EXPECT_TRUE(foreign.is_error()) << foreign.text();
  EXPECT_EQ(s[0].cmd({"GET", counter}).str, "someone's");
}

// Over several servers exec's release still goes with its body (EVAL): the
// round ends at a majority, and a NOSCRIPT from a server still out would go
// unread and leave its hold there. The rest goes by EVALSHA.
TEST(Redlock, ExecsReleaseGoesWithItsBodyToEveryServer) {
  Servers s(3);
  // Every script loaded first (raising a lagging server's fence is one too),
  // so that no EVAL after NOSCRIPT is counted.
  for (const auto& server : s.all) {
    for (const auto* embedded : redlock::lock::lua::k_all) {
      ASSERT_EQ(server->cmd({"SCRIPT", "LOAD", std::string(embedded->text)}).str.size(), 40U);
    }
    ASSERT_EQ(server->cmd({"CONFIG", "RESETSTAT"}).text(), "OK");
  }
  Result r = run({"exec", "body", "--", "true"}, s.env());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& server : s.all) {
    EXPECT_EQ(server->calls("eval"), 1);
    EXPECT_GE(server->calls("evalsha"), 1);
    EXPECT_FALSE(key_exists(*server, lock_key("body")));
  }
}
