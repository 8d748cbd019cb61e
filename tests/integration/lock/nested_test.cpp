// A redlock nested inside exec reaches the same servers with the same
// credentials, without the user repeating them and without the password in
// $REDLOCK_URL, in a command line (ps) or in status.

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "exec_support.hpp"

using namespace redlock::test;

namespace {

const std::string k_password = "s3cret-nest";

struct Nested : ::testing::Test {
  Nested() : redis(options()) {}
  static RedisServer::Options options() {
    RedisServer::Options o;
    o.requirepass = k_password;
    return o;
  }
  Env env() const { return Env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}, {"RL", redlock_binary()}}; }
  // CMD: a nested exec of the same name (re-entry) and of another name (a
  // fresh lock, so it must authenticate), and what status shows meanwhile.
  static std::vector<std::string> nested_cmd() {
    return {"sh", "-c",
            "\"$RL\" exec nest -- true && \"$RL\" exec other -- \"$RL\" status --json >\"$D/status\" && "
            "env >\"$D/env\""};
  }
  RedisServer redis;
  TempDir dir;
};

}  // namespace

TEST_F(Nested, APasswordFromTheEnvironmentIsKept) {
  Env e = env();
  e["REDLOCK_PASSWORD"] = k_password;
  std::vector<std::string> args{"exec", "nest", "--"};
  for (const auto& w : nested_cmd()) {
    args.push_back(w);
  }
  Result r = run(args, e);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string status = read_file(dir.path() + "/status");
  EXPECT_NE(status.find("\"other\""), std::string::npos) << status;
  EXPECT_EQ(status.find(k_password), std::string::npos) << status;
}

TEST_F(Nested, APasswordFileIsPassedOnAsAnAbsolutePath) {
  const std::string file = dir.path() + "/pw";
  write_file(file, k_password + "\n", 0600);
  std::vector<std::string> args{"--password-file",
                                file,
                                "exec",
                                "nest",
                                "--",
                                "sh",
                                "-c",
                                "cd / && \"$RL\" exec other -- true && env >\"$D/env\""};
  Result r = run(args, env());
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string text = read_file(dir.path() + "/env");
  EXPECT_NE(text.find("REDLOCK_PASSWORD_FILE=" + file + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find(k_password), std::string::npos) << text;
  EXPECT_EQ(text.find("REDLOCK_PASSWORD="), std::string::npos) << text;
}

TEST_F(Nested, APasswordInTheUrlReachesTheNestedRedlockOutsideTheUrl) {
  Env e = env();
  e["REDLOCK_URL"] = "redis://:" + k_password + "@127.0.0.1:" + std::to_string(redis.port());
  std::vector<std::string> args{"exec", "nest", "--"};
  for (const auto& w : nested_cmd()) {
    args.push_back(w);
  }
  Result r = run(args, e);
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string text = read_file(dir.path() + "/env");
  EXPECT_NE(text.find("REDLOCK_URL=redis://127.0.0.1:"), std::string::npos) << text;
  EXPECT_EQ(text.find("@127.0.0.1"), std::string::npos) << text;
  const std::string status = read_file(dir.path() + "/status");
  EXPECT_EQ(status.find(k_password), std::string::npos) << status;
}

TEST_F(Nested, WithoutAnyPasswordTheNestedRedlockIsRefusedWithAHint) {
  Result r = run({"status"}, env());
  EXPECT_EQ(r.status, 77) << r.err;
  EXPECT_NE(r.err.find("password"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("REDLOCK_PASSWORD"), std::string::npos) << r.err;
}

namespace {

// The variables CMD saw that name a password source, one per line, as
// `env` printed them.
std::string password_lines(const std::string& env_text) {
  std::string out;
  std::istringstream in(env_text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("REDLOCK_PASSWORD=", 0) == 0 || line.rfind("REDLOCK_PASSWORD_FILE=", 0) == 0) {
      out += line + "\n";
    }
  }
  return out;
}

// CMD: a nested exec of another name (it must authenticate), then its
// environment into $D/env.
std::vector<std::string> exec_nested(std::vector<std::string> args) {
  for (const auto& w : {"exec", "nest", "--", "sh", "-c", "\"$RL\" exec other -- true && env >\"$D/env\""}) {
    args.emplace_back(w);
  }
  return args;
}

}  // namespace

TEST_F(Nested, APasswordFileWinsOverTheCallersVariableInsideTheCommandToo) {
  // --password-file comes before $REDLOCK_PASSWORD: the nested redlock must
  // read the file too, not the caller's (here wrong) variable.
  const std::string file = dir.path() + "/pw";
  write_file(file, k_password + "\n", 0600);
  Env e = env();
  e["REDLOCK_PASSWORD"] = "wrongpw";
  Result r = run(exec_nested({"--password-file", file}), e);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "REDLOCK_PASSWORD_FILE=" + file + "\n");

  // $REDLOCK_PASSWORD comes before $REDLOCK_PASSWORD_FILE: CMD gets the
  // variable alone.
  Env v = env();
  v["REDLOCK_PASSWORD"] = k_password;
  v["REDLOCK_PASSWORD_FILE"] = dir.path() + "/nowhere";
  Result rv = run(exec_nested({}), v);
  EXPECT_EQ(rv.status, 0) << rv.err;
  EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "REDLOCK_PASSWORD=" + k_password + "\n");
}

TEST(NestedUrl, APasswordInTheUrlWinsOverTheCallersVariableAndFileInsideTheCommandToo) {
  RedisServer::Options o;
  o.requirepass = "s3cr%t@x";
  RedisServer redis(o);
  TempDir dir;
  write_file(dir.path() + "/wrong", "wrong-from-file\n", 0600);
  const std::string url = "redis://:s3cr%25t@x@127.0.0.1:" + std::to_string(redis.port());
  const Env e{{"D", dir.path()}, {"RL", redlock_binary()}, {"REDLOCK_PASSWORD", "wrongpw"}};
  for (const auto& extra : std::vector<std::vector<std::string>>{{}, {"--password-file", dir.path() + "/wrong"}}) {
    std::vector<std::string> args{"-r", url};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = run(exec_nested(args), e);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "REDLOCK_PASSWORD=s3cr%t@x\n");
  }
}

TEST(NestedUrl, ServersWithDifferentPasswordsLeaveTheCommandWithoutOneAndSaySoOnce) {
  RedisServer::Options oa;
  oa.requirepass = "pw-of-a";
  RedisServer a(oa);
  RedisServer::Options ob;
  ob.requirepass = "pw-of-b";
  RedisServer b(ob);
  RedisServer c;
  TempDir dir;
  const std::string url_a = "redis://:pw-of-a@127.0.0.1:" + std::to_string(a.port());
  const std::string record = "env >\"$D/env\"";
  // a's password in its URL, b's from the caller's variable: the
  // environment cannot carry both.
  Env e{{"D", dir.path()}, {"REDLOCK_PASSWORD", "pw-of-b"}};
  Result r = run({"-r", url_a, "-r", b.url(), "exec", "job", "--", "sh", "-c", record}, e);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("the servers do not all have the same password"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("pw-of"), std::string::npos) << r.err;
  EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "");

  // Only one of two servers has a password: the same.
  Result some = run({"-r", url_a, "-r", c.url(), "exec", "job", "--", "sh", "-c", record}, {{"D", dir.path()}});
  EXPECT_EQ(some.status, 0) << some.err;
  EXPECT_NE(some.err.find("the servers do not all have the same password"), std::string::npos) << some.err;
  EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "");

  // A password given twice, in a URL and by a file, is one password: the
  // file is passed on, and a nested redlock reaches both servers.
  RedisServer a2(oa);
  write_file(dir.path() + "/pw", "pw-of-a\n", 0600);
  Env agree{{"D", dir.path()}, {"RL", redlock_binary()}};
  Result same = run(exec_nested({"-r", url_a, "-r", a2.url(), "--password-file", dir.path() + "/pw"}), agree);
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err, "");
  EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "REDLOCK_PASSWORD_FILE=" + dir.path() + "/pw\n");
}

TEST_F(Nested, APasswordFileThatIsAPipeReachesTheCommandAsAVariable) {
  // <(pass show redis) can be read once: a nested redlock cannot read it
  // again, so it gets what was read.
  Env e = env();
  e["PW"] = k_password;
  Child shell({"-c",
               "exec \"$RL\" --password-file <(printf '%s\\n' \"$PW\") exec nest -- sh -c "
               "'\"$RL\" exec other -- true && env >\"$D/env\"'"},
              e, "bash");
  Result r = shell.wait(Seconds(20));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(password_lines(read_file(dir.path() + "/env")), "REDLOCK_PASSWORD=" + k_password + "\n");
}
