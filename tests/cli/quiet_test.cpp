// -q is flock -n's quiet: a busy lock (75, or --conflict-exit-code) and the
// waiting chatter are not news, but every other failure still gets its one
// line on stderr, because that is what cron mails. -qq and --silent print
// nothing at all. Each exit status is checked with the real binary.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace redlock::test;

namespace {

const std::string k_key = "redlock:{x}";

bool one_line(const std::string& err) {
  return std::count(err.begin(), err.end(), '\n') == 1 && err.back() == '\n' && err.rfind("redlock: ", 0) == 0;
}

// The same invocation with -q (one line expected unless `busy`), -qq and
// --silent (nothing expected), each exiting `status`.
void expect_quiet_levels(const std::vector<std::string>& args, const Env& env, int status, bool busy) {
  std::vector<std::string> q{"-q"}, qq{"-qq"}, silent{"--silent"};
  q.insert(q.end(), args.begin(), args.end());
  qq.insert(qq.end(), args.begin(), args.end());
  silent.insert(silent.end(), args.begin(), args.end());

  Result a = run(q, env, Seconds(20));
  EXPECT_EQ(a.status, status) << a.err;
  if (busy) {
    EXPECT_EQ(a.err, "");
  } else {
    EXPECT_TRUE(one_line(a.err)) << "-q: '" << a.err << "'";
  }
  Result b = run(qq, env, Seconds(20));
  EXPECT_EQ(b.status, status) << b.err;
  EXPECT_EQ(b.err, "");
  Result c = run(silent, env, Seconds(20));
  EXPECT_EQ(c.status, status) << c.err;
  EXPECT_EQ(c.err, "");
}

}  // namespace

TEST(Quiet, UsageErrorsStillGetTheirLine) {
  const Env env{{"REDLOCK_URL", "redis://127.0.0.1:1"}};
  SCOPED_TRACE("bad duration");
  expect_quiet_levels({"acquire", "x", "--ttl", "abc"}, env, 64, false);
  SCOPED_TRACE("parse error");
  expect_quiet_levels({"acquire", "--bogus", "x"}, env, 64, false);
  SCOPED_TRACE("unknown subcommand");
  expect_quiet_levels({"frobnicate"}, env, 64, false);
}

TEST(Quiet, QuietAfterTheSubcommandAlsoCounts) {
  Result r = run({"acquire", "--quiet", "--quiet", "--ttl"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64);
  EXPECT_EQ(r.err, "");
  Result once = run({"acquire", "--quiet", "--ttl"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(once.status, 64);
  EXPECT_TRUE(one_line(once.err)) << once.err;
}

TEST(Quiet, AnUnreachableRedisStillGetsItsLine) {
  const Env env{{"REDLOCK_URL", "redis://127.0.0.1:" + std::to_string(free_port())}};
  expect_quiet_levels({"acquire", "x"}, env, 69, false);
  expect_quiet_levels({"exec", "x", "--", "true"}, env, 69, false);
}

TEST(Quiet, BusyIsSilentWithOneQ) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "1m", "x"}, env).status, 0);
  expect_quiet_levels({"acquire", "x"}, env, 75, true);
  expect_quiet_levels({"exec", "x", "--", "true"}, env, 75, true);
  expect_quiet_levels({"exec", "--conflict-exit-code", "3", "x", "--", "true"}, env, 3, true);
  expect_quiet_levels({"acquire", "--wait", "300ms", "x"}, env, 75, true);
  // Without -q, busy is one line.
  Result loud = run({"acquire", "x"}, env);
  EXPECT_EQ(loud.status, 75);
  EXPECT_TRUE(one_line(loud.err)) << loud.err;
}

TEST(Quiet, ANotHeldTokenStillGetsItsLine) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  expect_quiet_levels({"release", "--token", "abc", "x"}, env, 1, false);
}

TEST(Quiet, ForeignKeysStillGetTheirLine) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  redis.cmd({"SET", "redlock:{x}", "not a lock"});
  expect_quiet_levels({"acquire", "x"}, env, 76, false);
}

TEST(Quiet, ARefusedPasswordStillGetsItsLine) {
  RedisServer::Options o;
  o.requirepass = "s3cret";
  RedisServer redis(o);
  const Env env{{"REDLOCK_URL", redis.url()}};
  expect_quiet_levels({"acquire", "x"}, env, 77, false);
  expect_quiet_levels({"exec", "x", "--", "true"}, env, 77, false);
}

TEST(Quiet, ACommandNotFoundStillGetsItsLine) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  expect_quiet_levels({"exec", "x", "--", "/no/such/command"}, env, 127, false);
  EXPECT_FALSE(key_exists(redis, k_key));
}

TEST(Quiet, ALostLockStillGetsItsLine) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  for (const char* level : {"-q", "-qq"}) {
    SCOPED_TRACE(level);
    Child c({level, "exec", "--ttl", "600ms", "x", "--", "sleep", "20"}, env);
    ASSERT_TRUE(eventually([&] { return key_exists(redis, k_key); }));
    redis.cmd({"DEL", k_key});
    Result r = c.wait(Seconds(20));
    EXPECT_EQ(r.status, 74) << r.err;
    if (std::string(level) == "-q") {
      EXPECT_NE(r.err.find("lost the lock"), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(r.err, "");
    }
  }
}
