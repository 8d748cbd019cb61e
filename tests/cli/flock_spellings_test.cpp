// flock(1)'s spellings on acquire and exec (-w/--timeout, -n, -E, -s, -x),
// the round-trip timeout's new name (--redis-timeout, its variable and
// configuration key), and the hints for what a flock user types that
// means nothing here.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// A lock held by someone else for the rest of the test.
void hold(const RedisServer& redis, const std::string& name) {
  Result r = run({"acquire", "--ttl", "60s", name}, {{"REDLOCK_URL", redis.url()}});
  ASSERT_EQ(r.status, 0) << r.err;
}

const Env k_nowhere{{"REDLOCK_URL", "redis://127.0.0.1:1"}};

}  // namespace

TEST(FlockSpellings, DashWAndTimeoutWaitAsFlocksDo) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  hold(redis, "w");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"acquire", "-w", "0.6", "w"},
                                               {"acquire", "--timeout", "600ms", "w"},
                                               {"--timeout", "600ms", "acquire", "w"},
                                               {"exec", "-w", "0.6", "w", "--", "true"},
                                               {"exec", "--timeout=600ms", "w", "--", "true"},
                                               {"--timeout", "0.6", "exec", "w", "--", "true"}}) {
    Result r = run(args, env);
    EXPECT_EQ(r.status, 75) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_GE(r.seconds, 0.5) << args[0] << " " << args[1] << ": it did not wait";
    EXPECT_LT(r.seconds, 5.0) << args[0] << " " << args[1];
  }
}

TEST(FlockSpellings, DashNIsOneTryEvenAfterAWait) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  hold(redis, "n");
  for (const std::string word : {"-n", "--nonblock"}) {
    Result r = run({"exec", "-w", "10s", word, "n", "--", "true"}, env);
    EXPECT_EQ(r.status, 75) << word << ": " << r.err;
    EXPECT_LT(r.seconds, 3.0) << word << " waited";
  }
  Result free = run({"acquire", "-n", "other"}, env);
  EXPECT_EQ(free.status, 0) << free.err;
}

TEST(FlockSpellings, DashEIsTheConflictExitCode) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  hold(redis, "e");
  EXPECT_EQ(run({"acquire", "-E", "3", "e"}, env).status, 3);
  Result skipped = run({"exec", "-E", "0", "e", "--", "true"}, env);
  EXPECT_EQ(skipped.status, 0);
  // Busy is no failure here: the line says who holds it, not to try later.
  EXPECT_NE(skipped.err.find("e is held"), std::string::npos) << skipped.err;
  EXPECT_EQ(skipped.err.find("try later"), std::string::npos) << skipped.err;
  Result busy = run({"exec", "e", "--", "true"}, env);
  EXPECT_NE(busy.err.find("try later or use --wait"), std::string::npos) << busy.err;
}

TEST(FlockSpellings, DashSSharesAndDashXIsTheDefault) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "-s", "rw"}, env);
  Result b = run({"acquire", "-s", "rw"}, env);
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(run({"acquire", "-x", "rw"}, env).status, 75);
  EXPECT_EQ(run({"exec", "-x", "alone", "--", "true"}, env).status, 0);
  Result s = run({"exec", "-s", "rw", "--", "true"}, env);
  EXPECT_EQ(s.status, 0) << s.err;
}

TEST(FlockSpellings, ExclusiveWithSharedOrLimitIs64BeforeAnyTraffic) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"acquire", "-x", "-s", "k"}, {"exec", "-x", "--limit", "2", "k", "--", "true"}}) {
    Result r = run(args, k_nowhere);
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_NE(r.err.find("-x (--exclusive)"), std::string::npos) << r.err;
  }
}

TEST(FlockSpellings, OldGlobalTimeoutElsewhereNamesRedisTimeout) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--timeout", "5s", "status"},
                                               {"status", "--timeout", "5s"},
                                               {"release", "--token", "t", "k", "--timeout", "1s"},
                                               {"--timeout=1s", "break", "k"}}) {
    Result r = run(args, k_nowhere);
    EXPECT_EQ(r.status, 64) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("--timeout is now --redis-timeout"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(FlockSpellings, RedisTimeoutIsTheRoundTripTimeout) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  EXPECT_EQ(run({"--redis-timeout", "300ms", "status"}, env).status, 0);
  EXPECT_EQ(run({"status", "--redis-timeout", "300ms"}, env).status, 0);
  Result bad = run({"status", "--redis-timeout", "0"}, k_nowhere);
  EXPECT_EQ(bad.status, 64) << bad.err;
  EXPECT_NE(bad.err.find("--redis-timeout"), std::string::npos) << bad.err;
  Result variable = run({"status"}, {{"REDLOCK_URL", redis.url()}, {"REDLOCK_REDIS_TIMEOUT", "nonsense"}});
  EXPECT_EQ(variable.status, 64) << variable.err;
  EXPECT_NE(variable.err.find("REDLOCK_REDIS_TIMEOUT"), std::string::npos) << variable.err;
  // A server that never answers costs one --redis-timeout.
  redis.pause();
  Result slow = run({"--redis-timeout", "400ms", "status", "k"}, env);
  redis.resume();
  EXPECT_EQ(slow.status, 69) << slow.err;
  EXPECT_LT(slow.seconds, 3.0);
}

TEST(FlockSpellings, TheOldConfigurationKeyStillWorksAndNamesTheNewOne) {
  RedisServer redis;
  TempDir dir;
  const std::string old_file = dir.path() + "/old.conf";
  const std::string new_file = dir.path() + "/new.conf";
  std::ofstream(old_file) << "redis = " << redis.url() << "\ntimeout = 2s\n";
  std::ofstream(new_file) << "redis = " << redis.url() << "\nredis-timeout = 2s\n";
  Result old_key = run({"status"}, {{"REDLOCK_CONFIG", old_file}});
  EXPECT_EQ(old_key.status, 0) << old_key.err;
  EXPECT_NE(old_key.err.find(old_file + ":2: timeout is now called redis-timeout"), std::string::npos) << old_key.err;
  Result new_key = run({"status"}, {{"REDLOCK_CONFIG", new_file}});
  EXPECT_EQ(new_key.status, 0) << new_key.err;
  EXPECT_EQ(new_key.err.find("timeout is now"), std::string::npos) << new_key.err;
}

TEST(FlockSpellings, FlockWordsThatMeanNothingHereGetAHint) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"exec", "-e", "k", "--", "true"}, "did you mean -x (--exclusive)?"},
      {{"acquire", "--nb", "k"}, "did you mean -n (--nonblock)?"},
      {{"exec", "-u", "k", "--", "true"}, "redlock release --token T NAME"},
      {{"acquire", "--unlock", "k"}, "redlock release --token T NAME"},
      {{"exec", "-o", "k", "--", "true"}, "CMD never inherits the lock"},
      {{"exec", "--no-fork", "k", "--", "true"}, "always forks"},
      {{"acquire", "-c", "true", "k"}, "redlock exec -c STRING NAME"},
  };
  for (const auto& [args, hint] : cases) {
    Result r = run(args, k_nowhere);
    EXPECT_EQ(r.status, 64) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(hint), std::string::npos) << args[1] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(FlockSpellings, SubcommandHelpIsItsOwnAndShort) {
  Result exec = run({"exec", "--help"});
  EXPECT_EQ(exec.status, 0);
  EXPECT_LE(std::count(exec.out.begin(), exec.out.end(), '\n'), 45) << exec.out;
  EXPECT_NE(exec.out.find("see redlock --help"), std::string::npos) << exec.out;
  EXPECT_EQ(exec.out.find("--tls-ca"), std::string::npos) << "global options repeated:\n" << exec.out;
  EXPECT_NE(exec.out.find("exec redlock exec --ttl 30s NAME -- \"$0\" \"$@\""), std::string::npos) << exec.out;
  Result resume = run({"resume", "--help"});
  EXPECT_EQ(resume.out.find("--redis"), std::string::npos) << resume.out;
  Result top = run({"--help"});
  const size_t run_group = top.out.find("Run a command under a lock:");
  ASSERT_NE(run_group, std::string::npos) << top.out;
  EXPECT_LT(run_group, top.out.find("Script by hand:"));
  EXPECT_LT(top.out.find("Script by hand:"), top.out.find("Look at locks and runs:"));
  EXPECT_LT(top.out.find("Look at locks and runs:"), top.out.find("Operate on anyone's lock:"));
  EXPECT_LT(top.out.find("Operate on anyone's lock:"), top.out.find("Check the deployment:"));
  for (const std::string& line : std::vector<std::string>{exec.out, top.out}) {
    size_t from = 0;
    for (size_t nl = line.find('\n'); nl != std::string::npos; from = nl + 1, nl = line.find('\n', from)) {
      EXPECT_LE(nl - from, 80u) << line.substr(from, nl - from);
    }
  }
}
