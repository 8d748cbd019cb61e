// Reading the lock scripts' answers (lock/answers): each outcome a script
// can give, and replies of any other shape as "unexpected", never a vote.

#include "lock/answers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redlock::lock {
namespace {

using redis::Reply;

Reply str(const std::string& s) {
  Reply r;
  r.type = Reply::Type::k_string;
  r.str = s;
  return r;
}

Reply num(long long n) {
  Reply r;
  r.type = Reply::Type::k_integer;
  r.integer = n;
  return r;
}

Reply arr(std::vector<Reply> elements) {
  Reply r;
  r.type = Reply::Type::k_array;
  r.elements = std::move(elements);
  return r;
}

TEST(Answers, AcquireReadsEveryOutcome) {
  auto granted = read_acquire_answer(arr({str("acquired"), str("tok"), num(42), num(1), num(30000)}));
  ASSERT_TRUE(granted);
  EXPECT_EQ(granted->kind, AcquireVote::Kind::k_granted);
  EXPECT_EQ(granted->fence, 42);
  EXPECT_EQ(granted->count, 1);
  EXPECT_FALSE(granted->failure);

  auto again = read_acquire_answer(arr({str("reentered"), str("tok"), str("42"), num(3), num(30000)}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->kind, AcquireVote::Kind::k_reentered);
  EXPECT_EQ(again->fence, 42) << "a fence sent as a string reads the same";
  EXPECT_EQ(again->count, 3);

  auto busy = read_acquire_answer(arr({str("busy"), num(1500), str("web1"), str("77")}));
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->kind, AcquireVote::Kind::k_busy);
  EXPECT_EQ(busy->ttl_left.count(), 1500);
  EXPECT_EQ(busy->host, "web1");
  EXPECT_EQ(busy->pid, "77");

  auto mismatch = read_acquire_answer(arr({str("mismatch"), str("semaphore"), str("3")}));
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->kind, AcquireVote::Kind::k_mismatch);
  EXPECT_EQ(mismatch->held_mode, "semaphore");
  EXPECT_EQ(mismatch->held_limit, "3");

  auto upgrade = read_acquire_answer(arr({str("upgrade"), str("shared"), str("")}));
  ASSERT_TRUE(upgrade);
  EXPECT_EQ(upgrade->kind, AcquireVote::Kind::k_upgrade);

  auto foreign = read_acquire_answer(arr({str("foreign"), str("list")}));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->kind, AcquireVote::Kind::k_foreign);
  EXPECT_EQ(foreign->foreign_type, "list");
}

TEST(Answers, ANegativeTtlFromABusyServerReadsAsNone) {
  auto busy = read_acquire_answer(arr({str("busy"), num(-2), str(""), str("")}));
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->ttl_left.count(), 0);
}

TEST(Answers, RepliesOfAnotherShapeAreUnexpected) {
  const std::vector<Reply> odd = {
      Reply{},                                              // nil
      str("acquired"),                                      // not an array
      arr({}),                                              // empty
      arr({arr({str("acquired")})}),                        // the outcome is not a text
      arr({str("acquired"), str("tok")}),                   // too short for its outcome
      arr({str("busy"), num(5)}),                           // too short
      arr({str("renewed"), num(5)}),                        // another script's outcome
      arr({str("something new"), num(1), num(2), num(3)}),  // unknown
  };
  for (const Reply& r : odd) {
    EXPECT_FALSE(read_acquire_answer(r));
  }
  EXPECT_FALSE(read_renew_answer(arr({str("renewed"), num(5)})));
  EXPECT_FALSE(read_renew_answer(arr({str("acquired"), str("t"), num(1), num(1), num(1)})));
  EXPECT_FALSE(read_release_answer(arr({str("busy")})));
  EXPECT_FALSE(read_release_answer(str("released")));
  ServerView view;
  EXPECT_FALSE(read_inspect_answer(arr({str("hash"), num(1)}), view));
}

TEST(Answers, RenewReadsTheModeAndKeepsTheLimitInRange) {
  auto plain = read_renew_answer(arr({str("renewed"), num(30000), str("exclusive"), str("1")}));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->kind, RenewVote::Kind::k_renewed);
  EXPECT_EQ(plain->claim.mode, Claim::Mode::k_exclusive);

  auto sem = read_renew_answer(arr({str("renewed"), num(30000), str("semaphore"), str("99999999999")}));
  ASSERT_TRUE(sem);
  EXPECT_EQ(sem->claim.mode, Claim::Mode::k_semaphore);
  EXPECT_EQ(sem->claim.limit, 1'000'000);

  auto shared = read_renew_answer(arr({str("renewed"), num(30000), str("shared"), str("-5")}));
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->claim.mode, Claim::Mode::k_shared);
  EXPECT_EQ(shared->claim.limit, 1);

  auto gone = read_renew_answer(arr({str("notheld")}));
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->kind, RenewVote::Kind::k_not_held);
}

TEST(Answers, ReleaseReadsEveryOutcome) {
  EXPECT_EQ(read_release_answer(arr({str("released"), num(1), num(0)}))->kind, ReleaseAnswer::Kind::k_released);
  EXPECT_EQ(read_release_answer(arr({str("decremented"), num(1), num(1)}))->kind, ReleaseAnswer::Kind::k_decremented);
  EXPECT_EQ(read_release_answer(arr({str("notheld")}))->kind, ReleaseAnswer::Kind::k_not_held);
  auto foreign = read_release_answer(arr({str("foreign")}));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->kind, ReleaseAnswer::Kind::k_foreign);
  EXPECT_EQ(foreign->foreign_type, "?");
}

TEST(Answers, InspectReadsAPlainHolder) {
  Reply fields =
      arr({str("schema"), str("redlock/1"), str("token"), str("t1"), str("count"), str("1"), str("fence"), str("7"),
           str("host"), str("h"), str("pid"), str("9"), str("cmd"), str("c"), str("since_ms"), str("100")});
  ServerView view;
  ASSERT_TRUE(read_inspect_answer(arr({str("hash"), num(1000), num(7), num(2500), fields}), view));
  EXPECT_EQ(view.type, "hash");
  EXPECT_EQ(view.now_ms, 1000);
  EXPECT_EQ(view.ttl_ms, 2500);
  ASSERT_EQ(view.holders.size(), 1u);
  EXPECT_EQ(view.holders[0].token, "t1");
  EXPECT_EQ(view.holders[0].fence, 7);
}

TEST(Answers, BreakReadsWhomTheLockWasTakenFrom) {
  Reply holder = arr({str("t1"), str("web1"), num(42), str("deploy.sh"), num(100), num(7), num(1)});
  Reply short_holder = arr({str("t2"), str("web2")});
  auto broken =
      read_break_answer(arr({str("broken"), str("exclusive"), num(1), num(5000), arr({holder, short_holder})}));
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->kind, BreakVote::Kind::k_broken);
  ASSERT_EQ(broken->holders.size(), 1u) << "a holder entry too short to read is left out";
  EXPECT_EQ(broken->holders[0].host, "web1");
  EXPECT_EQ(broken->holders[0].pid, 42);
  EXPECT_EQ(broken->holders[0].fence, 7);
  EXPECT_EQ(read_break_answer(arr({str("free")}))->kind, BreakVote::Kind::k_free);
  EXPECT_EQ(read_break_answer(arr({str("foreign"), str("zset")}))->foreign_type, "zset");
  EXPECT_FALSE(read_break_answer(arr({str("broken"), str("exclusive")})));
}

}  // namespace
}  // namespace redlock::lock
