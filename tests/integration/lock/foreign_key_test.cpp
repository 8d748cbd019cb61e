// Keys redlock did not write: every subcommand exits 76 and leaves them
// alone (redlock-safety(7), KEYS; redlock(1), EXIT STATUS).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

class ForeignKey : public WithRedis, public ::testing::WithParamInterface<const char*> {};

}  // namespace

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
  } else if (kind == "another-redlock-layout") {
    // A redlock of another version, mid-upgrade of a fleet.
    redis.cmd({"HSET", k, "token", "t0k3n", "count", "1", "fence", "1", "schema", "redlock/99"});
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
    if (kind == "another-redlock-layout") {
      // Not "remove it": another version's lock is someone's, held.
      EXPECT_NE(r.err.find("another redlock version (layout redlock/99"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("run one redlock version on every host"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(redis.cmd({"DUMP", k}).str, dump);
  EXPECT_EQ(pttl(k), -1);
  EXPECT_FALSE(exists(k + ":fence"));
}

INSTANTIATE_TEST_SUITE_P(Kinds, ForeignKey,
                         ::testing::Values("list", "string", "set", "hash", "hash-with-token-only", "hash-with-mode",
                                           "hash-with-plain-fields", "another-redlock-layout"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });
