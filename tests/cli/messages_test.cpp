// Messages in redlock's own words, each saying what to do next in one line.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness.hpp"

using namespace redlock::test;

namespace {

bool one_line(const std::string& err) {
  return std::count(err.begin(), err.end(), '\n') == 1 && err.rfind("redlock: ", 0) == 0;
}

}  // namespace

TEST(Messages, MinReplicasWithoutReplicasSaysSoAndNotThatRedisIsDown) {
  RedisServer redis;
  Result r = run({"acquire", "--min-replicas", "1", "--redis-timeout", "300ms", "x"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("fewer than 1 replica acknowledged"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lower --min-replicas or attach replicas"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("is redis-server running"), std::string::npos) << r.err;
}

TEST(Messages, NoSubcommandListsThem) {
  Result r = run({}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.rfind("redlock: a subcommand is required: exec, acquire, renew, release, status,", 0), 0) << r.err;
  EXPECT_NE(r.err.find("see redlock --help"), std::string::npos) << r.err;
}

TEST(Messages, ExecWithoutDoubleDashSuggestsTheWholeCommand) {
  Result r = run({"exec", "e1", "echo", "hi"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("redlock exec e1 -- echo hi"), std::string::npos) << r.err;
  // Secrets in the words are hidden like everywhere else.
  Result s = run({"exec", "e1", "env", "PASSWORD=hunter3", "x"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(s.status, 64);
  EXPECT_EQ(s.err.find("hunter3"), std::string::npos) << s.err;
}

TEST(Messages, TheMissingDashesHintKeepsEveryWordOfTheCommand) {
  const Env env{{"REDLOCK_URL", "redis://127.0.0.1:1"}};
  // -czf is no option of redlock's to take apart: the command is the words
  // after NAME, whole (redlock's own options before the command stay
  // redlock's).
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"exec", "job", "tar", "-czf", "x.tgz", "dir"}, "redlock exec job -- tar -czf x.tgz dir"},
      {{"exec", "job", "ls", "-l"}, "redlock exec job -- ls -l"},
      {{"-q", "exec", "--ttl", "5s", "job", "--wait", "1s", "sh", "-c", "echo hi"},
       "redlock -q exec --ttl 5s job --wait 1s -- sh -c 'echo hi'"},
  };
  for (const auto& [args, expected] : cases) {
    Result r = run(args, env);
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("put -- before the command: " + expected), std::string::npos) << r.err;
  }
}

TEST(Messages, AParseErrorNamesTheNearestWordAndTheHelpToRead) {
  const Env env{{"REDLOCK_URL", "redis://127.0.0.1:1"}};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"acquire", "--tll", "5s", "x"},
       "unknown option '--tll' for acquire (did you mean --ttl?); see redlock "
       "acquire --help"},
      {{"status", "--wach"}, "unknown option '--wach' for status (did you mean --watch?); see redlock status --help"},
      {{"aquire", "x"}, "unknown subcommand 'aquire' (did you mean acquire?); see redlock --help"},
      {{"history", "a", "b"}, "unexpected argument 'b' for history; see redlock history --help"},
      {{"acquire", "x", "--ttl"}, "--ttl needs a value for acquire; see redlock acquire --help"},
      {{"exec", "--timeuot", "1s", "job", "--", "true"},
       "unknown option '--timeuot' for exec (did you mean --timeout?); see redlock exec --help"},
  };
  for (const auto& [args, expected] : cases) {
    Result r = run(args, env);
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(r.err, "redlock: " + expected + "\n");
  }
}

TEST(Messages, ASubcommandsOptionBeforeTheSubcommandIsNamedNotItsValue) {
  // Only global options may come before the subcommand; one of the
  // subcommand's own given there is named, and never its value taken for
  // an unknown subcommand ("unknown subcommand '5s'").
  const Env env{{"REDLOCK_URL", "redis://127.0.0.1:1"}};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ttl", "5s", "acquire", "x"},
       "--ttl is an option of acquire, not a global one: put it after acquire; see redlock acquire --help"},
      {{"--ttl=5s", "acquire", "x"},
       "--ttl is an option of acquire, not a global one: put it after acquire; see redlock acquire --help"},
      {{"--json", "status"},
       "--json is an option of status, not a global one: put it after status; see redlock status --help"},
      {{"-q", "--wait", "1m", "exec", "job", "--", "true"},
       "--wait is an option of exec, not a global one: put it after exec; see redlock exec --help"},
      {{"--tll", "5s", "acquire", "x"},
       "unknown option '--tll' for acquire (did you mean --ttl?); see redlock acquire --help"},
      {{"--nope"}, "unknown option '--nope'; see redlock --help"},
  };
  for (const auto& [args, expected] : cases) {
    Result r = run(args, env);
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_EQ(r.err, "redlock: " + expected + "\n");
  }
  // Global options before the subcommand, clustered short flags and a
  // glued value included, are no such mistake.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-qv", "acquire", "--ttl", "5s", "x"},
                                               {"-r", "redis://127.0.0.1:1", "--redis-timeout=200ms", "acquire", "x"},
                                               {"-rredis://127.0.0.1:1", "acquire", "x"}}) {
    Result r = run(args, env);
    EXPECT_EQ(r.status, 69) << r.err;
  }
}

TEST(Messages, HelpFitsEightyColumnsAndEverySubcommandsHelpPointsToTheGlobalOptions) {
  Result top = run({"--help"});
  ASSERT_EQ(top.status, 0) << top.err;
  for (const char* global : {"--redis", "--prefix", "--redis-timeout", "--quiet", "--verbose", "--password-file"}) {
    EXPECT_NE(top.out.find(global), std::string::npos) << "--help lacks " << global;
  }
  std::vector<std::string> helps = {top.out};
  for (const char* sub : {"acquire", "release", "renew", "status", "break", "exec", "history", "overdue"}) {
    Result r = run({sub, "--help"});
    ASSERT_EQ(r.status, 0) << sub << ": " << r.err;
    // Its own options, and one line that says where the global ones are.
    EXPECT_NE(r.out.find("Global options (-r URL, --prefix, -q, -v, ...): see redlock --help"), std::string::npos)
        << sub << ":\n"
        << r.out;
    for (const char* global : {"--redis-timeout", "--password-file", "--tls-ca", "--syslog"}) {
      EXPECT_EQ(r.out.find(global), std::string::npos) << sub << " --help repeats " << global;
    }
    EXPECT_EQ(r.out.find("--version"), std::string::npos) << sub << " --help lists --version";
    helps.push_back(r.out);
  }
  for (const auto& help : helps) {
    size_t at = 0;
    while (at < help.size()) {
      const size_t end = std::min(help.find('\n', at), help.size());
      EXPECT_LE(end - at, 80U) << help.substr(at, end - at);
      at = end + 1;
    }
  }
  // The top-level help ends with the exit statuses, on one line.
  std::string out = top.out;
  while (!out.empty() && out.back() == '\n') {
    out.pop_back();
  }
  const std::string last = out.substr(out.rfind('\n') + 1);
  EXPECT_EQ(last.rfind("Exit: 0 ok, 1 no, 64 usage, 69", 0), 0U) << last;
  EXPECT_NE(last.find("75 busy"), std::string::npos) << last;
  // --wait says what it accepts for "for good".
  EXPECT_NE(run({"acquire", "--help"}).out.find("inf (or forever)"), std::string::npos);
}

TEST(Messages, NoauthFromStatusSaysAPasswordIsNeededAndHowToGiveIt) {
  RedisServer::Options o;
  o.requirepass = "pw";
  RedisServer redis(o);
  for (const auto& args : std::vector<std::vector<std::string>>{{"status"}, {"status", "x"}, {"acquire", "x"}}) {
    Result r = run(args, {{"REDLOCK_URL", redis.url()}});
    EXPECT_EQ(r.status, 77) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("requires a password"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--password-file"), std::string::npos) << r.err;
  }
}

TEST(Messages, DurationsAcceptDays) {
  RedisServer redis;
  Result r = run({"acquire", "--ttl", "1d", "x"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_GT(redis.cmd({"PTTL", "redlock:{x}"}).integer, 86'000'000);
  Result compound = run({"acquire", "--ttl", "2d12h", "y"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(compound.status, 0) << compound.err;
}

TEST(Messages, APasswordFileThatCannotBeReadSaysWhyAndWhereItWasNamed) {
  TempDir dir;
  const Env nowhere{{"REDLOCK_URL", "redis://127.0.0.1:1"}};
  Result flag = run({"acquire", "--password-file", dir.path(), "x"}, nowhere);
  EXPECT_EQ(flag.status, 64) << flag.err;
  EXPECT_TRUE(one_line(flag.err)) << flag.err;
  EXPECT_NE(flag.err.find("cannot read --password-file '" + dir.path() + "': Is a directory"), std::string::npos)
      << flag.err;
  Env from_env = nowhere;
  from_env["REDLOCK_PASSWORD_FILE"] = dir.path();
  Result env = run({"acquire", "x"}, from_env);
  EXPECT_EQ(env.status, 64) << env.err;
  EXPECT_NE(env.err.find("cannot read $REDLOCK_PASSWORD_FILE '" + dir.path() + "'"), std::string::npos) << env.err;
}

TEST(Messages, HelpWithASubcommandIsThatSubcommandsHelp) {
  Result all = run({"help"});
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_NE(all.out.find("acquire"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("exec"), std::string::npos) << all.out;
  Result exec = run({"help", "exec"});
  EXPECT_EQ(exec.status, 0) << exec.err;
  EXPECT_NE(exec.out.find("--kill-after"), std::string::npos) << exec.out;
  EXPECT_NE(exec.out.find("--hold-at-least"), std::string::npos) << exec.out;
  EXPECT_EQ(exec.out.find("--json"), std::string::npos) << "acquire's options are not exec's";
  Result unknown = run({"help", "frobnicate"});
  EXPECT_EQ(unknown.status, 64);
  EXPECT_NE(unknown.err.find("frobnicate"), std::string::npos) << unknown.err;
}

TEST(Messages, AUrlWithoutSchemeIsEchoedWithTheSchemeItLacks) {
  Result r = run({"-r", "localhost:6379", "status"});
  EXPECT_EQ(r.status, 64);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("'localhost:6379' has no scheme: write redis://localhost:6379"), std::string::npos) << r.err;
  Result secret = run({"status"}, {{"REDLOCK_URL", "user:hunter3@localhost:6379"}});
  EXPECT_EQ(secret.status, 64);
  EXPECT_EQ(secret.err.find("hunter3"), std::string::npos) << secret.err;
  EXPECT_NE(secret.err.find("***@localhost:6379"), std::string::npos) << secret.err;
}

TEST(Messages, AValueThatIsNotANumberIsNamedInRedlocksOwnWords) {
  // Not CLI11's "Could not convert: --limit = abc".
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"acquire", "x", "--limit", "abc"}, "invalid --limit 'abc': a whole number from 1 to 1000000"},
      {{"acquire", "x", "--limit", "1.5"}, "invalid --limit '1.5'"},
      {{"acquire", "x", "--limit", "99999999999999999999"}, "invalid --limit '99999999999999999999'"},
      {{"exec", "x", "--limit", "0", "--", "true"}, "invalid --limit '0'"},
      {{"--min-replicas", "x", "acquire", "y"}, "invalid --min-replicas 'x': a whole number from 0 to"},
      {{"acquire", "x", "--conflict-exit-code", "busy"},
       "invalid --conflict-exit-code 'busy': a whole number from 0 to 255"},
      {{"exec", "x", "--on-lost", "stop", "--", "true"}, "invalid --on-lost 'stop': use term, kill or ignore"},
      {{"status", "--format", "xml"}, "invalid --format 'xml': use table, json or prometheus"},
  };
  for (const auto& [args, expected] : cases) {
    SCOPED_TRACE(args[0] + " " + args[1] + " " + args[2]);
    Result r = run(args, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Could not convert"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("see redlock --help"), std::string::npos) << r.err;
  }
}

TEST(Messages, AnOptionGivenTwiceTakesTheLastValueAsGetoptDoes) {
  // Not CLI11's "--ttl: At Most 1 required but received 2": a wrapper script
  // or alias that sets --ttl can be overridden by adding another.
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result r = run({"acquire", "--ttl", "5s", "--json", "x", "--ttl", "7s", "--wait", "1s", "--wait", "0"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"ttl_ms\":7000"), std::string::npos) << r.out;
  const long long pttl = redis.cmd({"PTTL", "redlock:{x}"}).integer;
  EXPECT_GT(pttl, 5000) << "the first --ttl counted";
  EXPECT_LE(pttl, 7000);
  // The same for global options: the last --redis-timeout counts.
  Result t = run({"--redis-timeout", "abc", "--redis-timeout", "1s", "status"}, env);
  EXPECT_EQ(t.status, 0) << t.err;
}
