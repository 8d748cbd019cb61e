// Reading replies within bounds, and what each error reply from Redis
// stands for.

#include "redis/reply.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

namespace redlock::redis {
namespace {

// Feeds `bytes` to a bounded reader `piece` bytes at a time; the replies
// read, and why the reader failed ("" if it did not).
struct Read {
  std::vector<Reply> replies;
  std::string failure;
};
Read read_all(const std::string& bytes, size_t piece = 4096) {
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(create_reader(), free_reader);
  Read out;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    redisReaderFeed(reader.get(), bytes.data() + at, std::min(piece, bytes.size() - at));
    while (true) {
      void* raw = nullptr;
      if (read_reply(reader.get(), &raw) != REDIS_OK) {
        out.failure = reader_failure(reader.get());
        return out;
      }
      if (raw == nullptr) {
        break;
      }
      out.replies.push_back(copy_reply(static_cast<redisReply*>(raw)));
      freeReplyObject(raw);
    }
  }
  return out;
}

std::string bulk(size_t n) {
  return "$" + std::to_string(n) + "\r\n" + std::string(n, 'x') + "\r\n";
}

std::string array_of(size_t n, const std::string& element) {
  std::string out = "*" + std::to_string(n) + "\r\n";
  for (size_t i = 0; i < n; ++i) {
    out += element;
  }
  return out;
}

TEST(BoundedReader, ReadsEveryKindOfReplyWholeOrInPieces) {
  const std::string bytes =
      "+OK\r\n:-42\r\n$3\r\na\r\n\r\n$-1\r\n*-1\r\n*0\r\n-ERR no\r\n*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n+s\r\n";
  for (size_t piece : {size_t{1}, size_t{7}, bytes.size()}) {
    SCOPED_TRACE(piece);
    const Read r = read_all(bytes, piece);
    EXPECT_EQ(r.failure, "");
    ASSERT_EQ(r.replies.size(), 8u);
    EXPECT_EQ(r.replies[0].type, Reply::Type::k_status);
    EXPECT_EQ(r.replies[1].integer, -42);
    EXPECT_EQ(r.replies[2].str, std::string("a\r\n"));
    EXPECT_TRUE(r.replies[3].is_nil());
    EXPECT_TRUE(r.replies[4].is_nil());
    EXPECT_TRUE(r.replies[5].is_array() && r.replies[5].elements.empty());
    EXPECT_TRUE(r.replies[6].is_error() && r.replies[6].str == "ERR no");
    const Reply& nested = r.replies[7];
    ASSERT_EQ(nested.elements.size(), 3u);
    EXPECT_EQ(nested.elements[0].str, "a");
    ASSERT_EQ(nested.elements[1].elements.size(), 2u);
    EXPECT_EQ(nested.elements[1].elements[0].integer, 1);
    EXPECT_TRUE(nested.elements[1].elements[1].is_nil());
    EXPECT_EQ(nested.elements[2].type, Reply::Type::k_status);
  }
}

TEST(BoundedReader, RefusesWhatIsPastABoundAsSoonAsItIsAnnounced) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"*585477708\r\n", "an array of 585477708 elements"},
      {"*2147483647\r\n", "an array of 2147483647 elements"},
      {"*3\r\n:1\r\n*16382\r\n", "an array of 16382 elements"},  // 1 + 3 + 16382 > 16384
      {"$999999999\r\n", "a string of 999999999 bytes"},
      {"*2\r\n" + bulk(1 << 20) + "$1048577\r\n", "a string of 1048577 bytes"},  // 2 MiB in all
      {"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n", "arrays nested 5 deep"},
  };
  for (const auto& [bytes, what] : rows) {
    SCOPED_TRACE(what);
    const Read r = read_all(bytes);
    EXPECT_TRUE(r.replies.empty());
    EXPECT_EQ(r.failure.find("an unexpected reply: " + what + ", past "), 0u) << r.failure;
    EXPECT_NE(r.failure.find("(is it a Redis server?)"), std::string::npos) << r.failure;
  }
}

TEST(BoundedReader, TakesRepliesUpToItsBoundsEachReplyAfresh) {
  const std::string most = array_of(k_max_reply_elements - 1, ":1\r\n");
  const Read r = read_all(most + most + bulk(k_max_reply_bytes) + bulk(k_max_reply_bytes) + "*1\r\n*1\r\n*1\r\n*0\r\n" +
                          array_of(2, bulk(k_max_reply_bytes / 2)));
  EXPECT_EQ(r.failure, "");
  ASSERT_EQ(r.replies.size(), 6u);
  EXPECT_EQ(r.replies[1].elements.size(), k_max_reply_elements - 1);
  EXPECT_EQ(r.replies[3].str.size(), k_max_reply_bytes);
  EXPECT_TRUE(r.replies[4].elements[0].elements[0].elements[0].is_array());
  EXPECT_EQ(r.replies[5].elements[1].str.size(), k_max_reply_bytes / 2);
}

TEST(BoundedReader, StopsHoldingALineThatNeverEnds) {
  for (const std::string& start : {std::string("+"), std::string(":1"), std::string("$12")}) {
    SCOPED_TRACE(start);
    const Read r = read_all(start + std::string(k_max_reply_bytes + 64, '7'), 1 << 16);
    EXPECT_EQ(r.failure.find("an unexpected reply: more than " + std::to_string(k_max_reply_bytes) + " bytes"), 0u)
        << r.failure;
  }
}

TEST(BoundedReader, SaysWhatHiredisFoundMalformed) {
  const Read r = read_all("+OK\r\n?what\r\n");
  EXPECT_EQ(r.replies.size(), 1u);
  EXPECT_EQ(r.failure.find("a malformed reply: Protocol error"), 0u) << r.failure;
}

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
