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

TEST(ClassifyError, AServerThatWillAnswerSoonIsUnavailable) {
  // A wait waits these out; without one they are 69, as a server that does
  // not answer yet.
  for (const char* e : {"CLUSTERDOWN The cluster is down", "LOADING Redis is loading the dataset in memory",
                        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
                        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
                        "TRYAGAIN Multiple keys request during rehashing of slot"}) {
    EXPECT_EQ(classify_error(e), ExitStatus::k_unavailable) << e;
    EXPECT_NE(error_hint(e), "") << e;
  }
}

TEST(ClassifyError, OtherErrorsAre76) {
  for (const char* e :
       {"WRONGTYPE Operation against a key holding the wrong kind of value",
        "ERR user_script:1: Script attempted to access nonexistent global variable",
        "READONLY You can't write against a read only replica.", "BUSYKEY Target key name already exists.",
        "OOM command not allowed when used memory > 'maxmemory'."}) {
    EXPECT_EQ(classify_error(e), ExitStatus::k_protocol) << e;
  }
}

TEST(ErrorHint, SaysWhatToDo) {
  EXPECT_NE(error_hint("READONLY You can't write against a read only replica.").find("give redlock the master"),
            std::string::npos);
  EXPECT_NE(error_hint("OOM command not allowed").find("maxmemory"), std::string::npos);
  EXPECT_NE(error_hint("NOPERM this user has no permissions to run the 'evalsha' command").find("ACL"),
            std::string::npos);
  EXPECT_EQ(error_hint("WRONGTYPE Operation against a key holding the wrong kind of value"), "");
}

}  // namespace
}  // namespace redlock::redis
