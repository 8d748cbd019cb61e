// Every round trip has an end: --redis-timeout bounds a whole reply (a server that
// drips one byte at a time does not stretch it), and SIGINT, SIGTERM or
// SIGHUP during any round trip of any subcommand ends redlock at once with
// 128+N, leaving nothing held once the server answers again.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "exec_support.hpp"
#include "fake_redis.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

const std::string k_token = "0123456789abcdef0123456789abcdef";

// True when a connection to `port` on this host has request bytes the
// server has not read (/proc/net/tcp: rx_queue of its ESTABLISHED socket).
bool request_unread(int port) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues;
      fields >> slot >> local >> remote >> state >> queues;
      auto colon = local.rfind(':');
      if (colon == std::string::npos || state != "01") {
        continue;
      }
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port &&
          std::stoll(queues.substr(queues.find(':') + 1), nullptr, 16) > 0) {
        return true;
      }
    }
  }
  return false;
}

// Runs acquire and release once, so that the server has both scripts.
void warm_up(const Env& env) {
  Result a = run({"acquire", "warm"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  Result r = run({"release", "warm", "--token", a.out.substr(0, a.out.find('\n'))}, env);
  ASSERT_EQ(r.status, 0) << r.err;
}

}  // namespace

TEST(RoundTrips, ADrippingReplyEndsWithinTheTimeoutNotOneTimeoutPerByte) {
  // "$100000\r\n" and then one byte every 200 ms: were the 1 s timeout
  // restarted by each byte, acquire would wait for all 100000 of them.
  FakeRedis fake(FakeRedis::Mode::k_drip, std::chrono::milliseconds(200));
  TempDir dir;
  Env env{{"REDLOCK_URL", fake.url()}};
  for (auto args : std::vector<std::vector<std::string>>{{"acquire", "w"},
                                                         {"release", "w", "--token", k_token},
                                                         {"renew", "w", "--token", k_token},
                                                         {"status", "w"},
                                                         {"exec", "w", "--", "touch", dir.path() + "/ran"}}) {
    SCOPED_TRACE(args[0]);
    args.insert(args.begin(), {"--redis-timeout", "1s"});
    Result r = run(args, env, Seconds(15));
    EXPECT_EQ(r.status, 69) << r.err;
    EXPECT_LT(r.seconds, 2.5);
    EXPECT_NE(r.err.find("did not answer within 1s"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(file_exists(dir.path() + "/ran"));
}

class StopDuringRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(StopDuringRoundTrip, EndsEverySubcommandAtOnceWith128PlusN) {
  const int sig = GetParam();
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}};
  // The server knows the scripts (an undo sent while it is stopped cannot
  // fall back from EVALSHA to EVAL), and "other" is held for release and
  // renew to talk about.
  warm_up(env);
  Result held = run({"acquire", "--ttl", "60s", "other"}, env);
  ASSERT_EQ(held.status, 0) << held.err;
  const std::string token = held.out.substr(0, held.out.find('\n'));

  for (auto args : std::vector<std::vector<std::string>>{{"acquire", "fresh"},
                                                         {"acquire", "fresh", "--wait", "30s"},
                                                         {"release", "other", "--token", token},
                                                         {"renew", "other", "--token", token},
                                                         {"status", "other"},
                                                         {"status"},
                                                         {"exec", "fresh", "--", "touch", dir.path() + "/ran"}}) {
    SCOPED_TRACE(args[0] + (args.size() > 1 ? " " + args[1] : ""));
    args.insert(args.begin(), {"--redis-timeout", "30s"});
    redis.pause();
    Child child(args, env);
    ASSERT_TRUE(eventually([&] { return request_unread(redis.port()); }, Seconds(10))) << child.err_so_far();
    const double sent = now_seconds();
    child.signal(sig);
    Result r = child.wait(Seconds(40));
    const double took = now_seconds() - sent;
    redis.resume();
    EXPECT_EQ(r.signal, sig) << r.err;
    EXPECT_LT(took, 1.0);
    if (args[2] != "status") {
      EXPECT_EQ(r.out, "");  // no token
    }
    EXPECT_NE(r.err.find(std::string("SIG") + sigabbrev_np(sig)), std::string::npos) << r.err;
    EXPECT_FALSE(file_exists(dir.path() + "/ran")) << "CMD ran";
    // The server reads what was left for it before the next round.
    ASSERT_TRUE(eventually([&] { return !request_unread(redis.port()); }, Seconds(5)));
  }
  // The abandoned requests run now that the server is back; an acquire's
  // is followed by its release, so "fresh" ends up free.
  EXPECT_TRUE(eventually([&] { return !key_exists(redis, lock_key("fresh")); }, Seconds(5)));
  EXPECT_EQ(redis.cmd({"PING"}).str, "PONG");
}

TEST_P(StopDuringRoundTrip, EndsExecsFinalReleaseAtOnceAndTheReleaseStillHappens) {
  const int sig = GetParam();
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}};
  warm_up(env);
  const std::string go = dir.path() + "/go";
  const std::string started = dir.path() + "/started";
  Child exec({"--redis-timeout", "30s", "exec", "--ttl", "60s", "job", "--", "sh", "-c",
              "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.02; done", "sh", started, go},
             env);
  ASSERT_TRUE(eventually([&] { return file_exists(started); }, Seconds(10))) << exec.err_so_far();
  ASSERT_TRUE(key_exists(redis, lock_key("job")));
  // Its revoke listener has subscribed and read the lock's revoke mark (its
  // HGET): the request found unread below is the release's, not the
  // listener's.
  ASSERT_TRUE(eventually([&] { return redis.calls("hget") >= 1; }, Seconds(10))) << exec.err_so_far();
  redis.pause();
  write_file(go, "");  // CMD ends; exec's release meets a stopped server
  ASSERT_TRUE(eventually([&] { return request_unread(redis.port()); }, Seconds(10))) << exec.err_so_far();
  const double sent = now_seconds();
  exec.signal(sig);
  Result r = exec.wait(Seconds(40));
  const double took = now_seconds() - sent;
  redis.resume();
  EXPECT_EQ(r.signal, sig) << r.err;
  EXPECT_LT(took, 1.0);
  EXPECT_TRUE(eventually([&] { return !key_exists(redis, lock_key("job")); }, Seconds(5)))
      << "the release sent before the signal runs when the server is back";
}

INSTANTIATE_TEST_SUITE_P(Signals, StopDuringRoundTrip, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string("SIG") + sigabbrev_np(p.param);
                         });

TEST(RoundTrips, AGrantThatArrivesAfterItsTtlIsRedisTooSlowNotBusy) {
  // The answer granted the lock, but only after its TTL had run out: it was
  // given back and called busy ("contended: no quorum for anyone"), which
  // -q hides, on a single server that nobody else used.
  RedisServer redis;
  redis.pause();
  Child c({"acquire", "--ttl", "300ms", "--redis-timeout", "5s", "slow"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_TRUE(eventually([&] { return request_unread(redis.port()); }, Seconds(5)));
  sleep_for(0.6);  // the server holds the request past its TTL
  redis.resume();
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_NE(r.err.find("acquiring slow took"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a longer --ttl helps"), std::string::npos) << r.err;
  EXPECT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("slow")}).integer == 0; }, Seconds(2)));
}

// A stop signal that comes once the lock is granted is taken by redlock,
// which gives the lock back before it ends. A give-back that fails (the
// servers close the connection) must not turn that stop into 69: it ends
// with 128+N all the same, and says the lock frees itself. Two servers
// and --wait make the window wide enough to hit: after the grant, the
// waiter leaves both lines, and the servers hold that request until the
// signal has come.
TEST(RoundTrips, AStopAfterTheGrantIs128PlusNEvenWhenTheGiveBackFails) {
  // {acquired, token, fence, count, ttl}: the token is not read back.
  const std::string grant = "*5\r\n$8\r\nacquired\r\n$1\r\nx\r\n:7\r\n:1\r\n:30000\r\n";
  using Step = FakeRedis::Step;
  TempDir dir;
  // The give-back meets a closed connection, or a server that no longer
  // answers: then it waits a moment, not the whole --timeout.
  for (const auto then : {Step::Kind::k_close, Step::Kind::k_stall}) {
    const std::vector<Step> steps{{Step::Kind::k_answer, grant}, {Step::Kind::k_stall, ""}, {then, ""}};
    for (auto args :
         std::vector<std::vector<std::string>>{{"acquire", "--wait", "10s", "job"},
                                               {"exec", "--wait", "10s", "job", "--", "touch", dir.path() + "/ran"}}) {
      SCOPED_TRACE(args[0] + (then == Step::Kind::k_close ? " (closed)" : " (stalled)"));
      FakeRedis a(steps);
      FakeRedis b(steps);
      args.insert(args.begin(), {"--redis", a.url(), "--redis", b.url(), "--redis-timeout", "5s"});
      Child child(args);
      // Both servers granted, and hold the request that follows the grant.
      ASSERT_TRUE(eventually([&] { return a.requests() >= 2 && b.requests() >= 2; }, Seconds(10)))
          << child.err_so_far();
      const double sent = now_seconds();
      child.signal(SIGTERM);
      Result r = child.wait(Seconds(20));
      EXPECT_EQ(r.signal, SIGTERM) << r.status << ": " << r.err;
      EXPECT_LT(now_seconds() - sent, 2.5);
      EXPECT_EQ(r.out, "");  // no token
      EXPECT_NE(r.err.find("interrupted by SIGTERM"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("frees itself"), std::string::npos) << r.err;
    }
  }
  EXPECT_FALSE(file_exists(dir.path() + "/ran")) << "CMD ran";
}

// Half a reply read, the rest never coming: the stop still wins at once,
// for a single server and a Redlock alike (the redis layer never takes the
// signal, so whatever the round's failure, the command ends by it).
TEST(RoundTrips, AStopWhileAReplyIsHalfReadIs128PlusN) {
  using Step = FakeRedis::Step;
  const std::vector<Step> steps{{Step::Kind::k_answer, "*5\r\n$8\r\nacqu"}, {Step::Kind::k_stall, ""}};
  for (const int servers : {1, 3}) {
    SCOPED_TRACE(servers);
    std::vector<std::unique_ptr<FakeRedis>> fakes;
    std::vector<std::string> args;
    for (int i = 0; i < servers; ++i) {
      fakes.push_back(std::make_unique<FakeRedis>(steps));
      args.insert(args.end(), {"--redis", fakes.back()->url()});
    }
    args.insert(args.end(), {"--redis-timeout", "10s", "acquire", "--wait", "10s", "job"});
    Child child(args);
    ASSERT_TRUE(eventually(
        [&] { return std::all_of(fakes.begin(), fakes.end(), [](const auto& f) { return f->requests() >= 1; }); },
        Seconds(10)))
        << child.err_so_far();
    const double sent = now_seconds();
    child.signal(SIGTERM);
    Result r = child.wait(Seconds(20));
    EXPECT_EQ(r.signal, SIGTERM) << r.status << ": " << r.err;
    EXPECT_LT(now_seconds() - sent, 2.5);
    EXPECT_EQ(r.out, "");
  }
}

// A stop that comes while a waiter's beat is in flight to a server that
// has stopped answering: the waiter leaves the line on the way out, but
// waits only a moment for that answer, not a whole --redis-timeout (the stop was
// taken already: only a bound of its own ends that wait).
TEST(RoundTrips, AStopDuringAWaitEndsAtOnceWhenTheServerStopsAnswering) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  warm_up(env);
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "held"}, env).status, 0);
  Child waiter({"--redis-timeout", "5s", "acquire", "--wait", "30s", "held"}, env);
  ASSERT_TRUE(await_waiters(redis, "held", 1, Seconds(10))) << waiter.err_so_far();
  redis.pause();
  // Its next beat (every 500 ms) waits in the stopped server's socket.
  ASSERT_TRUE(eventually([&] { return request_unread(redis.port()); }, Seconds(10))) << waiter.err_so_far();
  const double sent = now_seconds();
  waiter.signal(SIGTERM);
  Result r = waiter.wait(Seconds(20));
  const double took = now_seconds() - sent;
  redis.resume();
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  EXPECT_LT(took, 2.5) << r.err;
  EXPECT_NE(r.err.find("SIGTERM"), std::string::npos) << r.err;
}

// Several names: the first taken, the second waited for, and the server
// stops answering. The stop gives the first name back on the way out, but
// waits only a moment for that answer, not a --redis-timeout per name.
TEST(RoundTrips, AStopWhileWaitingForTheSecondNameEndsAtOnceWhenTheServerStopsAnswering) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  warm_up(env);
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "second"}, env).status, 0);
  Child waiter({"--redis-timeout", "5s", "acquire", "--wait", "30s", "first", "second"}, env);
  ASSERT_TRUE(await_waiters(redis, "second", 1, Seconds(10))) << waiter.err_so_far();
  ASSERT_TRUE(key_exists(redis, lock_key("first")));
  redis.pause();
  ASSERT_TRUE(eventually([&] { return request_unread(redis.port()); }, Seconds(10))) << waiter.err_so_far();
  const double sent = now_seconds();
  waiter.signal(SIGTERM);
  Result r = waiter.wait(Seconds(30));
  const double took = now_seconds() - sent;
  redis.resume();
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  EXPECT_LT(took, 2.5) << r.err;
  EXPECT_EQ(r.out, "");
  // The give-back was sent: the server runs it once it is back.
  EXPECT_TRUE(eventually([&] { return !key_exists(redis, lock_key("first")); }, Seconds(5)));
}
