// Reaching Redis: unreachable, hung and refusing servers, passwords, Unix
// sockets, databases and the global options that pick the server.

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

class Unreachable : public WithRedis {};
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

// A password made of the characters a URL gives meaning to.
class OddPassword : public WithRedis {
 protected:
  OddPassword() : WithRedis(with_password()) {}
  static constexpr const char* k_password = "p@ss/w:rd?#, x";
  static RedisServer::Options with_password() {
    RedisServer::Options o;
    o.requirepass = k_password;
    return o;
  }
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

// ---------------------------------------------------------------- unreachable, hung, refused

TEST_F(OddPassword, WorksRawInTheUrlAndIsNeverShown) {
  const std::string url = "redis://:" + std::string(k_password) + "@127.0.0.1:" + std::to_string(redis.port()) + "/0";
  Result a = run({"-v", "--redis", url, "exec", "odd", "--", "sh", "-c", "echo \"$REDLOCK_URL\""});
  ASSERT_EQ(a.status, 0) << a.err;
  Result s = run({"--redis", url, "status", "--json"});
  EXPECT_EQ(s.status, 0) << s.err;
  Result wrong = run({"--redis", "redis://:p@ss/wrong@127.0.0.1:" + std::to_string(redis.port()), "status"});
  EXPECT_EQ(wrong.status, 77) << wrong.err;
  for (const Result* r : {&a, &s, &wrong}) {
    EXPECT_EQ(r->out.find("w:rd"), std::string::npos) << r->out;
    EXPECT_EQ(r->err.find("w:rd"), std::string::npos) << r->err;
    EXPECT_EQ(r->err.find("ss/wrong"), std::string::npos) << r->err;
  }
}

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
       std::vector<std::vector<std::string>>{{"acquire", "stopped", "--redis-timeout", "500ms"},
                                             {"release", "warm", "--token", "t", "--redis-timeout", "500ms"},
                                             {"renew", "warm", "--token", "t", "--redis-timeout", "500ms"},
                                             {"status", "--redis-timeout", "500ms"}}) {
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

TEST_F(GlobalOptions, AreAcceptedAfterTheSubcommand) {
  // $REDLOCK_URL points nowhere: only --redis, wherever it stands, can work.
  Env nowhere{{"REDLOCK_URL", "redis://127.0.0.1:" + std::to_string(free_port())}};
  Result a = run({"acquire", "g", "--redis", redis.url(), "--redis-timeout", "2s"}, nowhere);
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
  // The lock, its fence and the index of held locks.
  EXPECT_NE(keyspace.find("db3:keys=3"), std::string::npos) << keyspace;
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
  EXPECT_NE(keyspace.find("db2:keys=3"), std::string::npos) << keyspace;  // the lock, its fence, the index
}
