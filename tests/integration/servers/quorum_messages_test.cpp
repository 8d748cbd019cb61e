// What a Redlock of several servers says when some of them fail: one line
// for a failure of redlock's own (man redlock: EXIT STATUS), the failing
// servers named in it; a server that refuses redlock while the others make
// a quorum is named once, in words that read as written, and no password
// ever shows.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "lock_support.hpp"

using namespace redlock::test;

namespace {

RedisServer::Options with_password(const std::string& password) {
  RedisServer::Options o;
  o.requirepass = password;
  return o;
}

std::string closed_url() {
  return "redis://127.0.0.1:" + std::to_string(free_port());
}

size_t lines_in(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(QuorumMessages, OneServerDownAndOneRefusingIsOneLine) {
  RedisServer live;
  RedisServer locked(with_password("s3cret-pw"));
  const std::vector<std::string> args = {"-r", live.url(), "-r", closed_url(), "-r", locked.url(), "acquire", "w4"};
  Result r = run(args, {{"REDLOCK_URL", ""}});
  EXPECT_EQ(r.status, 77) << r.err;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_NE(r.err.find("only 1 of 3 Redis servers answered"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(locked.url() + " requires a password"), std::string::npos) << r.err;
  EXPECT_EQ(live.cmd({"EXISTS", lock_key("w4")}).integer, 0);

  // -v still names each server's answer on a line of its own.
  std::vector<std::string> verbose = args;
  verbose.insert(verbose.begin(), "-v");
  Result v = run(verbose, {{"REDLOCK_URL", ""}});
  EXPECT_EQ(v.status, 77) << v.err;
  EXPECT_GT(lines_in(v.err), 1u) << v.err;
}

TEST(QuorumMessages, TwoOfThreeRefusingIsOneLine) {
  RedisServer live;
  RedisServer a(with_password("s3cret-pw"));
  RedisServer b(with_password("s3cret-pw"));
  Result r = run({"-r", a.url(), "-r", live.url(), "-r", b.url(), "acquire", "w5"}, {{"REDLOCK_URL", ""}});
  EXPECT_EQ(r.status, 77) << r.err;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_NE(r.err.find(a.url()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(b.url()), std::string::npos) << r.err;
}

// Not a failure of the command: the lock is held by the two others, so the
// third server's refusal is said (even under -q), and its hint reads as
// redlock wrote it.
TEST(QuorumMessages, ARefusingServerInAWorkingQuorumIsNamedWithItsHintIntact) {
  RedisServer a;
  RedisServer b;
  RedisServer locked(with_password("s3cret-pw"));
  for (const char* quiet : {"", "-q"}) {
    SCOPED_TRACE(quiet);
    std::vector<std::string> args = {"-r", a.url(), "-r", b.url(), "-r", locked.url(), "acquire", "--ttl", "2s", "ok"};
    if (*quiet) {
      args.emplace_back(quiet);
    }
    Result r = run(args, {{"REDLOCK_URL", ""}});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(one_line(r.err));
    EXPECT_NE(r.err.find(locked.url() + " requires a password: give it with --password-file FILE, $REDLOCK_PASSWORD or "
                                        "$REDLOCK_PASSWORD_FILE; it does not count towards the quorum"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("***"), std::string::npos) << r.err;
    run({"-r", a.url(), "-r", b.url(), "release", "ok", "--token", first_line(r.out)}, {{"REDLOCK_URL", ""}});
  }
}

TEST(QuorumMessages, AWrongPasswordIsNamedWithItsHintIntactAndNeverShown) {
  RedisServer a;
  RedisServer b;
  RedisServer locked(with_password("right-pw"));
  std::string wrong = locked.url();
  wrong.insert(wrong.find("//") + 2, ":hunter3@");
  Result r = run({"-r", a.url(), "-r", b.url(), "-r", wrong, "acquire", "wrong"}, {{"REDLOCK_URL", ""}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(one_line(r.err));
  EXPECT_NE(r.err.find("(check the password and user: --password-file or $REDLOCK_PASSWORD)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("hunter3"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("hunter3"), std::string::npos) << r.out;

  // Failing as a whole, the one line never shows it either.
  Result f = run({"-r", a.url(), "-r", wrong, "-r", closed_url(), "acquire", "wrong2"}, {{"REDLOCK_URL", ""}});
  EXPECT_EQ(f.status, 77) << f.err;
  EXPECT_TRUE(one_line(f.err));
  EXPECT_EQ(f.err.find("hunter3"), std::string::npos) << f.err;
}
