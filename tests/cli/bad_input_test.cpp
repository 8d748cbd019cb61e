// Bad input (safety promise 7): every malformed invocation exits 64 with one
// line on stderr and nothing on stdout, and is found before any network
// traffic — the Redis server it would talk to sees no connection at all.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace redlock::test;

namespace {

struct Case {
  const char* label;  // a test-name suffix
  std::vector<std::string> args;
  Env env;  // on top of REDLOCK_URL
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.label;
}

const std::string k_long_name(513, 'n');

// acquire with one name more than a lock may have.
std::vector<std::string> thirty_three_names() {
  std::vector<std::string> args = {"acquire"};
  for (int i = 0; i < 33; ++i) {
    args.push_back("n" + std::to_string(i));
  }
  return args;
}
const std::vector<std::string> k_thirty_three_names = thirty_three_names();

// Each of these is a usage error, whatever the server would say.
const std::vector<Case> k_cases = {
    // durations
    {"TtlWord", {"acquire", "x", "--ttl", "abc"}, {}},
    {"TtlNegative", {"acquire", "x", "--ttl", "-5s"}, {}},
    {"TtlEmpty", {"acquire", "x", "--ttl", ""}, {}},
    {"TtlUnknownUnit", {"acquire", "x", "--ttl", "10x"}, {}},
    {"TtlOverflow", {"acquire", "x", "--ttl", "99999999999999999999h"}, {}},
    {"TtlMissingUnitAfterMinutes", {"acquire", "x", "--ttl", "1m30"}, {}},
    {"TtlZero", {"acquire", "x", "--ttl", "0"}, {}},
    {"TtlTooShort", {"acquire", "x", "--ttl", "5ms"}, {}},
    {"TtlWithoutValue", {"acquire", "x", "--ttl"}, {}},
    {"WaitWord", {"acquire", "x", "--wait", "soon"}, {}},
    {"WaitNegative", {"acquire", "x", "--wait", "-1s"}, {}},
    {"WaitMissingUnit", {"acquire", "x", "--wait", "1m30"}, {}},
    {"RenewTtlUnknownUnit", {"renew", "x", "--token", "t", "--ttl", "10x"}, {}},
    {"RenewTtlZero", {"renew", "x", "--token", "t", "--ttl", "0"}, {}},
    {"MaxRuntimeZero", {"exec", "x", "--max-runtime", "0", "--", "true"}, {}},
    {"MaxRuntimeWord", {"exec", "x", "--max-runtime", "long", "--", "true"}, {}},
    {"MaxRuntimeOnAcquire", {"acquire", "x", "--max-runtime", "1m"}, {}},
    {"WarnAfterNegative", {"exec", "x", "--warn-after", "-1s", "--", "true"}, {}},
    {"WarnAfterOnAcquire", {"acquire", "x", "--warn-after", "1m"}, {}},
    {"JitterUnknownUnit", {"exec", "x", "--jitter", "5y", "--", "true"}, {}},
    {"JitterNegative", {"acquire", "x", "--jitter", "-5s"}, {}},
    {"MaxWaitersZero", {"acquire", "x", "--wait", "1m", "--max-waiters", "0"}, {}},
    {"MaxWaitersWord", {"exec", "x", "--max-waiters", "many", "--", "true"}, {}},
    {"MaxWaitersUnfair", {"acquire", "x", "--wait", "1m", "--unfair", "--max-waiters", "3"}, {}},
    {"StaleAfterZero", {"acquire", "x", "--stale-after", "0"}, {}},
    {"StaleAfterWord", {"exec", "x", "--stale-after", "old", "--", "true"}, {}},
    {"NoteTooLong", {"acquire", "x", "--note", std::string(257, 'n')}, {}},
    {"NoteOnTwoLines", {"exec", "x", "--note", "a\nb", "--", "true"}, {}},
    {"NoteNotUtf8", {"acquire", "x", "--note", "\xff"}, {}},
    {"OnBusyWord", {"exec", "x", "--on-busy", "wait", "--", "true"}, {}},
    {"OnBusyReplaceShared", {"exec", "x", "--shared", "--on-busy", "replace", "--", "true"}, {}},
    {"OnBusyReplaceLimit", {"exec", "x", "--limit", "3", "--on-busy", "replace", "--", "true"}, {}},
    {"OnBusyWithAcquire", {"acquire", "x", "--on-busy", "replace"}, {}},
    {"RevokeGraceZero", {"revoke", "x", "--grace", "0"}, {}},
    {"RevokeNoName", {"revoke"}, {}},
    {"SuspendForZero", {"suspend", "x", "--for", "0"}, {}},
    {"SuspendReasonTooLong", {"suspend", "x", "--reason", std::string(257, 'r')}, {}},
    {"SuspendReasonControl", {"suspend", "x", "--reason", "a\x1b[2J"}, {}},
    {"SuspendBadName", {"suspend", ""}, {}},
    {"ResumeTwoNames", {"resume", "x", "y"}, {}},
    {"TimeoutWord", {"--redis-timeout", "abc", "status"}, {}},
    {"ConnectTimeoutZero", {"status", "--connect-timeout", "0"}, {}},
    // URLs
    {"UrlUnknownScheme", {"--redis", "http://127.0.0.1:6380", "acquire", "x"}, {}},
    {"UrlPortZero", {"acquire", "x", "--redis", "redis://127.0.0.1:0"}, {}},
    {"UrlPortTooLarge", {"acquire", "x", "--redis", "redis://127.0.0.1:65536"}, {}},
    {"UrlPortNotANumber", {"acquire", "x", "--redis", "redis://127.0.0.1:abc"}, {}},
    {"UrlEmptyHost", {"acquire", "x", "--redis", "redis://:6380"}, {}},
    {"UrlIpv6WithoutBrackets", {"acquire", "x", "--redis", "redis://::1:6380"}, {}},
    {"UrlBadEscape", {"acquire", "x", "--redis", "redis://:pa%zz@127.0.0.1:6380"}, {}},
    {"UrlDatabaseNotANumber", {"acquire", "x", "--redis", "redis://127.0.0.1:6380/abc"}, {}},
    {"UnixUrlDatabaseNotANumber", {"status", "--redis", "unix:///tmp/redis.sock?db=x"}, {}},
    {"UrlInEnvironment", {"status"}, {{"REDLOCK_URL", "redis://127.0.0.1:6380/-1"}}},
    {"UrlListWithEmptyItem", {"status"}, {{"REDLOCK_URL", "redis://127.0.0.1:6380,,redis://127.0.0.1:6381"}}},
    // names
    {"NameEmpty", {"acquire", ""}, {}},
    {"Name513Bytes", {"acquire", k_long_name}, {}},
    {"NameWithNewline", {"acquire", "a\nb"}, {}},
    {"NameWithEscape", {"acquire", "\x1b[2J"}, {}},
    {"NameWithDel", {"release", "x\x7f", "--token", "t"}, {}},
    {"NameInvalidUtf8", {"acquire", "\xff\xfe"}, {}},
    {"StatusSecondNameBad", {"status", "ok", "b\x01"}, {}},
    {"RenewNameEmpty", {"renew", "", "--token", "t"}, {}},
    // tokens
    {"ReleaseWithoutToken", {"release", "x"}, {}},
    {"RenewWithoutToken", {"renew", "x"}, {}},
    {"ReleaseWithEmptyToken", {"release", "x", "--token", ""}, {}},
    {"TokenWithANewline", {"release", "x", "--token", "abc\ndef"}, {}},
    {"TokenTooLong", {"renew", "x", "--token", std::string(300, 'a')}, {}},
    {"EnvTokenWithASpace", {"acquire", "x"}, {{"REDLOCK_TOKEN", "two words"}}},
    // flags and subcommands
    {"UnknownFlag", {"acquire", "x", "--bogus"}, {}},
    {"UnknownShortFlag", {"-Z", "status"}, {}},
    {"UnknownSubcommand", {"frobnicate", "x"}, {}},
    {"NoSubcommand", {}, {}},
    {"OnlyGlobalOptions", {"--prefix", "p:"}, {}},
    {"AcquireWithoutName", {"acquire"}, {}},
    // several names
    {"AcquireSameNameTwice", {"acquire", "x", "y", "x"}, {}},
    {"ExecSameNameTwice", {"exec", "x", "x", "--", "true"}, {}},
    {"ReleaseSameNameTwice", {"release", "--token", std::string(40, 'a'), "x", "x"}, {}},
    {"RenewSameNameTwice", {"renew", "--token", std::string(40, 'a'), "y", "y"}, {}},
    {"AcquireThirtyThreeNames", k_thirty_three_names, {}},
    {"ExecTwoNamesWithoutDashes", {"exec", "x", "y", "-c", "true"}, {}},
    {"AcquireANameWithAPassword", {"acquire", "x", "redis://:pw@127.0.0.1:1"}, {}},
    {"ExecANameWithAPassword", {"exec", "x", "PASSWORD=pw", "--", "true"}, {}},
    {"AcquireSecondNameTooLong", {"acquire", "x", k_long_name}, {}},
    {"ExecDoubleDashIsNeverShellCommand", {"exec", "x", "-c", "--", "true"}, {}},
    {"TtlOnRelease", {"release", "x", "--token", "t", "--ttl", "5s"}, {}},
    {"WaitOnStatus", {"status", "--wait", "5s"}, {}},
    {"ConflictExitCodeTooLarge", {"acquire", "x", "--conflict-exit-code", "300"}, {}},
    {"ConflictExitCodeNegative", {"acquire", "x", "--conflict-exit-code", "-1"}, {}},
    {"ConflictExitCodeWord", {"acquire", "x", "--conflict-exit-code", "busy"}, {}},
    {"MinReplicasNegative", {"--min-replicas", "-1", "acquire", "x"}, {}},
    {"PrefixInvalidUtf8", {"acquire", "x", "--prefix", "\xff:"}, {}},
    {"PrefixWithAnEmptyHashTag", {"acquire", "c", "--prefix", "a{}b"}, {}},
    {"EnvPrefixWithAnEmptyHashTag", {"status"}, {{"REDLOCK_PREFIX", "x}{}:"}}},
    {"HoldAtLeastWithLimit", {"exec", "x", "--hold-at-least", "1m", "--limit", "2", "--", "true"}, {}},
    {"HoldAtLeastWithShared", {"exec", "x", "--hold-at-least", "1m", "--shared", "--", "true"}, {}},
    {"HoldAtLeastWord", {"exec", "x", "--hold-at-least", "soon", "--", "true"}, {}},
    {"ReleaseHoldAtLeastNegative", {"release", "x", "--token", "t", "--hold-at-least", "-1s"}, {}},
    // the run ledger
    {"SkipIfOkWithinZero", {"exec", "x", "--skip-if-ok-within", "0", "--", "true"}, {}},
    {"SkipIfOkWithinNegative", {"exec", "x", "--skip-if-ok-within", "-1h", "--", "true"}, {}},
    {"SkipIfOkWithinWithLimit", {"exec", "x", "--skip-if-ok-within", "1h", "--limit", "2", "--", "true"}, {}},
    {"SkipIfOkWithinWithShared", {"exec", "x", "--skip-if-ok-within", "1h", "--shared", "--", "true"}, {}},
    {"SkipIfOkWithinOnAcquire", {"acquire", "x", "--skip-if-ok-within", "1h"}, {}},
    {"NoHistoryOnAcquire", {"acquire", "x", "--no-history"}, {}},
    {"HistoryLimitZero", {"history", "x", "--limit", "0"}, {}},
    {"HistoryWithoutName", {"history"}, {}},
    {"HistoryBadName", {"history", ""}, {}},
    {"OverdueWithoutMaxAge", {"overdue", "x"}, {}},
    {"OverdueMaxAgeZero", {"overdue", "x", "--max-age", "0"}, {}},
    {"OverdueMaxAgeNegative", {"overdue", "x", "--max-age", "-26h"}, {}},
    {"OverdueMaxAgeWord", {"overdue", "x", "--max-age", "daily"}, {}},
    {"HistoryMaxAgeZero", {"history", "x", "--max-age", "0"}, {}},
    {"HistoryMaxAgeWithLimit", {"history", "x", "--max-age", "1h", "--limit", "5"}, {}},
    {"HistoryMaxAgeBadName", {"history", "", "--max-age", "1h"}, {}},
    {"BreakGraceZero", {"break", "x", "--grace", "0"}, {}},
    {"BreakGraceTwoNames", {"break", "x", "y", "--grace", "1s"}, {}},
    {"BreakGraceWithJson", {"break", "x", "--grace", "1s", "--json"}, {}},
    {"BreakGraceWithoutValue", {"break", "x", "--grace"}, {}},
    {"PasswordFileMissing", {"acquire", "x", "--password-file", "/nonexistent/redlock-password"}, {}},
    {"StatusFormatUnknown", {"status", "--format", "xml"}, {}},
    {"StatusJsonWithOtherFormat", {"status", "--json", "--format", "prometheus"}, {}},
    {"StatusIntervalWithoutWatch", {"status", "--interval", "5s"}, {}},
    {"StatusIntervalTooShort", {"status", "--watch", "--interval", "10ms"}, {}},
    {"StatusIntervalWord", {"status", "--watch", "--interval", "often"}, {}},
    {"StatusColumnUnknown", {"status", "-o", "name,owner"}, {}},
    {"StatusColumnEmpty", {"status", "--columns", "name,,pid"}, {}},
    {"StatusColumnsWithJson", {"status", "-o", "name", "--json"}, {}},
    {"StatusColumnsWithPrometheus", {"status", "--columns=name", "--format", "prometheus"}, {}},
    {"StatusColumnsWithWatchJson", {"status", "--watch", "-o", "name", "--format", "json"}, {}},
    // events and the log's options
    {"EventsEmptyName", {"events", ""}, {}},
    {"EventsControlInName", {"events", "a\nb"}, {}},
    {"EventsUnknownOption", {"events", "--follow"}, {}},
    {"LogFormatUnknown", {"--log-format", "xml", "status"}, {}},
    {"LogFormatUnknownInEnvironment", {"status"}, {{"REDLOCK_LOG_FORMAT", "yaml"}}},
    {"SyslogUnknownInEnvironment", {"status"}, {{"REDLOCK_SYSLOG", "maybe"}}},
    {"SyslogFacilityUnknown", {"--syslog-facility", "local8", "status"}, {}},
};

long long info_number(const RedisServer& redis, const std::string& section, const std::string& field) {
  std::string info = redis.cmd({"INFO", section}).str;
  auto at = info.find("\n" + field + ":");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no " << field << " in INFO " << section;
    return -1;
  }
  return std::stoll(info.substr(at + field.size() + 2));
}

// Every command the server has run, except the INFO we ask with.
void expect_usage_error(const Result& r) {
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_EQ(r.out, "");
  // Exactly one line: one newline, at the end, after some text.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.err;
  EXPECT_EQ(r.err.rfind("redlock: ", 0), 0u) << r.err;
  EXPECT_GT(r.err.size(), std::string("redlock: \n").size()) << r.err;
}

class BadInput : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { s_redis = std::make_unique<RedisServer>(); }
  static void TearDownTestSuite() { s_redis.reset(); }

  static Env env_with(const std::string& url, const Env& extra) {
    Env e{{"REDLOCK_URL", url}};
    for (const auto& [k, v] : extra) {
      e[k] = v;
    }
    return e;
  }

  static std::unique_ptr<RedisServer> s_redis;
};

std::unique_ptr<RedisServer> BadInput::s_redis;

}  // namespace

TEST_P(BadInput, Exits64WithOneLineAndNoTrafficToRedis) {
  const Case& c = GetParam();
  RedisServer& redis = *s_redis;
  // Our own INFO connection counts itself, so a quiet server shows exactly
  // one more connection (the next INFO) afterwards.
  const long long connections = info_number(redis, "stats", "total_connections_received");
  const long long commands = redis.commands_run();

  Result r = run(c.args, env_with(redis.url(), c.env), Seconds(10));
  expect_usage_error(r);

  EXPECT_EQ(info_number(redis, "stats", "total_connections_received"), connections + 2)
      << "redlock connected to Redis";  // +1 for commands_run's INFO, +1 for this one
  EXPECT_EQ(redis.commands_run(), commands);
  EXPECT_EQ(redis.cmd({"DBSIZE"}).integer, 0);
}

TEST_P(BadInput, Exits64EvenWhenRedisIsUnreachable) {
  const Case& c = GetParam();
  Result r = run(c.args, env_with("redis://127.0.0.1:" + std::to_string(free_port()), c.env), Seconds(10));
  expect_usage_error(r);
  EXPECT_LT(r.seconds, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Invocations, BadInput, ::testing::ValuesIn(k_cases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return std::string(param_info.param.label);
                         });

TEST(BadInputList, HasAtLeast25DistinctInvocations) {
  std::vector<std::string> labels;
  for (const auto& c : k_cases) {
    labels.emplace_back(c.label);
  }
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(std::unique(labels.begin(), labels.end()), labels.end());
  EXPECT_GE(k_cases.size(), 25u);
}

TEST(GoodInput, TheSameShapesWithGoodValuesReachRedis) {
  // The control for the cases above: with every value fixed, the same kinds
  // of invocation get past validation and talk to the server.
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "x", "--ttl", "10ms", "--wait", "1m30s", "--conflict-exit-code", "255"}, env);
  EXPECT_EQ(a.status, 0) << a.err;
  Result n = run({"acquire", std::string(512, 'n'), "--redis", redis.url() + "/0", "--redis-timeout", "1.5"}, env);
  EXPECT_EQ(n.status, 0) << n.err;
  EXPECT_GT(redis.cmd({"DBSIZE"}).integer, 0);
}

TEST(BadInputMessages, AnUnknownSubcommandIsNamed) {
  Result r = run({"frobnicate"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.err.find("unknown subcommand 'frobnicate'"), std::string::npos) << r.err;
}

TEST(BadInputMessages, ParseErrorsNeverShowAPassword) {
  // A parse error echoes the word it cannot place ("unexpected argument
  // 'redis://:…@…'"), or names only the unknown option before a secret.
  for (const auto& [args, echoed] : std::vector<std::pair<std::vector<std::string>, bool>>{
           {{"acquire", "x", "redis://:hunter3@127.0.0.1:1"}, true},
           {{"redis://u:hunter3@127.0.0.1:1", "acquire", "x"}, true},
           {{"acquire", "x", "--password", "hunter3"}, false},
           {{"status", "--pass=hunter3"}, false},
           {{"release", "x", "-a", "hunter3", "--token", "t"}, false},
           {{"exec", "x", "PASSWORD=hunter3", "--", "true"}, true},
       }) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    Result r = run(args, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_EQ(r.err.find("hunter3"), std::string::npos) << r.err;
    if (echoed) {
      EXPECT_NE(r.err.find("***"), std::string::npos) << r.err;
    }
  }
}

TEST(BadInputMessages, SilentSilencesEvenParseErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-qq", "acquire", "--bogus", "x"}, {"acquire", "--silent", "--ttl"}, {"-q", "-q", "frobnicate"}}) {
    Result r = run(args, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
    EXPECT_EQ(r.status, 64) << args[1];
    EXPECT_EQ(r.err, "") << args[1];
  }
}

// ---------------------------------------------------------------- one server named twice

// The same server named twice (the same scheme, host, port and database, or
// the same socket) is a usage error found in the text, before any
// connection; aliases (another spelling of the address) are found after
// connecting (tests/cluster/topology_test.cpp).
TEST(DuplicateEndpoints, TheSameServerTwiceIs64BeforeAnyConnection) {
  RedisServer redis;
  const std::string url = redis.url();
  std::string with_user = url;
  with_user.insert(with_user.find("//") + 2, "alice:hunter3@");
  const std::vector<std::vector<std::string>> invocations = {
      {"-r", url, "-r", url, "acquire", "x"},
      {"-r", url, "-r", url + "/0", "status"},
      {"-r", url + "/3", "-r", "redis://other.invalid:6379", "-r", url + "/3", "release", "x", "--token", "t"},
      {"-r", with_user, "-r", url, "exec", "x", "--", "true"},
      {"--redis", url + "," + url, "break", "x"},
  };
  for (const auto& args : invocations) {
    SCOPED_TRACE(args[1] + " " + args[3]);
    const long long connections = info_number(redis, "stats", "total_connections_received");
    Result r = run(args, {{"REDLOCK_URL", ""}}, Seconds(10));
    expect_usage_error(r);
    EXPECT_NE(r.err.find("named twice"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("hunter3"), std::string::npos) << r.err;
    EXPECT_EQ(info_number(redis, "stats", "total_connections_received"), connections + 1)
        << "redlock connected to Redis";  // +1: this INFO's own
  }
  Result env = run({"acquire", "x"}, {{"REDLOCK_URL", url + "," + url}}, Seconds(10));
  expect_usage_error(env);
  EXPECT_EQ(redis.cmd({"DBSIZE"}).integer, 0);
}

TEST(DuplicateEndpoints, AClosedPortNamedTwiceIs64AtOnce) {
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port());
  Result r = run({"-r", url, "-r", url, "acquire", "x"}, {{"REDLOCK_URL", ""}}, Seconds(10));
  expect_usage_error(r);
  EXPECT_NE(r.err.find("named twice"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 1.0);
  Result sock =
      run({"status"}, {{"REDLOCK_URL", "unix:///nonexistent/redis.sock,unix:///nonexistent/redis.sock"}}, Seconds(10));
  expect_usage_error(sock);
  // Host names are compared without case, and never looked up.
  Result names = run({"-r", "redis://Redis.Invalid:1", "-r", "redis://redis.invalid:1", "status"},
                     {{"REDLOCK_URL", ""}}, Seconds(10));
  expect_usage_error(names);
}

TEST(DuplicateEndpoints, DifferentDatabasesOrSchemesAreNotTheSameText) {
  // Not a textual duplicate: these reach Redis, and the closed port makes it 69.
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port());
  for (const std::string& second : {url + "/1", "rediss" + url.substr(5)}) {
    SCOPED_TRACE(second);
    Result r = run({"-r", url, "-r", second, "acquire", "x"}, {{"REDLOCK_URL", ""}}, Seconds(10));
    EXPECT_EQ(r.status, 69) << r.err;
  }
}
