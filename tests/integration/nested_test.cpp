// A redlock nested inside exec reaches the same servers with the same
// credentials, without the user repeating them and without the password in
// $REDLOCK_URL, in a command line (ps) or in status.

#include <gtest/gtest.h>

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
