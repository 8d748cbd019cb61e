#pragma once

// Shared by the lock-core tests (acquire_test, wait_test, status_test,
// connection_test, foreign_key_test): one real redis-server per test, the
// built binary driven as a process, and small readers for its output and
// the keys it leaves in Redis.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "blackhole.hpp"
#include "harness.hpp"
#include "lock/keys.hpp"
#include "lock/scripts.hpp"

namespace redlock::test {

inline std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

inline std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

inline std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) {
    out.push_back(w);
  }
  return out;
}

// Exactly one non-empty line, as README.md ("Exit status") promises for
// every failure.
inline ::testing::AssertionResult one_line(const std::string& err) {
  if (err.empty() || err.back() != '\n' || std::count(err.begin(), err.end(), '\n') != 1 || err == "\n") {
    return ::testing::AssertionFailure() << "expected one line on stderr, got: '" << err << "'";
  }
  return ::testing::AssertionSuccess();
}

// Waiters registered in NAME's line, dead or alive.
inline long long in_line(const RedisServer& redis, const std::string& name) {
  return redis.cmd({"ZCARD", lock_key(name) + ":line"}).integer;
}

// Whether none of the line's keys is left.
inline bool line_gone(const RedisServer& redis, const std::string& name) {
  const std::string k = lock_key(name);
  return redis.cmd({"EXISTS", k + ":line", k + ":beats", k + ":waiters", k + ":writers"}).integer == 0;
}

// Starts a waiter and returns once it has its place in line.
inline std::unique_ptr<Child> queue_up(const RedisServer& redis, const std::string& name,
                                       const std::vector<std::string>& args, const Env& env) {
  const long long before = in_line(redis, name);
  auto c = std::make_unique<Child>(args, env);
  EXPECT_TRUE(eventually([&] { return in_line(redis, name) > before || !c->alive(); }, Seconds(10)))
      << "the waiter never joined the line";
  EXPECT_TRUE(c->alive()) << c->err_so_far();
  return c;
}

inline std::string this_host() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

inline bool is_hex(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// What a client sends itself (INFO commandstats also counts what scripts
// call inside): the commands status may send.
inline long long client_commands(const RedisServer& redis) {
  long long n = 0;
  for (const char* c : {"evalsha", "eval", "zscan", "scan", "cluster|nodes", "config|get", "ping", "select", "auth",
                        "hello", "dbsize", "keys"}) {
    n += redis.calls(c);
  }
  return n;
}

// Takes `count` locks named lock-0, lock-1... with the acquire script, as
// redlock would (the index included), pipelined on one connection.
inline void hold_locks(const RedisServer& redis, int count, const std::string& prefix = "redlock:") {
  const auto& acquire = redlock::lock::script(redlock::lock::ScriptName::k_acquire);
  ASSERT_EQ(redis.cmd({"SCRIPT", "LOAD", std::string(acquire.body)}).str, acquire.sha1);
  redisContext* c = redisConnect("127.0.0.1", redis.port());
  ASSERT_TRUE(c != nullptr && c->err == 0);
  for (int i = 0; i < count; ++i) {
    redlock::lock::AcquireArgs a;
    a.token = "t" + std::to_string(i);
    a.ttl = std::chrono::milliseconds(120'000);
    a.host = "web-" + std::to_string(i % 40);
    a.pid = 1000 + i;
    a.cmd = "./deploy.sh --env production";
    std::vector<std::string> argv{"EVALSHA", std::string(acquire.sha1)};
    const auto args = redlock::lock::to_args(redlock::lock::keys_for(prefix, "lock-" + std::to_string(i)), a);
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& s : argv) {
      ptrs.push_back(s.data());
      lens.push_back(s.size());
    }
    ASSERT_EQ(redisAppendCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data()), REDIS_OK);
  }
  for (int i = 0; i < count; ++i) {
    void* r = nullptr;
    ASSERT_EQ(redisGetReply(c, &r), REDIS_OK);
    const auto* reply = static_cast<redisReply*>(r);
    EXPECT_TRUE(reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
                std::string(reply->element[0]->str, reply->element[0]->len) == "acquired");
    freeReplyObject(r);
  }
  redisFree(c);
}

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

  static std::string key(const std::string& name) { return lock_key(name); }

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
  bool exists(const std::string& k) { return key_exists(redis, k); }
  // Waits until a waiter for `name` has subscribed and had time to settle
  // into its sleep.
  void await_waiter(const std::string& name, Child& waiter) {
    ASSERT_TRUE(eventually([&] { return waiters(redis, name) >= 1 || !waiter.alive(); }))
        << "the waiter never subscribed";
    ASSERT_TRUE(waiter.alive()) << waiter.wait().err;
    sleep_for(0.2);
    ASSERT_TRUE(waiter.alive()) << waiter.wait().err;
  }

  RedisServer redis;
};

}  // namespace redlock::test
