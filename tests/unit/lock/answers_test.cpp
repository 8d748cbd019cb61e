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
  EXPECT_FALSE(busy->held) << "a short busy answer says nothing of how long it is held";
  EXPECT_FALSE(busy->line_full);

  auto full = read_acquire_answer(arr({str("busy"), num(1500), str("web1"), str("77"), num(0), num(4), num(0),
                                       str("./job"), num(1), str(""), num(7200000), str("full")}));
  ASSERT_TRUE(full);
  ASSERT_TRUE(full->held);
  EXPECT_EQ(full->held->count(), 7200000);
  EXPECT_TRUE(full->line_full);
  EXPECT_EQ(full->ahead, 4);
  auto unknown = read_acquire_answer(
      arr({str("busy"), num(0), str(""), str(""), num(0), num(1), num(0), str(""), num(0), str(""), num(-1), str("")}));
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->held) << "-1: nobody holds it";
  EXPECT_FALSE(unknown->line_full);

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
  EXPECT_FALSE(read_release_answer(arr({str("released"), num(1)}))) << "too short";
  EXPECT_FALSE(read_raise_answer(arr({str("busy"), num(1)})));
  EXPECT_FALSE(read_inspect_answer(arr({str("hash"), num(1)})));
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
  auto released = read_release_answer(arr({str("released"), num(3), num(0)}));
  ASSERT_TRUE(released);
  EXPECT_EQ(released->kind, ReleaseVote::Kind::k_released);
  EXPECT_EQ(released->levels, 3);
  EXPECT_EQ(released->kept.count(), 0);
  auto decremented = read_release_answer(arr({str("decremented"), num(1), num(1)}));
  ASSERT_TRUE(decremented);
  EXPECT_EQ(decremented->kind, ReleaseVote::Kind::k_decremented);
  EXPECT_EQ(decremented->levels, 1);
  EXPECT_EQ(decremented->kept.count(), 0) << "the third element is the levels left, not a time";
  auto kept = read_release_answer(arr({str("kept"), num(2), str("4500")}));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->kind, ReleaseVote::Kind::k_kept);
  EXPECT_EQ(kept->levels, 2);
  EXPECT_EQ(kept->kept.count(), 4500);
  EXPECT_EQ(read_release_answer(arr({str("kept"), num(1), num(-5)}))->kept.count(), 0) << "never a negative time";
  EXPECT_EQ(read_release_answer(arr({str("notheld")}))->kind, ReleaseVote::Kind::k_not_held);
  auto floor = read_release_answer(arr({str("floor"), num(2)}));
  ASSERT_TRUE(floor);
  EXPECT_EQ(floor->kind, ReleaseVote::Kind::k_floor);
  EXPECT_EQ(floor->levels, 2) << "the levels held, none dropped";
  auto foreign = read_release_answer(arr({str("foreign")}));
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->kind, ReleaseVote::Kind::k_foreign);
  EXPECT_EQ(foreign->foreign_type, "?");
  EXPECT_FALSE(read_release_answer(arr({str("raised"), num(1)})));
  for (const auto& v : {released, decremented, kept, foreign}) {
    EXPECT_FALSE(v->failure);
  }
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
  auto read = read_inspect_answer(arr({str("hash"), num(1000), num(7), num(2500), fields}));
  ASSERT_TRUE(read);
  const ServerView& view = *read;
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

// The per-server tally and what it decides on its own: which server gave no
// usable answer, and why.

Answer said(Reply reply) {
  Answer a;
  a.reply = std::move(reply);
  return a;
}

Answer failed(ExitStatus status, const std::string& message) {
  Answer a;
  a.failure = redis::Failure{status, message};
  return a;
}

const std::vector<std::string> k_servers = {"redis://a:1", "redis://b:2", "redis://c:3"};

TEST(Tally, KeepsAFailureReadsAReplyAndCallsAnUnknownReplyUnexpected) {
  const std::vector<Answer> answers = {failed(ExitStatus::k_refused, "NOAUTH at a"), said(arr({str("free")})),
                                       said(arr({str("something new")}))};
  const auto votes = tally<BreakVote>(answers, k_servers, "break", read_break_answer);
  ASSERT_EQ(votes.size(), 3u);
  ASSERT_TRUE(votes[0].failure);
  EXPECT_EQ(votes[0].failure->status, ExitStatus::k_refused);
  EXPECT_EQ(votes[0].failure->message, "NOAUTH at a");
  EXPECT_EQ(votes[0].kind, BreakVote::Kind::k_failed);
  EXPECT_FALSE(votes[1].failure);
  EXPECT_EQ(votes[1].kind, BreakVote::Kind::k_free);
  ASSERT_TRUE(votes[2].failure);
  EXPECT_EQ(votes[2].kind, BreakVote::Kind::k_failed);
  EXPECT_EQ(votes[2].failure->status, ExitStatus::k_protocol);
  EXPECT_NE(votes[2].failure->message.find("Redis at redis://c:3 sent an unexpected reply to break"), std::string::npos)
      << votes[2].failure->message;

  const auto failures = failures_of(votes);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].status, ExitStatus::k_refused);
  EXPECT_EQ(failures[1].status, ExitStatus::k_protocol);
}

TEST(Tally, AcquireVotesSayWhyAGrantDoesNotCount) {
  const std::vector<Answer> answers = {
      said(arr({str("acquired"), str("tok"), str("abc"), num(1), num(30000)})),  // an unusable fence
      said(arr({str("reentered"), str("tok"), num(7), num(2), num(30000)})),     // replicas short, below
      said(arr({str("busy"), num(1500), str("web1"), str("77")})),               // replicas short, but busy
  };
  std::vector<Answer> short_of_replicas = answers;
  short_of_replicas[1].replicas_short = true;
  short_of_replicas[2].replicas_short = true;
  const auto votes = acquire_votes(short_of_replicas, k_servers, 2);
  ASSERT_EQ(votes.size(), 3u);

  EXPECT_EQ(votes[0].kind, AcquireVote::Kind::k_failed);
  EXPECT_EQ(votes[0].taken, AcquireVote::Kind::k_granted) << "what the server took is still given back";
  ASSERT_TRUE(votes[0].failure);
  EXPECT_EQ(votes[0].failure->status, ExitStatus::k_protocol);
  EXPECT_NE(
      votes[0].failure->message.find("Redis at redis://a:1 granted the lock with a fence redlock cannot use ('abc'"),
      std::string::npos)
      << votes[0].failure->message;

  EXPECT_EQ(votes[1].kind, AcquireVote::Kind::k_failed);
  EXPECT_EQ(votes[1].taken, AcquireVote::Kind::k_failed);
  ASSERT_TRUE(votes[1].failure);
  EXPECT_EQ(votes[1].failure->status, ExitStatus::k_unavailable);
  EXPECT_NE(votes[1].failure->message.find("fewer than 2 replicas acknowledged the lock"), std::string::npos);
  EXPECT_NE(votes[1].failure->message.find(k_replicas_hint), std::string::npos);

  EXPECT_EQ(votes[2].kind, AcquireVote::Kind::k_busy) << "only a hold needs its replicas";
  EXPECT_FALSE(votes[2].failure);
}

TEST(Tally, AServerThatRefusesWaitIsNamedAsSuch) {
  std::vector<Answer> answers = {said(arr({str("acquired"), str("tok"), num(7), num(1), num(30000)})),
                                 said(arr({str("acquired"), str("tok"), num(7), num(1), num(30000)}))};
  for (auto& a : answers) {
    a.replicas_short = true;
  }
  answers[0].wait_refused = "ERR unknown command 'WAIT', with args beginning with: '1' '500' ";
  answers[1].wait_refused = "NOPERM this user has no permissions to run the 'wait' command";
  const auto votes = acquire_votes(answers, k_servers, 1);
  ASSERT_EQ(votes.size(), 2u);
  for (const auto& v : votes) {
    EXPECT_EQ(v.kind, AcquireVote::Kind::k_failed);
    ASSERT_TRUE(v.failure);
    EXPECT_NE(v.failure->message.find("refused WAIT, which --min-replicas 1 needs"), std::string::npos)
        << v.failure->message;
    EXPECT_EQ(v.failure->message.find("fewer than"), std::string::npos) << v.failure->message;
    EXPECT_TRUE(v.failure->answered);
  }
  EXPECT_EQ(votes[0].failure->status, ExitStatus::k_protocol);
  EXPECT_NE(votes[0].failure->message.find("drop --min-replicas"), std::string::npos);
  EXPECT_EQ(votes[1].failure->status, ExitStatus::k_refused) << "an ACL's refusal is 77";
  EXPECT_NE(votes[1].failure->message.find("+wait"), std::string::npos);
}

TEST(Tally, RenewVotesOfAMovedServerAreNotHeldAndShortReplicasFail) {
  const std::vector<Answer> answers = {failed(ExitStatus::k_unavailable, "not asked"),
                                       said(arr({str("renewed"), num(30000), str("exclusive"), str("1")})),
                                       said(arr({str("notheld")}))};
  std::vector<Answer> short_of_replicas = answers;
  short_of_replicas[1].replicas_short = true;
  short_of_replicas[2].replicas_short = true;
  const auto votes = renew_votes(short_of_replicas, k_servers, 1, {true, false, false});
  ASSERT_EQ(votes.size(), 3u);
  EXPECT_EQ(votes[0].kind, RenewVote::Kind::k_not_held) << "the sentinels failed over: the lock there is gone";
  EXPECT_FALSE(votes[0].failure);
  EXPECT_EQ(votes[1].kind, RenewVote::Kind::k_failed);
  ASSERT_TRUE(votes[1].failure);
  EXPECT_NE(votes[1].failure->message.find("fewer than 1 replica acknowledged the renewal"), std::string::npos);
  EXPECT_EQ(votes[2].kind, RenewVote::Kind::k_not_held);
  EXPECT_FALSE(votes[2].failure);
}

TEST(Tally, InspectViewsNameEachServerAndShowWhyOneHasNoView) {
  const std::vector<Answer> answers = {said(arr({str("none"), num(1000), num(0), num(-2), arr({})})),
                                       failed(ExitStatus::k_unavailable, "connection refused"),
                                       said(arr({str("hash"), num(1)}))};
  std::vector<redis::Failure> failures;
  const auto views = inspect_views(answers, k_servers, failures);
  ASSERT_EQ(views.size(), 3u);
  for (size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(views[i].endpoint, k_servers[i]);
  }
  EXPECT_FALSE(views[0].error);
  EXPECT_EQ(views[0].type, "none");
  EXPECT_EQ(views[1].error, "connection refused");
  ASSERT_TRUE(views[2].error);
  EXPECT_NE(views[2].error->find("unexpected reply to inspect"), std::string::npos);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[1].status, ExitStatus::k_protocol);
}

TEST(Answers, AReplyOfManyLocksGivesEachLocksOwnReply) {
  const Reply first = arr({str("none"), str("1"), str(""), num(-2), arr({})});
  const Reply second = arr({str("hash"), str("1"), str("5"), num(900), arr({str("token"), str("T")})});
  const auto both = per_lock_replies(arr({str("locks"), first, second}), "locks", 2);
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[1].elements[3].integer, 900);
  // A reply that was full answers for the first locks only: the rest are asked again.
  const auto one = per_lock_replies(arr({str("locks"), first}), "locks", 2);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
  // No lock at all, more locks than asked for, another outcome or shape: unexpected.
  EXPECT_FALSE(per_lock_replies(arr({str("locks")}), "locks", 2));
  EXPECT_FALSE(per_lock_replies(arr({str("locks"), first, second, first}), "locks", 2));
  EXPECT_FALSE(per_lock_replies(arr({str("lines"), first}), "locks", 2));
  EXPECT_FALSE(per_lock_replies(str("locks"), "locks", 2));
  EXPECT_FALSE(per_lock_replies(Reply{}, "locks", 2));
}

TEST(Tally, AQuorumFailureTakesTheMostSpecificStatusAndNamesEveryServer) {
  const redis::Failure down{ExitStatus::k_unavailable, "a is down"};
  const redis::Failure odd{ExitStatus::k_protocol, "b sent nonsense"};
  const redis::Failure refused{ExitStatus::k_refused, "c refused"};
  EXPECT_EQ(quorum_failure({down}, 3, 2).status(), ExitStatus::k_unavailable);
  EXPECT_EQ(quorum_failure({down, odd}, 3, 2).status(), ExitStatus::k_protocol);
  EXPECT_EQ(quorum_failure({refused, odd}, 3, 2).status(), ExitStatus::k_refused);
  EXPECT_EQ(quorum_failure({odd, refused, down}, 3, 2).status(), ExitStatus::k_refused);

  const Error two = quorum_failure({down, odd}, 3, 2);
  EXPECT_EQ(std::string(two.what()), "only 1 of 3 Redis servers answered (a quorum is 2): a is down; b sent nonsense");
  const Error one = quorum_failure({down}, 1, 1);
  EXPECT_EQ(std::string(one.what()), "a is down (is redis-server running there? see --redis and --redis-timeout)");
  EXPECT_FALSE(one.answered());
}

TEST(Tally, AQuorumFailureOfServersThatAnsweredGivesNoHintAboutRunningThem) {
  redis::Failure loading{ExitStatus::k_unavailable, "LOADING at a", true};
  const Error answered = quorum_failure({loading}, 1, 1);
  EXPECT_EQ(std::string(answered.what()), "LOADING at a");
  EXPECT_TRUE(answered.answered());
  const Error replicas = quorum_failure({replicas_failure("redis://a:1", 1, "lock")}, 1, 1);
  EXPECT_EQ(std::string(replicas.what()).find("is redis-server running"), std::string::npos);
  EXPECT_FALSE(replicas.answered());
}

}  // namespace
}  // namespace redlock::lock
