// Faults on the wire: a server that accepts and never answers, one that
// closes in the middle of a reply, one that answers with bytes that are not
// RESP or with a reply of the wrong kind. Every subcommand ends within its
// deadline with Redis trouble (69 or 76) and one line, never a crash, a hang
// or a command run unlocked.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "exec_support.hpp"
#include "fake_redis.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

const std::vector<std::vector<std::string>> k_subcommands = {
    {"acquire", "w"},
    {"acquire", "w", "--wait", "2s"},
    {"release", "w", "--token", "0123456789abcdef0123456789abcdef"},
    {"renew", "w", "--token", "0123456789abcdef0123456789abcdef"},
    {"status", "w"},
    {"status"},
};

bool one_line(const std::string& s) {
  return !s.empty() && std::count(s.begin(), s.end(), '\n') == 1 && s.back() == '\n';
}

// Runs every subcommand (and exec) against `fake` with a 300 ms command
// timeout; each must exit with `status` within `limit` seconds.
void expect_every_subcommand_ends(FakeRedis& fake, int status, double limit) {
  TempDir dir;
  Env env{{"REDLOCK_URL", fake.url()}};
  for (auto args : k_subcommands) {
    SCOPED_TRACE(args[0] + (args.size() > 2 ? " " + args[2] : ""));
    args.insert(args.end(), {"--redis-timeout", "300ms", "--connect-timeout", "300ms"});
    Result r = run(args, env, Seconds(20));
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_LT(r.seconds, limit);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(one_line(r.err)) << r.err;
  }
  const std::string ran = dir.path() + "/ran";
  Result r = run({"exec", "--redis-timeout", "300ms", "w", "--", "touch", ran}, env, Seconds(20));
  EXPECT_EQ(r.status, status) << r.err;
  EXPECT_LT(r.seconds, limit);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_FALSE(file_exists(ran)) << "CMD ran without the lock";
}

// A child's peak resident set (ru_maxrss) counts the pages of this test
// process it was forked from too: what `redlock --version` shows now, with
// the same pages, is where redlock's own cost starts. A reply may cost it
// this much more (redlock alone peaks at 3 to 6 MiB in these tests).
// Under AddressSanitizer (redlock is built with it whenever this test is)
// every allocation carries redzones and freed memory waits in a
// quarantine, so a 2 MiB reply costs several times its size; the bound
// still tells megabytes from the gigabytes of an unbounded reader.
#if defined(__SANITIZE_ADDRESS__)
constexpr long k_rss_allowance_kb = 32 * 1024;
#else
constexpr long k_rss_allowance_kb = 8 * 1024;
#endif

long resident_before_exec() {
  return run({"--version"}).peak_rss_kb;
}

}  // namespace

TEST(WireFaults, AServerThatAcceptsAndNeverAnswersIs69WithinTheTimeout) {
  FakeRedis fake(FakeRedis::Mode::k_silent);
  expect_every_subcommand_ends(fake, 69, 3.0);
  EXPECT_GT(fake.bytes_received(), 0) << "the requests did reach the listener";
}

TEST(WireFaults, AServerThatClosesMidReplyIs69) {
  FakeRedis fake(FakeRedis::Mode::k_close_mid_reply);
  expect_every_subcommand_ends(fake, 69, 3.0);
  EXPECT_GT(fake.connections(), 0);
}

TEST(WireFaults, AGarbageReplyIs76) {
  FakeRedis fake(FakeRedis::Mode::k_garbage);
  expect_every_subcommand_ends(fake, 76, 3.0);
}

TEST(WireFaults, AReplyOfTheWrongKindIs76) {
  FakeRedis fake(FakeRedis::Mode::k_wrong_type);
  expect_every_subcommand_ends(fake, 76, 3.0);
}

TEST(WireFaults, AReplyAnnouncingMoreThanAnyReplyHoldsIs76AtOnceAndCostsNoMemory) {
  // "*585477708\r\n" made hiredis calloc 4.5 GB of element slots: 4.5 GB
  // resident and 69 after minutes, whatever --redis-timeout said. Anything past
  // redlock's bounds is refused as soon as it is announced.
  const std::vector<std::pair<std::string, std::string>> replies = {
      {"*585477708\r\n", "an array of 585477708 elements"},
      {"*2147483647\r\n", "an array of 2147483647 elements"},
      {"*2\r\n:1\r\n*16384\r\n", "an array of 16384 elements"},
      {"$999999999\r\n", "a string of 999999999 bytes"},
      {"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "arrays nested 5 deep"},
  };
  for (const auto& [reply, what] : replies) {
    SCOPED_TRACE(reply);
    FakeRedis fake(reply);
    const long before = resident_before_exec();
    Result r = run({"acquire", "w", "--redis-timeout", "10s"}, {{"REDLOCK_URL", fake.url()}}, Seconds(60));
    EXPECT_EQ(r.status, 76) << r.err;
    EXPECT_LT(r.seconds, 2.0) << r.err;
    EXPECT_LT(r.peak_rss_kb, before + k_rss_allowance_kb) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("Redis at " + fake.url() + " sent an unexpected reply: " + what), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(is it a Redis server?)"), std::string::npos) << r.err;
  }
  FakeRedis fake("*585477708\r\n");
  expect_every_subcommand_ends(fake, 76, 3.0);
}

TEST(WireFaults, ALineOrAStringThatNeverEndsIs76OnceItPassesTheBound) {
  // No "\r\n" after 2 MiB of a status line, an integer or an error: the
  // reader stops holding more.
  for (const std::string& start : {std::string("+"), std::string(":1"), std::string("-ERR ")}) {
    SCOPED_TRACE(start);
    FakeRedis fake(start + std::string(redlock::redis::k_max_reply_bytes + 4096, '7'));
    const long before = resident_before_exec();
    Result r = run({"acquire", "w", "--redis-timeout", "10s"}, {{"REDLOCK_URL", fake.url()}}, Seconds(60));
    EXPECT_EQ(r.status, 76) << r.err;
    // Well inside the 10 s timeout (its message below says which ended it);
    // reading 2 MiB takes a loaded machine seconds.
    EXPECT_LT(r.seconds, 9.0) << r.err;
    EXPECT_LT(r.peak_rss_kb, before + k_rss_allowance_kb) << r.err;
    EXPECT_NE(r.err.find("sent an unexpected reply: more than " + std::to_string(redlock::redis::k_max_reply_bytes) +
                         " bytes in one reply"),
              std::string::npos)
        << r.err;
  }
}

TEST(WireFaults, AServersErrorCannotDriveTheTerminalOrAddALine) {
  // An error with escape sequences, a bell, a carriage return and a newline
  // went to stderr as it came: colours, a title, a forged second line.
  FakeRedis fake("-ERR \x1b[31mred\x1b]0;title\x07\rover\nredlock: forged\x1b[0m\r\n");
  expect_every_subcommand_ends(fake, 76, 3.0);
  Result r = run({"acquire", "w", "--redis-timeout", "300ms"}, {{"REDLOCK_URL", fake.url()}});
  EXPECT_EQ(r.status, 76);
  for (char c : {'\x1b', '\x07', '\r'}) {
    EXPECT_EQ(r.err.find(c), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find("ERR \\x1b[31mred"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\nredlock: forged"), std::string::npos) << r.err;
  // status --watch shows Redis trouble in place of a block, on stdout.
  Child watch({"status", "--watch", "--redis-timeout", "300ms", "w"}, {{"REDLOCK_URL", fake.url()}});
  ASSERT_TRUE(eventually([&] { return watch.out_so_far().find("forged") != std::string::npos; }, Seconds(10)));
  watch.signal(SIGINT);
  Result w = watch.wait(Seconds(5));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(w.out.find('\x1b'), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find("\nredlock: forged"), std::string::npos) << w.out;
}

TEST(WireFaults, APasswordEchoedInAServersErrorIsHidden) {
  // A server without AUTH (renamed away) echoes its arguments: "ERR unknown
  // command 'AUTH', with args beginning with: 'S3cr3t-pw'".
  FakeRedis fake("-ERR unknown command 'AUTH', with args beginning with: 'S3cr3t-pw' \r\n");
  const std::string url = "redis://:S3cr3t-pw@127.0.0.1:" + std::to_string(fake.port());
  for (const Env& env :
       {Env{{"REDLOCK_URL", url}}, Env{{"REDLOCK_URL", fake.url()}, {"REDLOCK_PASSWORD", "S3cr3t-pw"}}}) {
    Result r = run({"acquire", "w", "--redis-timeout", "300ms"}, env);
    EXPECT_EQ(r.status, 76);
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(r.err.find("S3cr3t"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("answered AUTH with an error: ERR unknown command 'AUTH'"), std::string::npos) << r.err;
    Result v = run({"-v", "status", "w", "--redis-timeout", "300ms"}, env);
    EXPECT_EQ(v.err.find("S3cr3t"), std::string::npos) << v.err;
  }
}

TEST(WireFaults, AGrantWithAnUnusableFenceIs76AndIsGivenBack) {
  // Missing, not a number, zero, negative, past 2^53 - 1, an array.
  const std::vector<std::string> fences = {
      "$-1\r\n", "$3\r\nabc\r\n",         "$4\r\n1e30\r\n",           ":0\r\n",
      ":-5\r\n", ":9007199254740992\r\n", ":9223372036854775807\r\n", "*1\r\n:1\r\n"};
  const std::string token = "0123456789abcdef0123456789abcdef";
  for (const std::string outcome : {"acquired", "reentered"}) {
    for (const auto& fence : fences) {
      SCOPED_TRACE(outcome + " " + fence);
      FakeRedis fake("*5\r\n$" + std::to_string(outcome.size()) + "\r\n" + outcome + "\r\n$3\r\ntok\r\n" + fence +
                     ":1\r\n:30000\r\n");
      std::vector<std::string> args{"acquire", "w", "--json", "--redis-timeout", "300ms"};
      if (outcome == "reentered") {
        args.insert(args.end(), {"--token", token});
      }
      Result r = run(args, {{"REDLOCK_URL", fake.url()}});
      EXPECT_EQ(r.status, 76) << r.out << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find("fence"), std::string::npos) << r.err;
      // Given back: a release of the attempt went out after it.
      const std::string asked = fake.received();
      const size_t quiet = asked.find("$5\r\nquiet\r\n");
      EXPECT_NE(quiet, std::string::npos) << asked;
      if (outcome == "reentered") {
        // The level taken with the caller's token, too.
        EXPECT_NE(asked.find(token, asked.find(token) + token.size()), std::string::npos) << asked;
      }
    }
  }
}

TEST(WireFaults, AShortPasswordIsHiddenInAServersWordsButDoesNotMaskRedlocksOwn) {
  // Masked everywhere, the password "1" turned "127.0.0.1" into
  // "***27.0.0.***" in every line cron mails.
  FakeRedis fake("-ERR unknown command 'AUTH', with args beginning with: '1' \r\n");
  Result r =
      run({"acquire", "w", "--redis-timeout", "300ms"}, {{"REDLOCK_URL", fake.url()}, {"REDLOCK_PASSWORD", "1"}});
  EXPECT_EQ(r.status, 76) << r.err;
  EXPECT_NE(r.err.find("Redis at " + fake.url() + " answered AUTH"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("with args beginning with: '***'"), std::string::npos) << r.err;
}

TEST(WireFaults, AWaitWaitsOutAServerThatIsLoadingItsData) {
  // LOADING is a server that will answer soon: 69, and a --wait waits it
  // out rather than ending at its first try.
  FakeRedis fake("-LOADING Redis is loading the dataset in memory\r\n");
  Env env{{"REDLOCK_URL", fake.url()}};
  Result once = run({"acquire", "w", "--redis-timeout", "300ms"}, env);
  EXPECT_EQ(once.status, 69) << once.err;
  EXPECT_TRUE(one_line(once.err)) << once.err;
  EXPECT_NE(once.err.find("loading its data: try again shortly"), std::string::npos) << once.err;
  EXPECT_EQ(once.err.find("is redis-server running there"), std::string::npos) << once.err;
  Result waited = run({"acquire", "w", "--wait", "1500ms", "--redis-timeout", "300ms"}, env);
  EXPECT_EQ(waited.status, 69) << waited.err;
  EXPECT_GT(waited.seconds, 1.2) << waited.err;
  EXPECT_LT(waited.seconds, 5.0) << waited.err;
}
