// redlock exec: everything after the first "--" reaches CMD byte for byte.
// CMD writes its argv NUL-separated to a file; the test compares bytes.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

// Arguments a command line parser could be tempted to rewrite.
const std::vector<std::string> k_tricky = {"[0-9]",    "[1,2]",      "[",     "]", "[]",      "{a,b}",   "{}",
                                           "'single'", "\"double\"", "a,b",   ",", "x=y",     "--ttl=5", "",
                                           "--",       "-c",         "--ttl", "-", "-q",      "--token", "--help",
                                           "exec",     "a b",        "*",     "~", "$HOME",   "\\",      "tab\tx",
                                           "line\nxy", "\xff\xfe",   "\xc3",  "💡", "--redis", "-r",      "--version"};

std::string nul_joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    out += a;
    out.push_back('\0');
  }
  return out;
}

// sh -c 'printf "%s\0" "$@" >"$D/argv"' sh ARGS...: ARGS as CMD saw them.
std::vector<std::string> reporter(const std::vector<std::string>& args) {
  std::vector<std::string> cmd{"sh", "-c", "printf '%s\\0' \"$@\" >\"$D/argv\"", "sh"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

}  // namespace

TEST(ExecArgv, EveryArgumentAfterTheFirstDoubleDashReachesTheCommandUnchanged) {
  RedisServer redis;
  TempDir dir;
  std::vector<std::string> args{"exec", "job", "--"};
  for (const auto& a : reporter(k_tricky)) {
    args.push_back(a);
  }
  Result r = run(args, {{"REDLOCK_URL", redis.url()}, {"D", dir.path()}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() + "/argv"), nul_joined(k_tricky));
}

TEST(ExecArgv, OptionsBeforeAndAfterTheNameStillWork) {
  RedisServer redis;
  TempDir dir;
  Result r = run({"--prefix", "p:", "exec", "--ttl", "5s", "job", "--wait", "1s", "--", "sh", "-c",
                  "printf '%s\\0' \"$REDLOCK_PREFIX\" \"$@\" >\"$D/argv\"", "sh", "[1,2]", "--ttl", "9s"},
                 {{"REDLOCK_URL", redis.url()}, {"D", dir.path()}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() + "/argv"), nul_joined({"p:", "[1,2]", "--ttl", "9s"}));
}

TEST(ExecArgv, AGlobalOptionWhoseValueIsExecDoesNotMakeTheCommandExec) {
  // "--prefix exec" is a prefix: the subcommand is status, whose "--" keeps
  // its usual meaning (what follows are names, not options).
  RedisServer redis;
  Result r = run({"--prefix", "exec", "status", "--", "-dash-name"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 1) << r.err;  // a free lock
  EXPECT_NE(r.out.find("-dash-name"), std::string::npos) << r.out;
}

TEST(ExecArgv, EveryWordBeforeDoubleDashIsAName) {
  RedisServer redis;
  TempDir dir;
  Result r = run({"exec", "a", "b", "--", "sh", "-c", "printf '%s\\n' \"$REDLOCK_FENCES\" > \"$D/fences\""},
                 {{"REDLOCK_URL", redis.url()}, {"D", dir.path()}});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string fences = read_file(dir.path() + "/fences");
  EXPECT_NE(fences.find(" a\n"), std::string::npos) << fences;
  EXPECT_NE(fences.find(" b\n"), std::string::npos) << fences;
}

TEST(ExecArgv, ANameGivenTwiceIsNamed) {
  Result r = run({"exec", "a", "b", "a", "--", "true"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.err.find("'a' is given twice"), std::string::npos) << r.err;
}

TEST(ExecArgv, TheCommandIsFoundInPathWhereExecvpFindsIt) {
  // redlock finds CMD in PATH itself (a stat and an access a directory),
  // not by an execve that fails in each directory before: what it runs,
  // and with what argv[0], is what execvp would have run. A directory of
  // that name and a file nobody may execute are passed over.
  RedisServer redis;
  TempDir dir;
  for (const char* d : {"/a", "/a/tool", "/b", "/c", "/d", "/e"}) {
    ASSERT_EQ(::mkdir((dir.path() + d).c_str(), 0755), 0) << d;
  }
  write_file(dir.path() + "/b/tool", "#!/bin/sh\nprintf b >\"$D/ran\"\n");
  ASSERT_EQ(::chmod((dir.path() + "/b/tool").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("/bin/cat", (dir.path() + "/c/tool").c_str()), 0);
  write_file(dir.path() + "/d/tool", "#!/bin/sh\nprintf d >\"$D/ran\"\n");
  ASSERT_EQ(::chmod((dir.path() + "/d/tool").c_str(), 0755), 0);
  // A script without #!: execvp has sh run it.
  write_file(dir.path() + "/e/plain", "printf e >\"$D/ran\"\n");
  ASSERT_EQ(::chmod((dir.path() + "/e/plain").c_str(), 0755), 0);
  const std::string path = dir.path() + "/a:" + dir.path() + "/b:" + dir.path() + "/c:" + dir.path() +
                           "/d:" + dir.path() + "/e:" + std::getenv("PATH");
  const Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}, {"PATH", path}};
  Result r = run({"exec", "job", "--", "tool", "/proc/self/cmdline"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::string("tool\0/proc/self/cmdline\0", 24));
  Result plain = run({"exec", "job", "--", "plain"}, env);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(read_file(dir.path() + "/ran"), "e");
  Result missing = run({"exec", "job", "--", "no-such-tool-anywhere"}, env);
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.err.find("command not found"), std::string::npos) << missing.err;
}
