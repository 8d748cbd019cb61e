// The lock's decisions, table-driven, without any server: what a round of
// answers from N servers comes to.

#include "lock/quorum.hpp"

#include <gtest/gtest.h>

#include <string>
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
  AcquireDecision d = decide_acquire(votes(r.pattern), r.claim, r.reentering, Millis(1000));
  EXPECT_EQ(d.verdict, r.verdict) << r.what;
  EXPECT_EQ(bits(d.voted), r.voted) << r.what;
  EXPECT_EQ(bits(d.release_fresh), r.release_fresh) << r.what;
  EXPECT_EQ(bits(d.undo_reentry), r.undo_reentry) << r.what;
}

const Claim k_plain{};

TEST(Quorum, AnUnusableFenceIsNeverTheQuorumsFenceNorRaisedTo) {
  std::vector<AcquireVote> v = votes("GgG");
  v[1].fence = 9'223'372'036'854'775'807;  // what a hostile server sent, had it been kept
  AcquireDecision d = decide_acquire(v, Claim{}, false, Millis(1000));
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
  AcquireDecision d = decide_acquire(votes("GGG"), Claim{}, false, Millis(0));
  EXPECT_EQ(d.verdict, Verdict::k_lost_race);
  EXPECT_EQ(bits(d.release_fresh), "111");
  EXPECT_TRUE(d.announce_release);
  // A failed attempt that never had a quorum wakes nobody.
  AcquireDecision busy = decide_acquire(votes("GBB"), Claim{}, false, Millis(500));
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
  AcquireDecision d = decide_acquire(v, Claim{}, false, Millis(500));
  EXPECT_EQ(d.verdict, Verdict::k_busy);
  EXPECT_EQ(d.ticket, 1'000'015);
  // A server that did not put the caller in line (0) has no say.
  auto w = votes("BBB");
  w[0].ticket = 7;
  EXPECT_EQ(decide_acquire(w, Claim{}, false, Millis(500)).ticket, 7);
  EXPECT_EQ(decide_acquire(votes("BBB"), Claim{}, false, Millis(500)).ticket, 0);
}

TEST(Quorum, GrantedTakesTheLargestFenceAndCount) {
  auto v = votes("GGG");
  v[1].fence = 99;
  AcquireDecision d = decide_acquire(v, Claim{}, false, Millis(500));
  ASSERT_EQ(d.verdict, Verdict::k_granted);
  EXPECT_EQ(d.fence, 99);
  EXPECT_TRUE(d.fresh);
  EXPECT_EQ(bits(fences_to_raise(v, d)), "101");
}

TEST(Quorum, BusyReportsTheSoonestExpiryAndAHolder) {
  AcquireDecision d = decide_acquire(votes("xBB"), Claim{}, false, Millis(500));
  EXPECT_EQ(d.verdict, Verdict::k_busy);
  EXPECT_EQ(d.ttl_left, Millis(200));
  EXPECT_EQ(d.host, "web-2");
  EXPECT_EQ(d.pid, "42");
}

TEST(Quorum, ReentryKeepsTheHoldersFenceAndDepth) {
  AcquireDecision d = decide_acquire(votes("RRx"), Claim{}, true, Millis(500));
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
    const AcquireDecision d = decide_acquire(votes(r.votes), Claim{}, false, Millis(1000));
    EXPECT_EQ(d.verdict, r.verdict) << r.votes;
    EXPECT_EQ(bits(d.release_fresh), r.release) << r.votes;
  }
}

TEST(Quorum, TheNewestOkRunNamedIsTheOneSaid) {
  const AcquireDecision d = decide_acquire(votes("SSS"), Claim{}, false, Millis(1000));
  ASSERT_EQ(d.verdict, Verdict::k_skipped);
  EXPECT_EQ(d.last_ok.host, "web-3");
  EXPECT_EQ(d.last_ok.end_ms, 3000);
}

TEST(Quorum, AnAbandonedRunIsNamedOnlyWithAGrant) {
  AcquireDecision d = decide_acquire(votes("AGx"), Claim{}, false, Millis(1000));
  ASSERT_EQ(d.verdict, Verdict::k_granted);
  ASSERT_TRUE(d.abandoned);
  EXPECT_EQ(d.abandoned->host, "old-1");
  d = decide_acquire(votes("ABB"), Claim{}, false, Millis(1000));
  EXPECT_EQ(d.verdict, Verdict::k_busy);
  EXPECT_FALSE(d.abandoned) << "a grant that is given back names nothing";
}

}  // namespace
}  // namespace redlock::lock
