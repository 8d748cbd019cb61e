// Reading a lock hash back for `status`: redlock's own layouts, and anything
// else as foreign, never a crash or undefined behaviour.

#include "lock/layout.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace redlock::lock {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

ServerView read(const Fields& fields, long long now_ms = 1'000'000, long long ttl_ms = 5000) {
  ServerView v;
  v.type = "hash";
  v.now_ms = now_ms;
  v.ttl_ms = ttl_ms;
  read_holders(v, fields);
  return v;
}

TEST(Layout, APlainLockWithTheSchemaMarkerHasOneHolder) {
  ServerView v = read({{"schema", "redlock/1"},
                       {"token", "t"},
                       {"count", "2"},
                       {"fence", "1796057741501083"},
                       {"host", "h"},
                       {"pid", "7"},
                       {"cmd", "c"},
                       {"since_ms", "999000"}});
  ASSERT_FALSE(v.foreign);
  ASSERT_EQ(v.holders.size(), 1u);
  EXPECT_EQ(v.mode, Claim::Mode::k_exclusive);
  EXPECT_EQ(v.holders[0].fence, 1796057741501083);
  EXPECT_EQ(v.holders[0].count, 2);
  EXPECT_EQ(v.holders[0].ttl_ms, 5000);
}

TEST(Layout, WithoutTheSchemaMarkerItIsForeign) {
  EXPECT_TRUE(read({{"token", "t"}, {"count", "1"}}).foreign);
  EXPECT_TRUE(read({{"mode", "shared"}, {"owner", "bob"}}).foreign);
  EXPECT_TRUE(read({{"schema", "redlock/2"}, {"token", "t"}, {"count", "1"}}).foreign);
}

TEST(Layout, SemaphoreHoldersTakeFencesAsStringsOrNumbers) {
  ServerView v = read(
      {{"schema", "redlock/1"},
       {"mode", "semaphore"},
       {"limit", "2"},
       {"h:a", R"({"expiry":1003000,"fence":"1796057741501083","count":1,"since":1,"host":"h","pid":1,"cmd":"c"})"},
       {"h:b", R"({"expiry":1004000,"fence":12,"count":1,"since":2,"host":"h","pid":2,"cmd":"c"})"},
       {"h:gone", R"({"expiry":900000,"fence":3,"count":1,"since":0,"host":"h","pid":3,"cmd":"c"})"}});
  ASSERT_FALSE(v.foreign);
  ASSERT_EQ(v.holders.size(), 2u);
  EXPECT_EQ(v.limit, 2);
}

TEST(Layout, AFenceRedlockCouldNotHaveHandedOutIsShownAsNone) {
  // Past 2^53 - 1 a fence is no longer exact in the scripts' Lua numbers;
  // below 1, or not a whole number, it is no fence at all.
  for (const std::string bad : {"9223372036854775807", "9007199254740992", "1e30", "abc", "0", "-3", ""}) {
    ServerView plain = read({{"schema", "redlock/1"}, {"token", "t"}, {"count", "1"}, {"fence", bad}});
    ASSERT_EQ(plain.holders.size(), 1u) << bad;
    EXPECT_EQ(plain.holders[0].fence, 0) << bad;
    ServerView sem =
        read({{"schema", "redlock/1"},
              {"mode", "semaphore"},
              {"limit", "2"},
              {"h:a", R"({"expiry":1003000,"fence":")" + bad + R"(","count":1,"since":1,"host":"h","pid":1})"}});
    ASSERT_EQ(sem.holders.size(), 1u) << bad;
    EXPECT_EQ(sem.holders[0].fence, 0) << bad;
  }
  for (const std::string bad : {"9223372036854775807", "1e30", "-1", "0"}) {
    ServerView sem = read({{"schema", "redlock/1"},
                           {"mode", "shared"},
                           {"h:a", R"({"expiry":1003000,"fence":)" + bad + R"(,"count":1,"since":1})"}});
    ASSERT_EQ(sem.holders.size(), 1u) << bad;
    EXPECT_EQ(sem.holders[0].fence, 0) << bad;
  }
  EXPECT_EQ(parse_fence("9007199254740991"), k_max_fence);
  EXPECT_FALSE(parse_fence("9007199254740992"));
}

TEST(Layout, EntriesRedlockWouldNotWriteMakeTheKeyForeign) {
  for (const std::string& entry :
       {std::string("not json"), std::string("[1,2]"), std::string(R"({"host":5})"),
        std::string(R"({"expiry":"-9223372036854775808","fence":1})"), std::string(R"({"expiry":{"a":1}})")}) {
    SCOPED_TRACE(entry);
    ServerView v = read({{"schema", "redlock/1"}, {"mode", "shared"}, {"limit", "0"}, {"h:x", entry}},
                        9'000'000'000'000'000'000LL);
    EXPECT_TRUE(v.foreign);
    EXPECT_TRUE(v.holders.empty());
  }
}

TEST(Layout, AHolderEntryWithoutATokenMakesTheKeyForeign) {
  ServerView v = read({{"schema", "redlock/1"},
                       {"mode", "shared"},
                       {"limit", "0"},
                       {"h:", R"({"expiry":1003000,"fence":1,"count":1,"since":1,"host":"h","pid":1,"cmd":"c"})"}});
  EXPECT_TRUE(v.foreign);
  EXPECT_TRUE(v.holders.empty());
}

TEST(Layout, OneMessageForAForeignKey) {
  EXPECT_EQ(foreign_message("job", "list", ""),
            "the key for 'job' is not a redlock lock (it holds a list); redlock leaves it alone: remove it or use "
            "another --prefix");
}

}  // namespace
}  // namespace redlock::lock
