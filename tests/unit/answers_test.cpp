// Reading the lock scripts' answers (lock/answers): each outcome a script
// can give, and replies of any other shape as "unexpected", never a vote.

#include "lock/answers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "lock/layout.hpp"

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
  EXPECT_EQ(mismatch->held_mode, Claim::Mode::k_semaphore);
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

TEST(Answers, AGrantWithAnUnusableFenceIsAFailedVoteThatSaysWhatWasTaken) {
  const std::vector<std::pair<Reply, std::string>> bad = {
      {num(0), "'0'"},
      {num(-7), "'-7'"},
      {num(9'007'199'254'740'992), "'9007199254740992'"},  // 2^53: Lua's doubles skip integers from here
      {num(9'223'372'036'854'775'807), "'9223372036854775807'"},
      {str(""), "''"},
      {str("abc"), "'abc'"},
      {str("1e30"), "'1e30'"},
      {str("1.5"), "'1.5'"},
      {str("99999999999999999999"), "'99999999999999999999'"},
      {Reply{}, "nil"},
      {arr({num(5)}), "an array"},
  };
  for (const auto& [fence, shown] : bad) {
    for (const char* outcome : {"acquired", "reentered"}) {
      auto v = read_acquire_answer(arr({str(outcome), str("tok"), fence, num(1), num(30000)}));
      ASSERT_TRUE(v) << outcome << " " << shown;
      EXPECT_EQ(v->kind, AcquireVote::Kind::k_failed) << outcome << " " << shown;
      EXPECT_EQ(v->taken,
                std::string(outcome) == "acquired" ? AcquireVote::Kind::k_granted : AcquireVote::Kind::k_reentered);
      EXPECT_EQ(v->bad_fence, shown);
      EXPECT_EQ(v->fence, 0);
    }
  }
  // No fence at all: the outcome says the lock was taken all the same.
  auto none = read_acquire_answer(arr({str("acquired"), str("tok")}));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->kind, AcquireVote::Kind::k_failed);
  EXPECT_EQ(none->taken, AcquireVote::Kind::k_granted);
  EXPECT_EQ(none->bad_fence, "none");
  // A long answer is cut short for the error line.
  auto long_one = read_acquire_answer(arr({str("acquired"), str("tok"), str(std::string(500, 'x')), num(1), num(1)}));
  ASSERT_TRUE(long_one);
  EXPECT_LT(long_one->bad_fence.size(), 50u);
}

TEST(Answers, FencesRunFromOneToTwoToTheFiftyThreeMinusOne) {
  EXPECT_EQ(reply_fence(num(1)), 1);
  EXPECT_EQ(reply_fence(num(k_max_fence)), k_max_fence);
  EXPECT_EQ(reply_fence(str("9007199254740991")), 9'007'199'254'740'991);
  EXPECT_EQ(reply_fence(str("1796057741501083")), 1'796'057'741'501'083);
  EXPECT_FALSE(reply_fence(num(k_max_fence + 1)));
  EXPECT_FALSE(reply_fence(str("9007199254740992")));
  EXPECT_FALSE(reply_fence(num(0)));
  EXPECT_FALSE(reply_fence(str("-1")));
  EXPECT_FALSE(reply_fence(str(" 12")));
  Reply status;
  status.type = Reply::Type::k_status;
  status.str = "12";
  EXPECT_FALSE(reply_fence(status)) << "only what the scripts send: an integer or a bulk string";
}

TEST(Answers, BreakShowsAnUnusableFenceAsNone) {
  auto broken = read_break_answer(
      arr({str("broken"), str("exclusive"), str("1"), str("2000"),
           arr({arr({str("t"), str("h"), str("1"), str(""), str("1000"), str("9223372036854775807"), str("1")}),
                arr({str("u"), str("h"), str("2"), str(""), str("1000"), str("1e30"), str("1")})})}));
  ASSERT_TRUE(broken);
  ASSERT_EQ(broken->holders.size(), 2u);
  EXPECT_EQ(broken->holders[0].fence, 0);
  EXPECT_EQ(broken->holders[1].fence, 0);
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

TEST(Answers, AModeReadsBackFromItsNameAndAnyOtherNameIsExclusive) {
  for (Claim::Mode m : {Claim::Mode::k_exclusive, Claim::Mode::k_semaphore, Claim::Mode::k_shared}) {
    EXPECT_EQ(mode_named(mode_name(m)), m) << mode_name(m);
  }
  EXPECT_EQ(mode_named(""), Claim::Mode::k_exclusive);
  EXPECT_EQ(mode_named("Shared"), Claim::Mode::k_exclusive);
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
