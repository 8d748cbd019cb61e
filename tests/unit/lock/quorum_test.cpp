// The lock's decisions, table-driven, without any server: what a round of
// answers from N servers comes to.

#include "lock/quorum.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace redlock::lock {
namespace {

using Kind = AcquireVote::Kind;
using Verdict = AcquireDecision::Verdict;

AcquireVote vote(char c, long long fence = 10) {
  AcquireVote v;
  switch (c) {
    case 'G':  // granted, fresh token
      v.kind = Kind::k_granted;
      v.fence = fence;
      v.count = 1;
      break;
    case 'R':  // re-entered with the caller's token
      v.kind = Kind::k_reentered;
      v.fence = fence;
      v.count = 2;
      break;
    case 'B':
      v.kind = Kind::k_busy;
      v.ttl_left = Millis(fence * 100);
      v.host = "web-" + std::to_string(fence);
      v.pid = "42";
      break;
    case 'M':
      v.kind = Kind::k_mismatch;
      v.held_mode = Claim::Mode::k_semaphore;
      v.held_limit = "3";
      break;
    case 'U':
      v.kind = Kind::k_upgrade;
      v.held_mode = Claim::Mode::k_shared;
      break;
    case 'F':
      v.kind = Kind::k_foreign;
      v.foreign_type = "list";
      break;
    case 'S':  // skipped: an ok run ended within the window (at `fence` s)
      v.kind = Kind::k_skipped;
      v.last_ok = RunSeen{"web-" + std::to_string(fence), "42", 0, fence * 1000, 100'000};
      break;
    case 'P':  // the name is suspended
      v.kind = Kind::k_suspended;
      v.suspension = Suspension{"maintenance", "ops-1", "9", 0, -1, 0};
      break;
    case 'A':  // granted, naming a run before it that never ended
      v.kind = Kind::k_granted;
      v.fence = fence;
      v.count = 1;
      v.abandoned = RunSeen{"old-" + std::to_string(fence), "7", fence, 0, 0};
      break;
    case 'g':  // granted, but with a fence that cannot be used
    case 'r':  // re-entered, but with a fence that cannot be used
      v.kind = Kind::k_failed;
      v.taken = c == 'g' ? Kind::k_granted : Kind::k_reentered;
      v.bad_fence = "'9223372036854775807'";
      v.failure = redis::Failure{ExitStatus::k_protocol, "an unusable fence"};
      break;
    default:  // 'x': no answer
      v.kind = Kind::k_failed;
      v.failure = redis::Failure{ExitStatus::k_unavailable, "timed out"};
      break;
  }
  return v;
}

// "GGBxx" -> one vote per letter, fences 1, 2, 3... in order.
std::vector<AcquireVote> votes(const std::string& pattern) {
  std::vector<AcquireVote> out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    out.push_back(vote(pattern[i], static_cast<long long>(i + 1)));
  }
  return out;
}

std::string bits(const std::vector<bool>& v) {
  std::string s;
  for (bool b : v) {
    s += b ? '1' : '0';
  }
  return s;
}

Claim semaphore(int limit) {
  return Claim{Claim::Mode::k_semaphore, limit};
}

TEST(Quorum, MajorityIsMoreThanHalf) {
  EXPECT_EQ(majority(1), 1u);
  EXPECT_EQ(majority(2), 2u);
  EXPECT_EQ(majority(3), 2u);
  EXPECT_EQ(majority(4), 3u);
  EXPECT_EQ(majority(5), 3u);
}

TEST(Quorum, SemaphoreNeedsMoreThanLTimesMOverLPlusOneServers) {
  struct Row {
    size_t servers;
    int limit;
    size_t needed;
  };
  const Row rows[] = {
      {1, 1, 1}, {1, 5, 1}, {3, 1, 2}, {3, 2, 3}, {3, 3, 3}, {3, 100, 3}, {5, 1, 3},
      {5, 2, 4}, {5, 3, 4}, {5, 4, 5}, {5, 9, 5}, {7, 2, 5}, {7, 3, 6},   {9, 2, 7},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(grant_quorum(r.servers, semaphore(r.limit)), r.needed) << r.servers << " servers, limit " << r.limit;
  }
}

TEST(Quorum, SemaphoreQuorumMakesLPlusOneGrantsImpossibleByPigeonhole) {
  // For every M and L: L+1 grants, each on q servers, need (L+1)*q places;
  // M servers with L places each have only L*M.
  for (size_t m = 1; m <= 9; ++m) {
    for (int l = 1; l <= 12; ++l) {
      const size_t q = grant_quorum(m, semaphore(l));
      EXPECT_LE(q, m) << m << " " << l;
      EXPECT_GT((static_cast<size_t>(l) + 1) * q, static_cast<size_t>(l) * m) << m << " " << l;
      // And it is the smallest such number.
      EXPECT_LE((static_cast<size_t>(l) + 1) * (q - 1), static_cast<size_t>(l) * m) << m << " " << l;
    }
  }
}

TEST(Quorum, PlainLocksAndReadersNeedAMajority) {
  EXPECT_EQ(grant_quorum(5, Claim{}), 3u);
  EXPECT_EQ(grant_quorum(5, Claim{Claim::Mode::k_shared, 1}), 3u);
  EXPECT_EQ(grant_quorum(3, semaphore(1)), 2u);
}

struct AcquireRow {
  const char* what;
  std::string pattern;
  Claim claim;
  bool reentering;
  Verdict verdict;
  std::string voted;          // per server
  std::string release_fresh;  // per server
  std::string undo_reentry;   // per server
};

class AcquireTable : public ::testing::TestWithParam<AcquireRow> {};

TEST_P(AcquireTable, DecidesAndSaysWhatToUndo) {
  const AcquireRow& r = GetParam();
  AcquireDecision d = acquire_verdict(votes(r.pattern), r.claim, r.reentering, Millis(1000));
  EXPECT_EQ(d.verdict, r.verdict) << r.what;
  EXPECT_EQ(bits(d.voted), r.voted) << r.what;
  EXPECT_EQ(bits(d.release_fresh), r.release_fresh) << r.what;
  EXPECT_EQ(bits(d.undo_reentry), r.undo_reentry) << r.what;
}

const Claim k_plain{};

TEST(Quorum, AnUnusableFenceIsNeverTheQuorumsFenceNorRaisedTo) {
  std::vector<AcquireVote> v = votes("GgG");
  v[1].fence = 9'223'372'036'854'775'807;  // what a hostile server sent, had it been kept
  AcquireDecision d = acquire_verdict(v, Claim{}, false, Millis(1000));
  ASSERT_EQ(d.verdict, Verdict::k_granted);
  EXPECT_EQ(d.fence, 3);
  EXPECT_EQ(bits(fences_to_raise(v, d)), "100");
}

INSTANTIATE_TEST_SUITE_P(
    Rounds, AcquireTable,
    ::testing::Values(
        AcquireRow{"one server grants", "G", k_plain, false, Verdict::k_granted, "1", "0", "0"},
        AcquireRow{"one server busy", "B", k_plain, false, Verdict::k_busy, "0", "0", "0"},
        AcquireRow{"one server silent: the acquire may still run there, so it is undone", "x", k_plain, false,
                   Verdict::k_unavailable, "0", "1", "0"},
        AcquireRow{"all five grant", "GGGGG", k_plain, false, Verdict::k_granted, "11111", "00000", "00000"},
        AcquireRow{"three of five", "GGGBB", k_plain, false, Verdict::k_granted, "11100", "00000", "00000"},
        AcquireRow{"2 of 5 busy, 3 granted", "BGGBG", k_plain, false, Verdict::k_granted, "01101", "00000", "00000"},
        AcquireRow{"3 of 5 busy: undo the two grants", "GBBBG", k_plain, false, Verdict::k_busy, "00000", "10001",
                   "00000"},
        AcquireRow{"split vote among contenders", "GGBBx", k_plain, false, Verdict::k_busy, "00000", "11001", "00000"},
        AcquireRow{"nobody busy, no quorum: a lost race", "GGxFF", k_plain, false, Verdict::k_lost_race, "00000",
                   "11100", "00000"},
        AcquireRow{"three silent of five: unavailable", "GGxxx", k_plain, false, Verdict::k_unavailable, "00000",
                   "11111", "00000"},
        AcquireRow{"two silent of five: still a quorum", "GxGxG", k_plain, false, Verdict::k_granted, "10101", "00000",
                   "00000"},
        AcquireRow{"mismatch on one server takes nothing anywhere", "GGGGM", k_plain, false, Verdict::k_mismatch,
                   "00000", "11110", "00000"},
        AcquireRow{"foreign on a majority", "FFFGG", k_plain, false, Verdict::k_foreign, "00000", "00011", "00000"},
        AcquireRow{"foreign on a minority is outvoted", "FGGGF", k_plain, false, Verdict::k_granted, "01110", "00000",
                   "00000"},
        AcquireRow{"one server grants with an unusable fence: nothing held, the grant given back", "g", k_plain, false,
                   Verdict::k_unavailable, "0", "1", "0"},
        AcquireRow{"one server re-enters with an unusable fence: the level is given back", "r", k_plain, true,
                   Verdict::k_unavailable, "0", "1", "1"},
        AcquireRow{"an unusable fence never counts towards a quorum", "GgG", k_plain, false, Verdict::k_granted, "101",
                   "010", "000"},
        AcquireRow{"two unusable fences of three: no quorum, every grant given back", "ggG", k_plain, false,
                   Verdict::k_unavailable, "000", "111", "000"},
        AcquireRow{"a re-entry with an unusable fence is undone even when the others hold", "RrR", k_plain, true,
                   Verdict::k_granted, "101", "010", "010"},
        AcquireRow{"re-entry on all", "RRR", k_plain, true, Verdict::k_granted, "111", "000", "000"},
        AcquireRow{"re-entry on a quorum: the fresh grant elsewhere is given back", "RRG", k_plain, true,
                   Verdict::k_granted, "110", "001", "000"},
        AcquireRow{"re-entry on a minority never mints a fresh token", "RGG", k_plain, true, Verdict::k_lost_race,
                   "000", "011", "100"},
        AcquireRow{"re-entry on a minority, others busy", "RBB", k_plain, true, Verdict::k_busy, "000", "000", "100"},
        AcquireRow{"a token held nowhere takes a free lock afresh", "GGG", k_plain, true, Verdict::k_granted, "111",
                   "000", "000"},
        AcquireRow{"a reader asking for exclusive is refused everywhere", "URR", k_plain, true, Verdict::k_upgrade,
                   "000", "000", "011"},
        AcquireRow{"semaphore of 2 on 3 servers needs all three", "GGB", semaphore(2), false, Verdict::k_busy, "000",
                   "110", "000"},
        AcquireRow{"semaphore of 2 on 3 servers, one silent", "GGx", semaphore(2), false, Verdict::k_unavailable, "000",
                   "111", "000"},
        AcquireRow{"semaphore of 2 on 3 servers, all grant", "GGG", semaphore(2), false, Verdict::k_granted, "111",
                   "000", "000"},
        AcquireRow{"semaphore of 3 on 5 servers needs four", "GGGBB", semaphore(3), false, Verdict::k_busy, "00000",
                   "11100", "00000"},
        AcquireRow{"semaphore of 3 on 5 servers, four grant", "GGGGB", semaphore(3), false, Verdict::k_granted, "11110",
                   "00000", "00000"}));

TEST(Quorum, AQuorumWhoseValidityRanOutIsALostRaceThatWakesWaiters) {
  AcquireDecision d = acquire_verdict(votes("GGG"), Claim{}, false, Millis(0));
  EXPECT_EQ(d.verdict, Verdict::k_lost_race);
  EXPECT_EQ(bits(d.release_fresh), "111");
  EXPECT_TRUE(d.announce_release);
  // A failed attempt that never had a quorum wakes nobody.
  AcquireDecision busy = acquire_verdict(votes("GBB"), Claim{}, false, Millis(500));
  EXPECT_FALSE(busy.announce_release);
}

TEST(Quorum, AWaiterInLineOnSeveralServersKeepsTheMedianOfItsTickets) {
  // Each server put the waiter in line at the time on its own clock; one
  // clock far off moves the ticket it keeps on all of them little.
  auto v = votes("BBBBx");
  const long long tickets[] = {1'000'020, 1'000'010, 9'999'999, 1'000'015};
  for (size_t i = 0; i < 4; ++i) {
    v[i].ticket = tickets[i];
  }
  AcquireDecision d = acquire_verdict(v, Claim{}, false, Millis(500));
  EXPECT_EQ(d.verdict, Verdict::k_busy);
  EXPECT_EQ(d.busy.ticket, 1'000'015);
  // A server that did not put the caller in line (0) has no say.
  auto w = votes("BBB");
  w[0].ticket = 7;
  EXPECT_EQ(acquire_verdict(w, Claim{}, false, Millis(500)).busy.ticket, 7);
  EXPECT_EQ(acquire_verdict(votes("BBB"), Claim{}, false, Millis(500)).busy.ticket, 0);
}

TEST(Quorum, GrantedTakesTheLargestFenceAndCount) {
  auto v = votes("GGG");
  v[1].fence = 99;
  AcquireDecision d = acquire_verdict(v, Claim{}, false, Millis(500));
  ASSERT_EQ(d.verdict, Verdict::k_granted);
  EXPECT_EQ(d.fence, 99);
  EXPECT_TRUE(d.fresh);
  EXPECT_EQ(bits(fences_to_raise(v, d)), "101");
}

TEST(Quorum, BusyReportsTheSoonestExpiryAndAHolder) {
  AcquireDecision d = acquire_verdict(votes("xBB"), Claim{}, false, Millis(500));
  EXPECT_EQ(d.verdict, Verdict::k_busy);
  EXPECT_EQ(d.busy.ttl_left, Millis(200));
  EXPECT_EQ(d.busy.host, "web-2");
  EXPECT_EQ(d.busy.pid, "42");
}

TEST(Quorum, ReentryKeepsTheHoldersFenceAndDepth) {
  AcquireDecision d = acquire_verdict(votes("RRx"), Claim{}, true, Millis(500));
  ASSERT_EQ(d.verdict, Verdict::k_granted);
  EXPECT_FALSE(d.fresh);
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.fence, 2);
  EXPECT_EQ(bits(d.release_fresh), "001");  // the silent server may have granted a fresh token
}

RenewVote renew_vote(char c, Claim claim = Claim{}) {
  RenewVote v;
  if (c == 'R') {
    v.kind = RenewVote::Kind::k_renewed;
    v.claim = claim;
  } else if (c == 'N') {
    v.kind = RenewVote::Kind::k_not_held;
  } else if (c == 'F') {
    v.kind = RenewVote::Kind::k_foreign;
    v.foreign_type = "string";
  } else {
    v.failure = redis::Failure{ExitStatus::k_unavailable, "timed out"};
  }
  return v;
}

std::vector<RenewVote> renew_votes(const std::string& pattern, Claim claim = Claim{}) {
  std::vector<RenewVote> out;
  for (char c : pattern) {
    out.push_back(renew_vote(c, claim));
  }
  return out;
}

TEST(Quorum, RenewalTallies) {
  using RV = RenewDecision::Verdict;
  struct Row {
    std::string pattern;
    Claim claim;
    RV verdict;
  };
  const Row rows[] = {
      {"R", Claim{}, RV::k_renewed},
      {"N", Claim{}, RV::k_not_held},
      {"x", Claim{}, RV::k_unavailable},  // one server silent: retry within the validity
      {"RRN", Claim{}, RV::k_renewed},
      {"RNN", Claim{}, RV::k_not_held},     // a quorum can no longer be reached
      {"RNx", Claim{}, RV::k_unavailable},  // it still could: retry
      {"RRx", semaphore(2), RV::k_unavailable},
      {"RRR", semaphore(2), RV::k_renewed},
      {"RRN", semaphore(2), RV::k_not_held},
      {"RRRNx", semaphore(3), RV::k_unavailable},
      {"RRRRx", semaphore(3), RV::k_renewed},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(decide_renew(renew_votes(r.pattern, r.claim), Millis(1000)).verdict, r.verdict) << r.pattern;
  }
  EXPECT_EQ(decide_renew(renew_votes("RRR"), Millis(0)).verdict, RV::k_not_held);  // too slow to count
  RenewDecision foreign = decide_renew(renew_votes("F"), Millis(1000));
  EXPECT_EQ(foreign.verdict, RV::k_not_held);
  EXPECT_TRUE(foreign.foreign);
  EXPECT_EQ(foreign.foreign_type, "string");
}

}  // namespace
}  // namespace redlock::lock

namespace redlock::lock {
namespace {

BreakVote break_vote(char c, const std::string& token = "t1", long long since = 100) {
  BreakVote v;
  switch (c) {
    case 'K':  // broken: took it from `token`
      v.kind = BreakVote::Kind::k_broken;
      v.mode = Claim::Mode::k_exclusive;
      v.now_ms = 1000;
      v.holders.push_back(HolderView{token, "web-1", 42, "job", since, 0, 7, 1});
      break;
    case 'F':
      v.kind = BreakVote::Kind::k_free;
      break;
    case 'X':
      v.kind = BreakVote::Kind::k_foreign;
      v.foreign_type = "string";
      break;
    default:
      v.failure = redis::Failure{ExitStatus::k_unavailable, "down"};
      break;
  }
  return v;
}

TEST(Break, OneHolderSeenOnSeveralServersIsNamedOnce) {
  auto d = decide_break({break_vote('K'), break_vote('K', "t1", 90), break_vote('F')});
  EXPECT_EQ(d.verdict, BreakDecision::Verdict::k_broken);
  ASSERT_EQ(d.holders.size(), 1u);
  EXPECT_EQ(d.holders[0].since_ms, 90);
}

TEST(Break, HoldersComeOldestFirst) {
  auto d = decide_break({break_vote('K', "young", 500), break_vote('K', "old", 100), break_vote('K', "young", 500)});
  ASSERT_EQ(d.holders.size(), 2u);
  EXPECT_EQ(d.holders[0].token, "old");
}

TEST(Break, FreeForeignAndUnavailable) {
  EXPECT_EQ(decide_break({break_vote('F'), break_vote('F'), break_vote('-')}).verdict, BreakDecision::Verdict::k_free);
  EXPECT_EQ(decide_break({break_vote('X'), break_vote('F'), break_vote('F')}).verdict,
            BreakDecision::Verdict::k_foreign);
  EXPECT_EQ(decide_break({break_vote('K'), break_vote('-'), break_vote('-')}).verdict,
            BreakDecision::Verdict::k_unavailable);
  EXPECT_EQ(decide_break({break_vote('X'), break_vote('K'), break_vote('F')}).verdict,
            BreakDecision::Verdict::k_broken);
}

}  // namespace
}  // namespace redlock::lock

namespace redlock::lock {
namespace {

// One letter per server: R released, D decremented, K kept, L at the floor
// (nothing dropped), N not held, F foreign, X failed.
std::vector<ReleaseVote> release_votes(const std::string& letters) {
  std::vector<ReleaseVote> out;
  for (char c : letters) {
    ReleaseVote v;
    switch (c) {
      case 'R':
        v.kind = ReleaseVote::Kind::k_released;
        v.levels = 2;
        break;
      case 'D':
        v.kind = ReleaseVote::Kind::k_decremented;
        v.levels = 1;
        break;
      case 'K':
        v.kind = ReleaseVote::Kind::k_kept;
        v.levels = 1;
        v.kept = Millis(4000);
        break;
      case 'L':
        v.kind = ReleaseVote::Kind::k_floor;
        v.levels = 3;
        break;
      case 'N':
        v.kind = ReleaseVote::Kind::k_not_held;
        break;
      case 'F':
        v.kind = ReleaseVote::Kind::k_foreign;
        v.foreign_type = "list";
        break;
      default:
        v.failure = redis::Failure{};
        break;
    }
    out.push_back(v);
  }
  return out;
}

TEST(Release, OneLevelIsDecrementedWhereAServerKeepsLevelsThenReleased) {
  const std::vector<std::pair<std::string, ReleaseOutcome>> table = {
      {"R", ReleaseOutcome::k_released},      {"D", ReleaseOutcome::k_decremented}, {"N", ReleaseOutcome::k_not_held},
      {"RRD", ReleaseOutcome::k_decremented}, {"RNX", ReleaseOutcome::k_released},  {"NNF", ReleaseOutcome::k_not_held},
      {"XXX", ReleaseOutcome::k_not_held},    {"KNN", ReleaseOutcome::k_released},  {"L", ReleaseOutcome::k_floor},
      {"LDN", ReleaseOutcome::k_floor},
  };
  for (const auto& [letters, outcome] : table) {
    EXPECT_EQ(decide_release(release_votes(letters)), outcome) << letters;
  }
}

TEST(Release, TheEndOfAHoldIsTheStrongestWithTheMostLevelsAndTheLongestKeep) {
  const std::vector<std::pair<std::string, Ended::Kind>> table = {
      {"R", Ended::Kind::k_released},   {"D", Ended::Kind::k_decremented},   {"K", Ended::Kind::k_kept},
      {"N", Ended::Kind::k_not_held},   {"F", Ended::Kind::k_not_held},      {"X", Ended::Kind::k_not_held},
      {"DRN", Ended::Kind::k_released}, {"RKD", Ended::Kind::k_kept},        {"XDN", Ended::Kind::k_decremented},
      {"LNX", Ended::Kind::k_floor},    {"LDN", Ended::Kind::k_decremented},
  };
  for (const auto& [letters, kind] : table) {
    EXPECT_EQ(decide_finish(release_votes(letters)).kind, kind) << letters;
  }
  const Ended mixed = decide_finish(release_votes("DRK"));
  EXPECT_EQ(mixed.levels, 2) << "the most levels any server dropped";
  EXPECT_EQ(mixed.kept, Millis(4000));
  EXPECT_EQ(decide_finish(release_votes("LDN")).levels, 1) << "a floor's levels are held, not dropped";
  const Ended none = decide_finish(release_votes("NFX"));
  EXPECT_EQ(none.levels, 0);
  EXPECT_EQ(none.kept, Millis(0));
}

TEST(Lease, AHoldsLeaseIsTheShortestThatCountedButNeverShorterThanAsked) {
  std::vector<AcquireVote> votes(3);
  votes[0].kind = AcquireVote::Kind::k_granted;
  votes[0].lease = Millis(50'000);
  votes[1].kind = AcquireVote::Kind::k_reentered;
  votes[1].lease = Millis(40'000);
  votes[2].kind = AcquireVote::Kind::k_busy;
  votes[2].lease = Millis(35'000);  // busy: does not count
  EXPECT_EQ(held_lease(Millis(30'000), votes), Millis(40'000));
  EXPECT_EQ(held_lease(Millis(45'000), votes), Millis(45'000));
  EXPECT_EQ(held_lease(Millis(30'000), std::vector<AcquireVote>(2)), Millis(30'000)) << "nobody counted";

  std::vector<RenewVote> renewed(2);
  renewed[0].kind = RenewVote::Kind::k_renewed;
  renewed[0].lease = Millis(90'000);
  renewed[1].kind = RenewVote::Kind::k_not_held;
  EXPECT_EQ(held_lease(Millis(30'000), renewed), Millis(90'000));
}

// --skip-if-ok-within over N servers: skipped when a majority of ledgers
// hold an ok run within the window; granted when a quorum found none (a
// server restarted empty grants, and is outvoted); otherwise busy or a lost race.
TEST(Quorum, SkipIsDecidedByAMajorityOfLedgers) {
  struct Row {
    std::string votes;
    Verdict verdict;
    std::string release;  // where the round's grants are given back
  };
  const Row rows[] = {
      {"S", Verdict::k_skipped, "0"},         {"G", Verdict::k_granted, "0"},
      {"SSG", Verdict::k_skipped, "001"},     {"SGG", Verdict::k_granted, "000"},
      {"SSx", Verdict::k_skipped, "001"},     {"Sxx", Verdict::k_unavailable, "011"},
      {"SGx", Verdict::k_lost_race, "011"},   {"SBG", Verdict::k_busy, "001"},
      {"SSSGG", Verdict::k_skipped, "00011"}, {"SSGGG", Verdict::k_granted, "00000"},
  };
  for (const auto& r : rows) {
    const AcquireDecision d = acquire_verdict(votes(r.votes), Claim{}, false, Millis(1000));
    EXPECT_EQ(d.verdict, r.verdict) << r.votes;
    EXPECT_EQ(bits(d.release_fresh), r.release) << r.votes;
  }
}

TEST(Quorum, TheNewestOkRunNamedIsTheOneSaid) {
  const AcquireDecision d = acquire_verdict(votes("SSS"), Claim{}, false, Millis(1000));
  ASSERT_EQ(d.verdict, Verdict::k_skipped);
  EXPECT_EQ(d.last_ok.host, "web-3");
  EXPECT_EQ(d.last_ok.end_ms, 3000);
}

TEST(Quorum, AnAbandonedRunIsNamedOnlyWithAGrant) {
  AcquireDecision d = acquire_verdict(votes("AGx"), Claim{}, false, Millis(1000));
  ASSERT_EQ(d.verdict, Verdict::k_granted);
  ASSERT_TRUE(d.abandoned);
  EXPECT_EQ(d.abandoned->host, "old-1");
  d = acquire_verdict(votes("ABB"), Claim{}, false, Millis(1000));
  EXPECT_EQ(d.verdict, Verdict::k_busy);
  EXPECT_FALSE(d.abandoned) << "a grant that is given back names nothing";
}

// decide_acquire: the end of a round, which Locker::try_acquire carries
// out. Three servers or so, a TTL of 1s; each row says what is returned or
// thrown, and what is given back first.
struct EndRow {
  const char* what;
  std::string pattern;
  bool reentering;
  Claim claim;
  std::string raise_failed;  // per server: '1' where the fence was not raised ("": none was raised)
  Millis elapsed;            // the round's time (the validity is the TTL less it, less the drift)
  std::string said;          // what comes of it (ended_with)
  std::string release_fresh;
  std::string undo_reentry;
  bool announce = false;
};

// "acquired <token> <voted>", "busy", "lost race", "skipped", "suspended", or "error <status>".
std::string ended_with(const AcquireResult& r) {
  if (r.error) {
    return "error " + std::to_string(to_int(r.error->status()));
  }
  if (const auto* got = std::get_if<Acquired>(&r.outcome)) {
    return "acquired " + got->token + " " + bits(got->voted);
  }
  const Busy& busy = std::get<Busy>(r.outcome);
  return busy.skipped ? "skipped" : busy.suspended ? "suspended" : busy.lost_race ? "lost race" : "busy";
}

AcquireRound round_of(size_t n, bool reentering, const Claim& claim, Millis elapsed) {
  AcquireRound r{.name = "job",
                 .claim = claim,
                 .token = "new",
                 .reenter = reentering ? "old" : "",
                 .ttl = Millis(1000),
                 .sent = TimePoint{},
                 .elapsed = elapsed,
                 .servers = {}};
  for (size_t i = 0; i < n; ++i) {
    r.servers.push_back("redis://h" + std::to_string(i + 1));
  }
  return r;
}

std::vector<RaiseVote> raise_votes(const std::string& failed) {
  std::vector<RaiseVote> out(failed.size());
  for (size_t i = 0; i < failed.size(); ++i) {
    if (failed[i] == '1') {
      out[i].failure = redis::Failure{ExitStatus::k_unavailable, "timed out"};
    }
  }
  return out;
}

class EndTable : public ::testing::TestWithParam<EndRow> {};

TEST_P(EndTable, SaysWhatToReturnOrThrowAndWhatToGiveBack) {
  const EndRow& r = GetParam();
  const AcquireResult got = decide_acquire(votes(r.pattern), raise_votes(r.raise_failed),
                                           round_of(r.pattern.size(), r.reentering, r.claim, r.elapsed));
  EXPECT_EQ(ended_with(got), r.said) << r.what;
  EXPECT_EQ(bits(got.release_fresh), r.release_fresh) << r.what;
  EXPECT_EQ(bits(got.undo_reentry), r.undo_reentry) << r.what;
  EXPECT_EQ(got.announce_release, r.announce) << r.what;
}

const Millis k_quick{10};

INSTANTIATE_TEST_SUITE_P(
    Ends, EndTable,
    ::testing::Values(
        EndRow{"a quorum of grants", "GGB", false, k_plain, "", k_quick, "acquired new 110", "000", "000"},
        EndRow{"a re-entry on a quorum keeps the caller's token", "RRG", true, k_plain, "", k_quick, "acquired old 110",
               "001", "000"},
        EndRow{"busy", "GBB", false, k_plain, "", k_quick, "busy", "100", "000"},
        EndRow{"no holder has a quorum", "GGxFF", false, k_plain, "", k_quick, "lost race", "11100", "00000"},
        EndRow{"a majority of ledgers say the period's run is done", "SSG", false, k_plain, "", k_quick, "skipped",
               "001", "000"},
        EndRow{"suspended", "PBB", false, k_plain, "", k_quick, "suspended", "000", "000"},
        EndRow{"held in another mode: a usage error", "GGM", false, k_plain, "", k_quick, "error 64", "110", "000"},
        EndRow{"a reader's share cannot become exclusive: a usage error", "URR", true, k_plain, "", k_quick, "error 64",
               "000", "011"},
        EndRow{"a foreign key on a majority", "FFG", false, k_plain, "", k_quick, "error 76", "001", "000"},
        EndRow{"too few answers", "Gxx", false, k_plain, "", k_quick, "error 69", "111", "000"},
        EndRow{"a quorum whose answers came after its TTL ran out: Redis is too slow", "GGG", false, k_plain, "",
               Millis(2000), "error 69", "111", "000", true},
        EndRow{"a quorum with no validity left by a hair", "GGG", false, k_plain, "", Millis(988), "error 69", "111",
               "000", true},
        EndRow{"a quorum with a millisecond left holds", "GGG", false, k_plain, "", Millis(987), "acquired new 111",
               "000", "000"},
        EndRow{"a fence not raised takes its server out of the hold", "GGG", false, k_plain, "100", k_quick,
               "acquired new 011", "000", "000"},
        EndRow{"a fence not raised can cost the quorum: every grant is given back", "GGx", false, k_plain, "100",
               k_quick, "error 69", "111", "000"},
        EndRow{"a semaphore of 2 on 3 servers, all grant", "GGG", false, semaphore(2), "", k_quick, "acquired new 111",
               "000", "000"}));

TEST(Quorum, AGrantSaysWhatItHoldsAndUntilWhen) {
  std::vector<AcquireVote> v = votes("AGB");
  v[0].lease = Millis(5000);
  v[1].lease = Millis(3000);
  AcquireRound r = round_of(3, false, Claim{}, Millis(100));
  r.sent = TimePoint(Millis(7000));
  const AcquireResult got = decide_acquire(v, {}, r);
  ASSERT_TRUE(std::holds_alternative<Acquired>(got.outcome)) << ended_with(got);
  const auto& a = std::get<Acquired>(got.outcome);
  EXPECT_EQ(a.token, "new");
  EXPECT_EQ(a.fence, 2);
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.ttl, Millis(3000)) << "the shortest lease that counted, never shorter than asked";
  EXPECT_EQ(a.validity, Millis(1000 - 100 - 12));
  EXPECT_EQ(a.valid_until, TimePoint(Millis(7000 + 1000 - 12)));
  EXPECT_EQ(bits(a.busy), "001");
  ASSERT_TRUE(a.abandoned);
  EXPECT_EQ(a.abandoned->host, "old-1");
}

TEST(Quorum, TheErrorsOfARoundSayWhatHappened) {
  const auto message = [](const std::string& pattern, Millis elapsed) {
    const AcquireResult got = decide_acquire(votes(pattern), {}, round_of(pattern.size(), false, Claim{}, elapsed));
    return got.error ? std::string(got.error->what()) : "no error: " + ended_with(got);
  };
  EXPECT_NE(message("GGG", Millis(1500)).find("acquiring job took 1.5s, and its 1s TTL had run out"), std::string::npos)
      << message("GGG", Millis(1500));
  EXPECT_NE(message("M", k_quick).find("job is held as a semaphore with --limit 3, but a plain lock was asked for"),
            std::string::npos)
      << message("M", k_quick);
  EXPECT_NE(message("F", k_quick).find("on redis://h1"), std::string::npos) << message("F", k_quick);
  EXPECT_NE(message("FFG", k_quick).find("on 2 of 3 servers"), std::string::npos) << message("FFG", k_quick);
  EXPECT_NE(message("Bxx", k_quick).find("only 1 of 3 Redis servers answered (a quorum is 2)"), std::string::npos)
      << message("Bxx", k_quick);
}

}  // namespace
}  // namespace redlock::lock
