// A managed Redis: the commands that cloud services refuse (CONFIG, DEBUG,
// MONITOR, SAVE, WAIT; and SCRIPT, ROLE, CLUSTER, INFO one at a time),
// refused by rename-command in the server's configuration and by an ACL
// user. Every subcommand keeps its documented exit status and says what was
// refused; doctor reads what it can from INFO; --min-replicas fails with a
// line that names WAIT, and nothing stays held. The servers before Redis
// 6.0 have no ACL users: a user name gets a clear line, not a protocol error.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "fake_redis.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

// major*100+minor of the server's redis_version (Valkey answers with the
// Redis version it is compatible with).
int version_of(const RedisServer& redis) {
  const std::string info = redis.cmd({"INFO", "server"}).str;
  const size_t at = info.find("redis_version:");
  if (at == std::string::npos) {
    return 0;
  }
  const std::string v = info.substr(at + 14, info.find('\r', at) - at - 14);
  const size_t dot = v.find('.');
  return std::stoi(v.substr(0, dot)) * 100 + std::stoi(v.substr(dot + 1));
}

// A server with `commands` renamed away (rename-command NAME "").
RedisServer::Options renamed(const std::vector<std::string>& commands) {
  RedisServer::Options o;
  for (const auto& c : commands) {
    o.extra.insert(o.extra.end(), {"--rename-command", c, ""});
  }
  return o;
}

// The environment of user `user` that may run everything but `commands`,
// made on `redis` (nullopt where the server has no ACL).
std::optional<Env> acl_user(const RedisServer& redis, const std::string& user,
                            const std::vector<std::string>& commands) {
  if (version_of(redis) < 600) {
    return std::nullopt;
  }
  std::vector<std::string> argv = {"ACL", "SETUSER", user, "on", ">managed-pw", "~*", "+@all"};
  for (const auto& c : commands) {
    argv.push_back("-" + c);
  }
  if (version_of(redis) >= 602) {
    argv.push_back("allchannels");
  }
  EXPECT_EQ(redis.cmd(argv).str, "OK");
  return Env{{"REDLOCK_URL", "redis://" + user + ":@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "managed-pw"}};
}

struct Expected {
  std::vector<std::string> args;
  int status;
};

// Every subcommand once, on names of their own, with its documented status
// (revoke, which waits a second for a holder that does not listen, only
// `with_revoke`).
void expect_every_subcommand(const Env& env, const std::string& what, bool with_revoke = true) {
  SCOPED_TRACE(what);
  Result token = run({"acquire", "--ttl", "1m", "held"}, env);
  ASSERT_EQ(token.status, 0) << token.err;
  const std::string t = token.out.substr(0, token.out.find('\n'));
  std::vector<Expected> rows = {
      {{"status"}, 0},
      {{"status", "held", "--json"}, 0},
      {{"status", "free"}, 1},
      {{"status", "--format", "prometheus"}, 0},
      {{"renew", "--token", t, "--ttl", "1m", "held"}, 0},
      {{"acquire", "held"}, 75},
      {{"history", "ran"}, 1},
      {{"exec", "ran", "--", "true"}, 0},
      {{"exec", "ran", "--", "sh", "-c", "exit 3"}, 3},
      {{"history", "ran"}, 0},
      {{"overdue", "ran", "--max-age", "1h"}, 0},
      {{"suspend", "paused", "--for", "1m"}, 0},
      {{"acquire", "paused"}, 75},
      {{"resume", "paused"}, 0},
      {{"break", "paused"}, 1},
      {{"doctor"}, 0},
  };
  if (with_revoke) {
    rows.push_back({{"revoke", "held", "--grace", "100ms"}, 0});  // no exec listens: broken after the grace
    rows.push_back({{"revoke", "held"}, 1});
  } else {
    rows.push_back({{"break", "held"}, 0});
  }
  rows.push_back({{"release", "--token", t, "held"}, 1});
  for (const auto& row : rows) {
    Result r = run(row.args, env);
    std::string line;
    for (const auto& a : row.args) {
      line += a + " ";
    }
    EXPECT_EQ(r.status, row.status) << line << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.find("managed-pw"), std::string::npos) << r.err;
  }
}

// --min-replicas where WAIT is refused: `status`, a line that names WAIT,
// and nothing held.
void expect_wait_named(const RedisServer& redis, const Env& env, int status) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"acquire", "--min-replicas", "1", "repl"}, {"exec", "--min-replicas", "1", "repl", "--", "true"}}) {
    Result r = run(args, env);
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_NE(r.err.find("refused WAIT"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(key_exists(redis, lock_key("repl"))) << "the unconfirmed lock was released";
  }
}

const std::vector<std::string> k_admin = {"CONFIG", "DEBUG", "MONITOR", "SAVE", "WAIT"};

}  // namespace

TEST(Managed, WithAdminCommandsRenamedAwayEverySubcommandKeepsItsStatus) {
  RedisServer redis(renamed(k_admin));
  const Env env{{"REDLOCK_URL", redis.url()}};
  expect_every_subcommand(env, "rename-command");
  expect_wait_named(redis, env, 76);
}

TEST(Managed, WithAdminCommandsOutOfTheAclEverySubcommandKeepsItsStatus) {
  RedisServer redis;
  const auto env = acl_user(redis, "managed", k_admin);
  if (!env) {
    GTEST_SKIP() << "no ACL before Redis 6.0";
  }
  expect_every_subcommand(*env, "ACL");
  expect_wait_named(redis, *env, 77);
}

TEST(Managed, DoctorReadsFromInfoWhatConfigDoesNotSay) {
  RedisServer redis(renamed({"CONFIG"}));
  Result r = run({"doctor"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("maxmemory-policy noeviction"), std::string::npos) << "from INFO memory\n" << r.out;
  EXPECT_NE(r.out.find("appendonly no (INFO)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown (refused: CONFIG GET answered"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("console"), std::string::npos) << r.out;
}

// SCRIPT, ROLE, CLUSTER and INFO, each refused alone: none is needed to
// take, read or free a lock.
TEST(Managed, EachOfScriptRoleClusterAndInfoRefusedAloneChangesNoStatus) {
  for (const std::string command : {"SCRIPT", "ROLE", "CLUSTER", "INFO"}) {
    {
      RedisServer redis(renamed({command}));
      expect_every_subcommand({{"REDLOCK_URL", redis.url()}}, "rename-command " + command, false);
    }
    RedisServer redis;
    if (const auto env = acl_user(redis, "managed", {command})) {
      expect_every_subcommand(*env, "ACL -" + command, false);
    }
  }
}

// Before Redis 6.0, AUTH takes the password alone and answers a user name
// with "wrong number of arguments": that is the URL's user name, refused
// (77) in words that say so, not a protocol error (76).
TEST(Managed, AUserNameOnAServerWithoutAclUsersIsRefusedInWords) {
  FakeRedis old("-ERR wrong number of arguments for 'auth' command\r\n");
  Result r = run({"acquire", "job"}, {{"REDLOCK_URL", "redis://locker:@127.0.0.1:" + std::to_string(old.port())},
                                      {"REDLOCK_PASSWORD", "managed-pw"}});
  EXPECT_EQ(r.status, 77) << r.err;
  EXPECT_NE(r.err.find("takes no user name ('locker')"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("redis://:PASSWORD@"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("managed-pw"), std::string::npos) << r.err;

  RedisServer redis(RedisServer::Options{.requirepass = "managed-pw"});
  if (version_of(redis) >= 600) {
    return;  // the real thing only where the server is that old
  }
  const std::string at = redis.url().substr(8);
  Result real = run({"acquire", "job"}, {{"REDLOCK_URL", "redis://locker:@" + at}, {"REDLOCK_PASSWORD", "managed-pw"}});
  EXPECT_EQ(real.status, 77) << real.err;
  EXPECT_NE(real.err.find("takes no user name"), std::string::npos) << real.err;
  Result plain = run({"acquire", "job"}, {{"REDLOCK_URL", "redis://:@" + at}, {"REDLOCK_PASSWORD", "managed-pw"}});
  EXPECT_EQ(plain.status, 0) << plain.err;
}
