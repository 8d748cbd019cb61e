// When a round is decided before every server has answered (quorum.hpp's
// round_decided and the *_decided functions over it), table-driven: one
// letter per server, '.' for a server whose answer is not in yet.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "lock/quorum.hpp"

namespace redlock::lock {
namespace {

Claim semaphore(int limit) {
  return Claim{Claim::Mode::k_semaphore, limit};
}

// G granted, R re-entered, B busy, M mismatch, x failed, '.' out.
std::vector<std::optional<AcquireVote>> acquire_so_far(const std::string& pattern) {
  std::vector<std::optional<AcquireVote>> out;
  for (const char c : pattern) {
    if (c == '.') {
      out.emplace_back();
      continue;
    }
    AcquireVote v;
    v.kind = c == 'G'   ? AcquireVote::Kind::k_granted
             : c == 'R' ? AcquireVote::Kind::k_reentered
             : c == 'B' ? AcquireVote::Kind::k_busy
             : c == 'M' ? AcquireVote::Kind::k_mismatch
                        : AcquireVote::Kind::k_failed;
    out.emplace_back(v);
  }
  return out;
}

// R renewed (as `claim`), N not held, x failed, '.' out.
std::vector<std::optional<RenewVote>> renew_so_far(const std::string& pattern, const Claim& claim = Claim{}) {
  std::vector<std::optional<RenewVote>> out;
  for (const char c : pattern) {
    if (c == '.') {
      out.emplace_back();
      continue;
    }
    RenewVote v;
    v.kind = c == 'R' ? RenewVote::Kind::k_renewed : c == 'N' ? RenewVote::Kind::k_not_held : RenewVote::Kind::k_failed;
    v.claim = claim;
    out.emplace_back(v);
  }
  return out;
}

// R released, N not held, x failed, '.' out.
std::vector<std::optional<ReleaseVote>> release_so_far(const std::string& pattern) {
  std::vector<std::optional<ReleaseVote>> out;
  for (const char c : pattern) {
    if (c == '.') {
      out.emplace_back();
      continue;
    }
    ReleaseVote v;
    v.kind = c == 'R'   ? ReleaseVote::Kind::k_released
             : c == 'N' ? ReleaseVote::Kind::k_not_held
                        : ReleaseVote::Kind::k_failed;
    out.emplace_back(v);
  }
  return out;
}

TEST(RoundEnd, DecidedOnceTheQuorumIsInOrOutOfReach) {
  struct Row {
    size_t yes, out, needed;
    bool decided;
  };
  const Row rows[] = {
      {0, 3, 2, false}, {1, 2, 2, false}, {2, 1, 2, true}, {1, 1, 2, false}, {0, 1, 2, true},
      {1, 0, 2, true},  {0, 1, 1, false}, {1, 0, 1, true}, {0, 0, 1, true},  {2, 2, 3, false},
      {3, 2, 3, true},  {0, 2, 3, true},  {4, 1, 4, true}, {3, 1, 4, false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(round_decided(r.yes, r.out, r.needed), r.decided) << r.yes << " yes, " << r.out << " out of " << r.needed;
  }
}

TEST(RoundEnd, AnAcquireEndsWithAQuorumOfGrantsOrWhenNoneCanBeHad) {
  struct Row {
    std::string pattern;
    Claim claim;
    bool reentering;
    bool decided;
  };
  const Row rows[] =
      {
          {"GG.", Claim{}, false, true},  // the silent third changes nothing
          {"G..", Claim{}, false, false},
          {"GB.", Claim{}, false, false},  // the third may still grant
          {"BB.", Claim{}, false, true},
          {"Bx.", Claim{}, false, true},
          {"...", Claim{}, false, false},
          {"G", Claim{}, false, true},  // one server: its answer, as before
          {".", Claim{}, false, false},
          {"M..", Claim{}, false, true},  // held in another mode: no grant whatever comes
          {"GGG..", semaphore(2), false, false},
          {"GGGG.", semaphore(2), false, true},
          {"GGBB.", semaphore(2), false, true},
          {"RR.", Claim{}, true, true},
          {"GR.", Claim{}, true, false},  // a re-entry: only re-entries count, one more may come
          {"GG.", Claim{}, true, true},   // a fresh lock on a quorum before any re-entry
          {"RB.", Claim{}, true, false},
      };
  for (const auto& r : rows) {
    EXPECT_EQ(acquire_decided(acquire_so_far(r.pattern), r.claim, r.reentering), r.decided)
        << r.pattern << (r.reentering ? " re-entering" : "");
  }
}

TEST(RoundEnd, ARenewalEndsWithAQuorumOfRenewalsOrWhenNoneCanBeHad) {
  struct Row {
    std::string pattern;
    Claim claim;
    bool decided;
  };
  const Row rows[] = {
      {"RR.", Claim{}, true},         {"R..", Claim{}, false},       {"RN.", Claim{}, false},
      {"NN.", Claim{}, true},         {"xx.", Claim{}, true},        {"R", Claim{}, true},
      {"RRR..", semaphore(2), false},  // a semaphore of 2 over 5 needs 4
      {"RRRR.", semaphore(2), true},  {"RRNN.", semaphore(2), true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(renew_decided(renew_so_far(r.pattern, r.claim)), r.decided) << r.pattern;
  }
}

TEST(RoundEnd, AReleaseEndsOnceAMajorityAnswered) {
  const std::vector<std::pair<std::string, bool>> rows = {
      {"RN.", true}, {"NN.", true}, {"R..", false}, {"Rx.", false}, {"xx.", true}, {"x..", false}, {"R", true},
  };
  for (const auto& [pattern, decided] : rows) {
    EXPECT_EQ(release_decided(release_so_far(pattern)), decided) << pattern;
  }
}

}  // namespace
}  // namespace redlock::lock
