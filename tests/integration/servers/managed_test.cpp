// A managed Redis: the commands that cloud services refuse (CONFIG, DEBUG,
// MONITOR, SAVE, WAIT; and SCRIPT, ROLE, CLUSTER, INFO one at a time),
// refused by rename-command in the server's configuration and by an ACL
// user. Every subcommand keeps its documented exit status and says what was
// refused; doctor reads what it can from INFO; --min-replicas fails with a
// line that names WAIT, and nothing stays held. The servers before Redis
// 6.0 have no ACL users: a user name gets a clear line, not a protocol error.

#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>
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
    EXPECT_NE(r.err.find("refused WAIT, which --min-replicas 1 needs to confirm the lock"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("drop --min-replicas"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(key_exists(redis, lock_key("repl"))) << "the unconfirmed lock was released";
  }
}

const std::vector<std::string> k_admin = {"CONFIG", "DEBUG", "MONITOR", "SAVE", "WAIT"};

// The line of doctor's report about `check` ("" when there is none).
std::string doctor_line(const std::string& report, const std::string& check) {
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string level;
    std::string name;
    words >> level >> name;
    if (name == check) {
      return line;
    }
  }
  return "";
}

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

// The same under a user whose ACL leaves CONFIG out (as ElastiCache's,
// Azure's and Aiven's do): what INFO carries is read there, what it does not
// (the snapshot schedule, and maxclients before 6.2) is "unknown (refused:"
// with CONFIG's answer and the console to check. Warnings, not failures:
// doctor exits 0.
TEST(Managed, DoctorUnderAUserWithoutConfigReadsInfo) {
  RedisServer redis;
  const auto env = acl_user(redis, "managed", {"CONFIG"});
  if (!env) {
    GTEST_SKIP() << "no ACL before Redis 6.0";
  }
  Result r = run({"doctor"}, *env);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(doctor_line(r.out, "eviction").find("maxmemory-policy noeviction"), std::string::npos)
      << "from INFO memory\n"
      << r.out;
  const std::string persistence = doctor_line(r.out, "persistence");
  EXPECT_NE(persistence.find("appendonly no (INFO)"), std::string::npos) << r.out;
  EXPECT_NE(persistence.find("save unknown (refused: CONFIG GET answered: NOPERM"), std::string::npos) << r.out;
  EXPECT_NE(persistence.find("check the snapshot schedule in the service's console"), std::string::npos) << r.out;
  const std::string clients = doctor_line(r.out, "clients");
  if (version_of(redis) >= 602) {
    EXPECT_NE(clients.find("of maxclients"), std::string::npos) << "from INFO clients\n" << r.out;
  } else {
    EXPECT_NE(clients.find("maxclients: unknown (refused: CONFIG GET answered: NOPERM"), std::string::npos) << r.out;
    EXPECT_NE(clients.find("in its console"), std::string::npos) << r.out;
  }
  EXPECT_EQ(r.out.find("managed-pw"), std::string::npos);
}

// INFO renamed away: the version, the replication role and the clients
// connected, which only INFO says, are unknown because INFO was refused,
// each with what to check in the console; CONFIG still says the rest. With
// CONFIG renamed away too, eviction and persistence are unknown, naming both
// refusals. Warnings only, no crash: doctor exits 0.
TEST(Managed, DoctorWithInfoRefusedSaysWhatItCouldNotRead) {
  {
    RedisServer redis(renamed({"INFO"}));
    Result r = run({"doctor"}, {{"REDLOCK_URL", redis.url()}});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    const std::string version = doctor_line(r.out, "version");
    EXPECT_NE(version.find("could not read the Redis version: unknown (refused: INFO answered: ERR unknown command"),
              std::string::npos)
        << r.out;
    EXPECT_NE(version.find("check the version in its console"), std::string::npos) << r.out;
    const std::string replicas = doctor_line(r.out, "replicas");
    EXPECT_NE(replicas.find("the replication role: unknown (refused: INFO answered"), std::string::npos) << r.out;
    EXPECT_NE(replicas.find("check in its console that this is the master"), std::string::npos) << r.out;
    EXPECT_NE(doctor_line(r.out, "clients").find("unknown (refused: INFO answered"), std::string::npos) << r.out;
    EXPECT_EQ(doctor_line(r.out, "persistence").find("unknown"), std::string::npos) << "CONFIG says it\n" << r.out;
  }
  RedisServer redis(renamed({"INFO", "CONFIG"}));
  Result r = run({"doctor"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  for (const char* check : {"eviction", "persistence"}) {
    const std::string line = doctor_line(r.out, check);
    EXPECT_NE(line.find("unknown (refused: CONFIG GET answered: ERR unknown command"), std::string::npos) << r.out;
    EXPECT_NE(line.find("; INFO answered: ERR unknown command"), std::string::npos) << r.out;
    EXPECT_NE(line.find("CONFIG and INFO may be renamed or refused on managed Redis"), std::string::npos) << r.out;
    EXPECT_NE(line.find("in its console"), std::string::npos) << r.out;
  }
}

// What was refused, named in the line: where scripts are refused (EVAL and
// EVALSHA renamed away, or left out of the user's ACL) status and acquire
// fail with the server's words, which name the command: 76 for an unknown
// command, 77 for an ACL. SCRIPT refused alone is not needed (EVALSHA, then
// EVAL on NOSCRIPT) and nothing is said of it.
TEST(Managed, ARefusedScriptCommandIsNamed) {
  {
    RedisServer redis(renamed({"SCRIPT"}));
    const Env env{{"REDLOCK_URL", redis.url()}};
    ASSERT_EQ(run({"acquire", "--ttl", "1m", "held"}, env).status, 0);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"status"}, {"status", "held"}}) {
      Result r = run(args, env);
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.err, "") << "SCRIPT is not needed: nothing to say of it";
    }
  }
  {
    RedisServer redis(renamed({"EVAL", "EVALSHA"}));
    const Env env{{"REDLOCK_URL", redis.url()}};
    Result st = run({"status", "held"}, env);
    EXPECT_EQ(st.status, 76) << st.err;
    EXPECT_NE(st.err.find("answered inspect: ERR unknown command"), std::string::npos) << st.err;
    EXPECT_NE(st.err.find("EVAL"), std::string::npos) << st.err;
    Result ex = run({"exec", "job", "--", "true"}, env);
    EXPECT_EQ(ex.status, 76) << ex.err;
    EXPECT_NE(ex.err.find("answered acquire: ERR unknown command"), std::string::npos) << ex.err;
    EXPECT_NE(ex.err.find("EVALSHA"), std::string::npos) << ex.err;
    EXPECT_EQ(ex.out, "") << "the command did not run";
  }
  RedisServer redis;
  ASSERT_EQ(run({"acquire", "--ttl", "1m", "held"}, {{"REDLOCK_URL", redis.url()}}).status, 0);
  const auto env = acl_user(redis, "managed", {"EVAL", "EVALSHA"});
  if (!env) {
    return;  // no ACL before Redis 6.0
  }
  Result st = run({"status"}, *env);
  EXPECT_EQ(st.status, 77) << st.err;
  EXPECT_NE(st.err.find("NOPERM"), std::string::npos) << st.err;
  EXPECT_NE(st.err.find("'eval'"), std::string::npos) << st.err;
  Result acquired = run({"acquire", "job"}, *env);
  EXPECT_EQ(acquired.status, 77) << acquired.err;
  EXPECT_NE(acquired.err.find("'evalsha'"), std::string::npos) << acquired.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
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
