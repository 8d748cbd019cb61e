// The lock core on one real redis-server, driven through the built binary:
// one behaviour per test, asserted on exit status, output and the keys in
// Redis (DESIGN.md: exit codes, keys, safety promises 1-4 and 7).

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

void sleep_for(double seconds) {
  std::this_thread::sleep_for(Seconds(seconds));
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) {
    out.push_back(w);
  }
  return out;
}

// Exactly one non-empty line, as DESIGN.md promises for every failure.
::testing::AssertionResult one_line(const std::string& err) {
  if (err.empty() || err.back() != '\n' || std::count(err.begin(), err.end(), '\n') != 1 || err == "\n") {
    return ::testing::AssertionFailure() << "expected one line on stderr, got: '" << err << "'";
  }
  return ::testing::AssertionSuccess();
}

std::string this_host() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

bool is_hex(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A listener that never accepts, with its one-slot backlog already full:
// a client's connect() then hangs until its own timeout.
class Blackhole {
 public:
  Blackhole() {
    m_listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(m_listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(m_listener, 0);
    socklen_t len = sizeof(addr);
    getsockname(m_listener, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    for (int i = 0; i < 3; ++i) {
      int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      (void)connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
      m_fillers.push_back(c);
    }
    sleep_for(0.05);
  }
  ~Blackhole() {
    for (int c : m_fillers) {
      close(c);
    }
    close(m_listener);
  }
  [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(m_port); }

 private:
  int m_listener = -1;
  int m_port = 0;
  std::vector<int> m_fillers;
};

// A redis-server of our own and helpers to look at its keys.
class WithRedis : public ::testing::Test {
 protected:
  explicit WithRedis(RedisServer::Options options = {}) : redis(std::move(options)) {}

  [[nodiscard]] Env env(const Env& extra = {}) const {
    Env e{{"REDLOCK_URL", redis.url()}};
    for (const auto& [k, v] : extra) {
      e[k] = v;
    }
    return e;
  }
  Result rl(const std::vector<std::string>& args, const Env& extra = {}) { return run(args, env(extra)); }

  // Takes `name` and returns its token ("" and a test failure if that fails).
  std::string take(const std::string& name, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"acquire", name};
    args.insert(args.end(), more.begin(), more.end());
    Result r = rl(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return first_line(r.out);
  }

  static std::string key(const std::string& name) { return "redlock:{" + name + "}"; }

  std::map<std::string, std::string> hgetall(const std::string& k) {
    auto r = redis.cmd({"HGETALL", k});
    std::map<std::string, std::string> out;
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      out[r.elements[i].str] = r.elements[i + 1].str;
    }
    return out;
  }
  std::string hget(const std::string& k, const std::string& field) { return redis.cmd({"HGET", k, field}).str; }
  long long pttl(const std::string& k) { return redis.cmd({"PTTL", k}).integer; }
  bool exists(const std::string& k) { return redis.cmd({"EXISTS", k}).integer == 1; }
  long long subscribers(const std::string& name) {
    auto r = redis.cmd({"PUBSUB", "NUMSUB", key(name) + ":released"});
    return r.elements.size() == 2 ? r.elements[1].integer : -1;
  }
  // Waits until a waiter for `name` has subscribed and had time to settle
  // into its sleep.
  void await_waiter(const std::string& name, Child& waiter) {
    ASSERT_TRUE(eventually([&] { return subscribers(name) >= 1 || !waiter.alive(); })) << "the waiter never subscribed";
    ASSERT_TRUE(waiter.alive()) << waiter.wait().err;
    sleep_for(0.2);
    ASSERT_TRUE(waiter.alive()) << waiter.wait().err;
  }

  RedisServer redis;
};

class Acquire : public WithRedis {};
class Release : public WithRedis {};
class Renew : public WithRedis {};
class Reentry : public WithRedis {};
class Fence : public WithRedis {};
class Wait : public WithRedis {};
class ForeignKey : public WithRedis, public ::testing::WithParamInterface<const char*> {};
class Unreachable : public WithRedis {};
class Status : public WithRedis {};
class Prefix : public WithRedis {};
class GlobalOptions : public WithRedis {};

class Auth : public WithRedis {
 protected:
  Auth() : WithRedis(with_password()) {}
  static RedisServer::Options with_password() {
    RedisServer::Options o;
    o.requirepass = "s3cret-Pw0rd";
    return o;
  }
  static constexpr const char* k_password = "s3cret-Pw0rd";
  static constexpr const char* k_wrong = "wr0ng-Guess";
  // Neither password may ever appear in what redlock prints.
  static void expect_no_password(const Result& r) {
    for (const char* secret : {k_password, k_wrong}) {
      EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
      EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;
    }
  }
  std::string password_file(const std::string& content) {
    std::string path = m_dir.path() + "/pw" + std::to_string(m_files++);
    std::ofstream(path) << content;
    return path;
  }

 private:
  TempDir m_dir;
  int m_files = 0;
};

class UnixSocket : public WithRedis {
 protected:
  UnixSocket() : WithRedis(on_socket()) {}
  static RedisServer::Options on_socket() {
    RedisServer::Options o;
    o.unix_socket = true;
    return o;
  }
};

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
  std::string first = take("short", {"--ttl", "300ms"});
  const long long first_fence = std::stoll(hget(key("short"), "fence"));
  EXPECT_EQ(rl({"acquire", "short"}).status, 75);
  ASSERT_TRUE(eventually([&] { return !exists(key("short")); }, Seconds(3)));
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
  std::string t = take("renj");
  Result r = rl({"renew", "renj", "--token", t, "--ttl", "10s", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["ttl_ms"], 10000);
  long long validity = j["validity_ms"];
  EXPECT_LE(validity, 10000 - 102);
  EXPECT_GT(validity, 8000);
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

// ---------------------------------------------------------------- waiting

TEST_F(Wait, WaiterWakesSoonAfterARelease) {
  std::string holder = take("w", {"--ttl", "30s"});
  Child waiter({"acquire", "w", "--wait", "10s", "--ttl", "10s"}, env());
  await_waiter("w", waiter);
  const double start = now_seconds();
  ASSERT_EQ(rl({"release", "w", "--token", holder}).status, 0);
  Result r = waiter.wait(Seconds(15));
  const double woke = now_seconds() - start;
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(woke, 0.3) << "from the release to the waiter holding the lock";
  std::string token = first_line(r.out);
  EXPECT_NE(token, holder);
  EXPECT_EQ(hget(key("w"), "token"), token);
}

TEST_F(Wait, WaiterWakesSoonAfterTheHolderExpires) {
  take("x", {"--ttl", "1500ms"});
  Child waiter({"acquire", "x", "--wait", "10s", "--ttl", "10s"}, env());
  await_waiter("x", waiter);
  const long long left = pttl(key("x"));
  const double expiry = now_seconds() + static_cast<double>(left) / 1000.0;
  ASSERT_GT(left, 0);
  Result r = waiter.wait(Seconds(15));
  const double done = now_seconds();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(done, expiry - 0.05) << "took the lock before it expired";
  EXPECT_LT(done, expiry + 0.3) << "slow to notice the expiry";
  EXPECT_EQ(hget(key("x"), "token"), first_line(r.out));
}

TEST_F(Wait, GivesUpWhenTheWaitRunsOut) {
  take("held", {"--ttl", "30s"});
  Result r = rl({"acquire", "held", "--wait", "1s"});
  EXPECT_EQ(r.status, 75);
  EXPECT_GE(r.seconds, 0.9);
  EXPECT_LT(r.seconds, 3.0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(one_line(r.err));
}

TEST_F(Wait, ZeroIsExactlyOneTry) {
  take("once", {"--ttl", "30s"});
  long long before = redis.calls("evalsha") + redis.calls("eval");
  Result r = rl({"acquire", "once", "--wait", "0"});
  EXPECT_EQ(r.status, 75);
  EXPECT_LT(r.seconds, 1.0);
  EXPECT_EQ(redis.calls("evalsha") + redis.calls("eval"), before + 1);
  EXPECT_EQ(subscribers("once"), 0);
}

TEST_F(Wait, AnIdleWaiterSendsNoCommands) {
  take("idle", {"--ttl", "60s"});
  Child waiter({"acquire", "idle", "--wait", "30s"}, env());
  await_waiter("idle", waiter);
  const long long scripts = redis.calls("evalsha") + redis.calls("eval");
  const long long all = redis.commands_run();
  sleep_for(2.5);
  EXPECT_TRUE(waiter.alive());
  EXPECT_EQ(redis.calls("evalsha") + redis.calls("eval"), scripts);
  EXPECT_EQ(redis.commands_run(), all) << redis.cmd({"INFO", "commandstats"}).str;
  waiter.signal(SIGTERM);
  EXPECT_EQ(waiter.wait(Seconds(5)).status, 143);
}

TEST_F(Wait, SigintEndsTheWaitWith130AndTakesNothing) {
  std::string holder = take("int", {"--ttl", "30s"});
  Child waiter({"acquire", "int", "--wait", "inf"}, env());
  await_waiter("int", waiter);
  const double start = now_seconds();
  waiter.signal(SIGINT);
  Result r = waiter.wait(Seconds(5));
  EXPECT_EQ(r.status, 130);
  EXPECT_LT(now_seconds() - start, 1.0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_EQ(hget(key("int"), "token"), holder);
  EXPECT_EQ(hget(key("int"), "count"), "1");
  // Once the holder lets go, nobody (no leftover of the waiter) takes it.
  ASSERT_EQ(rl({"release", "int", "--token", holder}).status, 0);
  sleep_for(0.3);
  EXPECT_FALSE(exists(key("int")));
  EXPECT_EQ(subscribers("int"), 0);
}

TEST_F(Wait, SigtermEndsTheWaitWith143AndTakesNothing) {
  std::string holder = take("term", {"--ttl", "30s"});
  Child waiter({"acquire", "term", "--wait", "20s"}, env());
  await_waiter("term", waiter);
  const double start = now_seconds();
  waiter.signal(SIGTERM);
  Result r = waiter.wait(Seconds(5));
  EXPECT_EQ(r.status, 143);
  EXPECT_LT(now_seconds() - start, 1.0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_EQ(hget(key("term"), "token"), holder);
  ASSERT_EQ(rl({"release", "term", "--token", holder}).status, 0);
  sleep_for(0.3);
  EXPECT_FALSE(exists(key("term")));
}

// ---------------------------------------------------------------- keys redlock did not write

TEST_P(ForeignKey, Exits76ForEverySubcommandAndIsLeftUntouched) {
  const std::string kind = GetParam();
  const std::string k = key("alien");
  if (kind == "list") {
    redis.cmd({"RPUSH", k, "a", "b"});
  } else if (kind == "string") {
    redis.cmd({"SET", k, "someone else's"});
  } else if (kind == "set") {
    redis.cmd({"SADD", k, "m"});
  } else if (kind == "hash") {
    redis.cmd({"HSET", k, "owner", "another program"});
  } else if (kind == "hash-with-token-only") {
    redis.cmd({"HSET", k, "token", "t0k3n"});
  } else if (kind == "hash-with-mode") {
    // Looks like a semaphore's or readers' hash, but redlock did not write it.
    redis.cmd({"HSET", k, "mode", "shared", "owner", "bob"});
  } else if (kind == "hash-with-plain-fields") {
    redis.cmd({"HSET", k, "token", "t0k3n", "count", "1", "fence", "1", "host", "h", "pid", "1"});
  }
  const std::string dump = redis.cmd({"DUMP", k}).str;
  ASSERT_FALSE(dump.empty());

  const std::vector<std::vector<std::string>> invocations = {
      {"acquire", "alien"},
      {"acquire", "alien", "--wait", "2s"},
      {"acquire", "alien", "--token", "t0k3n"},
      {"release", "alien", "--token", "t0k3n"},
      {"renew", "alien", "--token", "t0k3n"},
      {"status", "alien"},
      {"status", "alien", "--json"},
  };
  for (const auto& args : invocations) {
    SCOPED_TRACE(args[0] + (args.size() > 2 ? " " + args[2] : ""));
    Result r = rl(args);
    EXPECT_EQ(r.status, 76) << r.err;
    EXPECT_LT(r.seconds, 1.5);  // not treated as busy: no waiting
    EXPECT_TRUE(one_line(r.err));
    EXPECT_NE(r.err.find("alien"), std::string::npos) << r.err;
    if (args[0] != "status") {
      EXPECT_EQ(r.out, "");
    }
  }
  EXPECT_EQ(redis.cmd({"DUMP", k}).str, dump);
  EXPECT_EQ(pttl(k), -1);
  EXPECT_FALSE(exists(k + ":fence"));
}

INSTANTIATE_TEST_SUITE_P(Kinds, ForeignKey,
                         ::testing::Values("list", "string", "set", "hash", "hash-with-token-only", "hash-with-mode",
                                           "hash-with-plain-fields"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST_F(Acquire, AFenceCounterThatIsNotANumberExits76AndWritesNothing) {
  // The lock key is free but its fence counter is someone else's list:
  // INCR answers WRONGTYPE inside the script, before anything is written.
  const std::string fence = key("fc") + ":fence";
  redis.cmd({"RPUSH", fence, "x"});
  Result r = rl({"acquire", "fc"});
  EXPECT_EQ(r.status, 76) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_FALSE(exists(key("fc")));
  EXPECT_EQ(redis.cmd({"LRANGE", fence, "0", "-1"}).elements.size(), 1u);
  // A string that is not a number fails the same way.
  redis.cmd({"SET", key("fs") + ":fence", "not a number"});
  Result s = rl({"acquire", "fs"});
  EXPECT_EQ(s.status, 76) << s.err;
  EXPECT_FALSE(exists(key("fs")));
  EXPECT_EQ(redis.cmd({"GET", key("fs") + ":fence"}).str, "not a number");
}

TEST_F(Status, ShowsAForeignKeyAsSuchInJson) {
  redis.cmd({"RPUSH", key("alien"), "a"});
  Result r = rl({"status", "alien", "--json"});
  EXPECT_EQ(r.status, 76);
  json j = json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["held"], false);
  EXPECT_EQ(j[0]["state"], "foreign");
}

// ---------------------------------------------------------------- unreachable, hung, refused

TEST_F(Unreachable, NobodyListeningExits69AtOnce) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port());
  for (const auto& args : std::vector<std::vector<std::string>>{{"acquire", "u"},
                                                                {"acquire", "u", "--wait", "5s"},
                                                                {"release", "u", "--token", "t"},
                                                                {"renew", "u", "--token", "t"},
                                                                {"status", "u"},
                                                                {"status"}}) {
    SCOPED_TRACE(args[0]);
    Result r = run(args, {{"REDLOCK_URL", url}});
    EXPECT_EQ(r.status, 69);
    EXPECT_LT(r.seconds, 1.5);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(one_line(r.err));
    EXPECT_NE(r.err.find(url.substr(8)), std::string::npos) << r.err;  // names the server
  }
}

TEST_F(Unreachable, AListenerThatNeverAcceptsExits69AfterTheConnectTimeout) {
  Blackhole hole;
  Result r = run({"acquire", "bh", "--connect-timeout", "300ms"}, {{"REDLOCK_URL", hole.url()}});
  EXPECT_EQ(r.status, 69);
  EXPECT_GE(r.seconds, 0.25);
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_TRUE(one_line(r.err));
}

TEST_F(Unreachable, AStoppedServerExits69AfterTheTimeout) {
  take("warm");
  redis.pause();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"acquire", "stopped", "--timeout", "500ms"},
                                             {"release", "warm", "--token", "t", "--timeout", "500ms"},
                                             {"renew", "warm", "--token", "t", "--timeout", "500ms"},
                                             {"status", "--timeout", "500ms"}}) {
    SCOPED_TRACE(args[0]);
    Result r = rl(args);
    EXPECT_EQ(r.status, 69);
    EXPECT_GE(r.seconds, 0.4);
    EXPECT_LT(r.seconds, 3.0);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(one_line(r.err));
  }
  redis.resume();
}

TEST_F(Auth, NoPasswordIsRefusedWith77) {
  Result r = rl({"-v", "acquire", "a"});
  EXPECT_EQ(r.status, 77) << r.err;
  expect_no_password(r);
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(r.err.empty());
  EXPECT_EQ(rl({"status", "a"}).status, 77);
}

TEST_F(Auth, AWrongPasswordIsRefusedWith77) {
  Result r = rl({"-v", "acquire", "a"}, {{"REDLOCK_PASSWORD", k_wrong}});
  EXPECT_EQ(r.status, 77) << r.err;
  expect_no_password(r);
  Result f = rl({"acquire", "a", "--password-file", password_file(std::string(k_wrong) + "\n")});
  EXPECT_EQ(f.status, 77) << f.err;
  EXPECT_TRUE(one_line(f.err));
  expect_no_password(f);
  Result u = run(
      {"acquire", "a", "--redis", "redis://:" + std::string(k_wrong) + "@127.0.0.1:" + std::to_string(redis.port())});
  EXPECT_EQ(u.status, 77) << u.err;
  expect_no_password(u);
  EXPECT_FALSE(exists(key("a")));
}

TEST_F(Auth, TheRightPasswordFromTheEnvironmentWorks) {
  Env pw{{"REDLOCK_PASSWORD", k_password}};
  Result a = rl({"-v", "acquire", "a", "--json"}, pw);
  ASSERT_EQ(a.status, 0) << a.err;
  expect_no_password(a);
  std::string token = json::parse(a.out)["token"];
  EXPECT_EQ(hget(key("a"), "token"), token);
  Result s = rl({"-v", "status", "--json"}, pw);
  EXPECT_EQ(s.status, 0) << s.err;
  expect_no_password(s);
  Result r = rl({"-v", "release", "a", "--token", token}, pw);
  EXPECT_EQ(r.status, 0) << r.err;
  expect_no_password(r);
}

TEST_F(Auth, TheRightPasswordFromAFileWorks) {
  std::string file = password_file(std::string(k_password) + "\n");
  Result a = rl({"acquire", "f", "--password-file", file});
  ASSERT_EQ(a.status, 0) << a.err;
  expect_no_password(a);
  Result s = rl({"-v", "--password-file", file, "status", "f"});
  EXPECT_EQ(s.status, 0) << s.err;
  expect_no_password(s);
}

TEST_F(Auth, TheRightPasswordInTheUrlWorksAndIsNotShown) {
  std::string url = "redis://:" + std::string(k_password) + "@127.0.0.1:" + std::to_string(redis.port());
  Result a = run({"-v", "acquire", "u", "--redis", url});
  ASSERT_EQ(a.status, 0) << a.err;
  expect_no_password(a);
  Result s = run({"status", "--redis", url});
  EXPECT_EQ(s.status, 0) << s.err;
  expect_no_password(s);
  Result busy = run({"acquire", "u", "--redis", url});
  EXPECT_EQ(busy.status, 75);
  expect_no_password(busy);
}

// ---------------------------------------------------------------- status

TEST_F(Status, TableHasAHeaderAndOneRowPerLock) {
  Result a = rl({"acquire", "tbl", "--ttl", "60s", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  const long long fence = json::parse(a.out)["fence"];
  Result s = rl({"status"});
  ASSERT_EQ(s.status, 0) << s.err;
  auto lines = split_lines(s.out);
  ASSERT_EQ(lines.size(), 2u) << s.out;
  auto header = words(lines[0]);
  auto row = words(lines[1]);
  auto column = [&](const std::string& name) -> std::string {
    auto at = std::find(header.begin(), header.end(), name);
    if (at == header.end() || static_cast<size_t>(at - header.begin()) >= row.size()) {
      ADD_FAILURE() << "no column " << name << " in " << s.out;
      return {};
    }
    return row[static_cast<size_t>(at - header.begin())];
  };
  EXPECT_EQ(column("NAME"), "tbl");
  EXPECT_EQ(column("HOST"), this_host());
  EXPECT_EQ(column("PID"), std::to_string(getpid()));
  EXPECT_EQ(column("FENCE"), std::to_string(fence));
  EXPECT_EQ(column("COUNT"), "1");
  EXPECT_NE(column("TTL"), "");
  EXPECT_NE(std::find(header.begin(), header.end(), "AGE"), header.end());
  EXPECT_NE(std::find(header.begin(), header.end(), "COMMAND"), header.end());
}

TEST_F(Status, JsonDescribesTheHolder) {
  Result a = rl({"acquire", "sj", "--ttl", "60s", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  const long long fence = json::parse(a.out)["fence"];
  Result s = rl({"status", "sj", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "sj");
  EXPECT_EQ(j[0]["held"], true);
  EXPECT_EQ(j[0]["fence"], fence);
  EXPECT_EQ(j[0]["host"], this_host());
  EXPECT_EQ(j[0]["pid"], getpid());
  EXPECT_EQ(j[0]["count"], 1);
  ASSERT_TRUE(j[0]["ttl_ms"].is_number_integer());
  long long ttl = j[0]["ttl_ms"];
  EXPECT_GT(ttl, 50'000);
  EXPECT_LE(ttl, 60'000);
}

TEST_F(Status, OfANamedLockExits0WhenHeldAnd1WhenFree) {
  take("held");
  EXPECT_EQ(rl({"status", "held"}).status, 0);
  Result free = rl({"status", "free", "--json"});
  EXPECT_EQ(free.status, 1);
  json j = json::parse(free.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["held"], false);
  EXPECT_EQ(rl({"status", "held", "free"}).status, 1);
  EXPECT_EQ(rl({"status", "free"}).status, 1);
}

TEST_F(Status, WithoutNamesListsEveryLockUnderThePrefixAndNothingElse) {
  for (const char* name : {"b", "a", "c/d", "ünï"}) {
    take(name);
  }
  redis.cmd({"HSET", "other:{z}", "token", "t", "count", "1"});  // another prefix
  redis.cmd({"SET", "redlock:unbraced", "x"});
  Result s = rl({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  std::vector<std::string> names;
  for (const auto& l : json::parse(s.out)) {
    names.push_back(l["name"]);
    EXPECT_EQ(l["held"], true);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c/d", "ünï"}));
  EXPECT_EQ(redis.calls("keys"), 0) << "status must SCAN, never KEYS";
  EXPECT_GT(redis.calls("scan"), 0);
}

TEST_F(Status, WithoutNamesAndNoLocksPrintsAnEmptyList) {
  take("gone");
  Result s0 = rl({"status"});
  ASSERT_EQ(split_lines(s0.out).size(), 2u) << s0.out;
  redis.cmd({"DEL", key("gone")});
  Result s = rl({"status", "--json"});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out), json::array());
}

TEST_F(Status, PrintsStoredTextEscaped) {
  // A lock hash with our fields but hostile text in them (written by a
  // redlock on a host with a strange name, or by hand).
  redis.cmd({"HSET",     key("evil"), "schema", "redlock/1",
             "token",    "t",         "count",  "1",
             "fence",    "1",         "host",   "h\x1b]0;owned\x07",
             "pid",      "1",         "cmd",    "rm\x1b[2J -rf\n/",
             "since_ms", "0",         "ttl_ms", "60000"});
  redis.cmd({"PEXPIRE", key("evil"), "60000"});
  Result s = rl({"status"});
  ASSERT_EQ(s.status, 0) << s.err;
  for (char c : s.out) {
    auto u = static_cast<unsigned char>(c);
    EXPECT_FALSE((u < 0x20 && c != '\n') || u == 0x7f) << "control byte " << int(u) << " in " << s.out;
  }
  EXPECT_EQ(split_lines(s.out).size(), 2u) << s.out;
  EXPECT_NE(s.out.find("\\x1b"), std::string::npos) << s.out;
}

// ---------------------------------------------------------------- prefix and global options

TEST_F(Prefix, SeparatesLocksOfTheSameName) {
  Result a = rl({"acquire", "x", "--prefix", "app1:"});
  Result b = rl({"--prefix", "app2:", "acquire", "x"});
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(hget("app1:{x}", "token"), first_line(a.out));
  EXPECT_EQ(hget("app2:{x}", "token"), first_line(b.out));
  EXPECT_FALSE(exists(key("x")));
  // One prefix's token means nothing under another.
  EXPECT_EQ(rl({"release", "x", "--prefix", "app2:", "--token", first_line(a.out)}).status, 1);
  // $REDLOCK_PREFIX is the default prefix.
  EXPECT_EQ(rl({"acquire", "x"}, {{"REDLOCK_PREFIX", "app1:"}}).status, 75);
  EXPECT_EQ(rl({"acquire", "x"}).status, 0);
  Result s = rl({"status", "--json", "--prefix", "app1:"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "x");
}

TEST_F(Prefix, WithGlobCharactersListsOnlyItsOwnLocks) {
  take("mine", {"--prefix", "a*:"});
  take("theirs", {"--prefix", "ab:"});
  Result s = rl({"status", "--json", "--prefix", "a*:"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out);
  ASSERT_EQ(j.size(), 1u) << s.out;
  EXPECT_EQ(j[0]["name"], "mine");
}

TEST_F(GlobalOptions, AreAcceptedAfterTheSubcommand) {
  // $REDLOCK_URL points nowhere: only --redis, wherever it stands, can work.
  Env nowhere{{"REDLOCK_URL", "redis://127.0.0.1:" + std::to_string(free_port())}};
  Result a = run({"acquire", "g", "--redis", redis.url(), "--timeout", "2s"}, nowhere);
  ASSERT_EQ(a.status, 0) << a.err;
  Result s = run({"status", "g", "--json", "-r", redis.url()}, nowhere);
  EXPECT_EQ(s.status, 0) << s.err;
  Result renew = run({"renew", "g", "--token", first_line(a.out), "--redis", redis.url()}, nowhere);
  EXPECT_EQ(renew.status, 0) << renew.err;
  Result r = run({"release", "--redis", redis.url(), "g", "--token", first_line(a.out)}, nowhere);
  EXPECT_EQ(r.status, 0) << r.err;
  Result before = run({"--redis", redis.url(), "acquire", "g2", "--prefix", "p:"}, nowhere);
  EXPECT_EQ(before.status, 0) << before.err;
  EXPECT_TRUE(exists("p:{g2}"));
  Result quiet = run({"acquire", "g2", "--prefix", "p:", "-q", "--redis", redis.url()}, nowhere);
  EXPECT_EQ(quiet.status, 75);
  EXPECT_EQ(quiet.err, "");
}

TEST_F(GlobalOptions, RedisOptionOverridesTheEnvironment) {
  Env nowhere{{"REDLOCK_URL", "redis://127.0.0.1:" + std::to_string(free_port())}};
  EXPECT_EQ(run({"acquire", "o"}, nowhere).status, 69);
  EXPECT_EQ(run({"acquire", "o", "--redis", redis.url()}, nowhere).status, 0);
}

TEST_F(GlobalOptions, SelectsTheDatabaseInTheUrl) {
  Result a = run({"acquire", "d", "--redis", redis.url() + "/3"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_FALSE(exists(key("d")));  // not in database 0
  std::string keyspace = redis.cmd({"INFO", "keyspace"}).str;
  EXPECT_NE(keyspace.find("db3:keys=2"), std::string::npos) << keyspace;  // the lock and its fence
  EXPECT_EQ(run({"status", "d", "--redis", redis.url() + "/3"}).status, 0);
  EXPECT_EQ(run({"status", "d", "--redis", redis.url()}).status, 1);
}

TEST_F(UnixSocket, EverySubcommandWorksOverASocket) {
  ASSERT_EQ(redis.url().rfind("unix://", 0), 0u) << redis.url();
  std::string t = take("sock", {"--ttl", "10s"});
  EXPECT_EQ(hget(key("sock"), "token"), t);
  EXPECT_EQ(rl({"acquire", "sock"}).status, 75);
  EXPECT_EQ(rl({"renew", "sock", "--token", t}).status, 0);
  Result s = rl({"status", "sock", "--json"});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out)[0]["held"], true);
  EXPECT_EQ(rl({"release", "sock", "--token", t}).status, 0);
  EXPECT_FALSE(exists(key("sock")));
}

TEST_F(UnixSocket, SelectsTheDatabaseInTheQuery) {
  Result a = run({"acquire", "sdb", "--redis", redis.url() + "?db=2"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_FALSE(exists(key("sdb")));
  std::string keyspace = redis.cmd({"INFO", "keyspace"}).str;
  EXPECT_NE(keyspace.find("db2:keys=2"), std::string::npos) << keyspace;
}

TEST(StatusRedaction, NeverShowsAPasswordFromTheHoldersCommandLine) {
  RedisServer redis;
  // The recorded command is acquire's parent: this shell, whose command line
  // carries a URL with a password.
  Child shell(
      {"-c", "\"$0\" acquire --redis \"$1\" pw && : redis://admin:hunter2@db.example/0", redlock_binary(), redis.url()},
      {}, std::string("sh"));
  ASSERT_EQ(shell.wait().status, 0);
  Result table = run({"status", "--redis", redis.url(), "pw"});
  Result as_json = run({"status", "--json", "--redis", redis.url(), "pw"});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.find("hunter2"), std::string::npos) << table.out;
  EXPECT_EQ(as_json.out.find("hunter2"), std::string::npos) << as_json.out;
  EXPECT_NE(table.out.find("admin:***@db.example"), std::string::npos) << table.out;
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
