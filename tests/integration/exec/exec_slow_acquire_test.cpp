// exec starts CMD only with enough of the lock's validity left: when a slow
// acquire leaves less than --kill-after plus one renewal period, CMD would
// be signalled at once. exec then tries again within --wait, or exits 69
// without starting it.

#include <gtest/gtest.h>

#include <algorithm>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

// CMD records that it ran.
const char* const k_ran = "echo ran >> \"$D/ran\"\n";

// Pauses the server's clients for `ms`: the next acquire is answered late.
void slow_down(const RedisServer& redis, int ms) {
  ASSERT_EQ(redis.cmd({"CLIENT", "PAUSE", std::to_string(ms)}).text(), "OK");
}

}  // namespace

// --ttl 600ms: a renewal every 200 ms, --kill-after at most 200 ms, so CMD
// needs more than 400 ms of validity; an acquire answered ~450 ms late
// leaves about 150 ms.
TEST(ExecSlowAcquire, TooLittleValidityLeftExits69WithoutStartingTheCommand) {
  ExecFixture f;
  slow_down(f.redis, 450);
  Result r = run({"exec", "--ttl", "600ms", "job", "--", "sh", f.script(k_ran)}, f.env());
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_FALSE(file_exists(f.path("ran"))) << "the command was started with too little of the lock left: " << r.err;
  EXPECT_NE(r.err.find("not started"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // The token was given back at once, not left to expire.
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(ExecSlowAcquire, TooLittleValidityLeftIsRetriedWithinWait) {
  ExecFixture f;
  slow_down(f.redis, 450);
  Result r = run({"exec", "--ttl", "600ms", "--wait", "5s", "job", "--", "sh", f.script(k_ran)}, f.env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(f.path("ran")), "ran\n") << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}
