// What each error reply from Redis stands for.

#include "redis/reply.hpp"

#include <gtest/gtest.h>

namespace redlock::redis {
namespace {

TEST(ClassifyError, RefusalsAre77) {
  for (const char* e :
       {"NOAUTH Authentication required.", "WRONGPASS invalid username-password pair or user is disabled.",
        "NOPERM this user has no permissions to run the 'eval' command",
        "ERR The user executing the script can't publish to the channel 'redlock:{x}:released'",
        "ERR The user executing the script can't access at least one of the keys",
        "ERR Protocol error: unauthenticated multibulk length"}) {
    EXPECT_EQ(classify_error(e), ExitStatus::k_refused) << e;
  }
}

TEST(ClassifyError, AClusterThatIsDownIsUnavailable) {
  EXPECT_EQ(classify_error("CLUSTERDOWN The cluster is down"), ExitStatus::k_unavailable);
}

TEST(ClassifyError, OtherErrorsAre76) {
  for (const char* e : {"WRONGTYPE Operation against a key holding the wrong kind of value",
                        "ERR user_script:1: Script attempted to access nonexistent global variable",
                        "READONLY You can't write against a read only replica.", "BUSY Redis is busy"}) {
    EXPECT_EQ(classify_error(e), ExitStatus::k_protocol) << e;
  }
}

}  // namespace
}  // namespace redlock::redis
