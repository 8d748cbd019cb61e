// What a Redlock of several servers says when some of them fail: a server
// that refuses redlock while the others make a quorum is named once, in
// words that read as written, and no password ever shows.

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

}  // namespace

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
}
