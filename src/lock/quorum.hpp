#pragma once

// The lock's decisions, apart from any I/O: given what each server answered
// to one round (its vote, votes.hpp), whether an acquire, renewal, release
// or break counts, and what has to be undone where. Pure functions, tested
// table-driven in tests/unit/lock/quorum_test.cpp; Locker (locker.hpp) does the
// talking.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lock/acquire_outcome.hpp"
#include "lock/claim.hpp"
#include "lock/votes.hpp"
#include "redis/failure.hpp"
#include "util/duration.hpp"

namespace redlock::lock {

// A simple majority of n servers: n/2 + 1.
[[nodiscard]] size_t majority(size_t n);

// How many of n servers must grant `claim` for it to count as held. A plain
// lock and a reader's share need a majority (two majorities always share a
// server, and one server never grants both). A semaphore of L places needs
// more than L*n/(L+1) servers: then L+1 grants would hold more than L*n
// places in all, so some server would have granted L+1 places, which no
// server does (pigeonhole). For L = 1 that is the majority again.
[[nodiscard]] size_t grant_quorum(size_t n, const Claim& claim);

// Whether a round is decided before every server has answered: `yes` of
// them answered towards a quorum of `needed`, and `out` have not answered
// yet (the others answered otherwise, or failed). Decided once the quorum
// is in, or once not even every server still out could make it up: what
// the stragglers say changes nothing then. So a silent minority costs a
// round nothing, and a round whose servers have all answered is decided.
[[nodiscard]] bool round_decided(size_t yes, size_t out, size_t needed);

// What an acquire round's votes come to (acquire_verdict).
struct AcquireDecision {
  enum class Verdict {
    k_granted,      // held: `fresh` says whether with the new token or by re-entry
    k_busy,         // someone else holds it on too many servers
    k_lost_race,    // no holder has a quorum (split vote, or a quorum too slow)
    k_mismatch,     // a server holds NAME in another mode: usage error, nothing taken
    k_upgrade,      // re-entry of a reader's share as exclusive: usage error
    k_foreign,      // a quorum of servers hold a foreign key
    k_skipped,      // a majority of servers found an ok run within the skip window
    k_suspended,    // not held, and a server said the name is suspended
    k_unavailable,  // too few usable answers for any quorum
  };
  Verdict verdict = Verdict::k_unavailable;
  bool fresh = true;        // granted with the round's new token (else by re-entry)
  long long fence = 0;      // granted: the largest fence among the votes
  long long count = 1;      // granted: re-entry depth
  std::vector<bool> voted;  // per server: counts towards the hold
  // What to undo on the servers (also when granted: fresh holds taken on a
  // minority during a re-entry). Undoing never wakes waiters.
  std::vector<bool> release_fresh;  // release the round's new token here
  std::vector<bool> undo_reentry;   // release one level of the caller's token here
  bool announce_release = false;    // a quorum was reached, but too late: tell waiters
  // Busy / lost race: about the holder (the first server that named one),
  // the soonest expiry, the longest hold, and the caller's place in line
  // (the largest seen) and ticket: the lower median of the tickets the
  // servers gave it (one server's clock off by much moves it little).
  Busy busy;
  // Mismatch / upgrade: the mode (and limit) NAME is held in.
  Claim::Mode held_mode = Claim::Mode::k_exclusive;
  std::string held_limit;
  size_t foreign = 0;  // servers with a foreign key
  std::string foreign_type;
  std::vector<redis::Failure> failures;  // unavailable: every server's reason
  RunSeen last_ok;                       // skipped: the newest last ok run any server named
  std::optional<RunSeen> abandoned;      // granted: a run before this one that never ended
  std::optional<Suspension> suspension;  // suspended: the first server's marker
};

// What an acquire round's votes come to. `reentering` says whether the
// caller offered a token to re-enter with; `validity` is what is left of
// the lease once the round (and any fence raising) is over. A re-entry
// counts only when the caller's token held the lock on a quorum; then it
// never becomes a fresh token, and partial re-entries are undone.
[[nodiscard]] AcquireDecision acquire_verdict(const std::vector<AcquireVote>& votes, const Claim& claim,
                                              bool reentering, Millis validity);

// The end of an acquire round, which Locker::try_acquire carries out:
// from the round's `votes` (before its fences were raised), the answers
// of the servers whose fences were raised (`raised`, for fences_to_raise
// of acquire_verdict at the full TTL; one that failed no longer counts),
// and the round `r`. A quorum whose answers came after its lease had run
// out is given back and is an error (69): Redis is too slow for the TTL.
[[nodiscard]] AcquireResult decide_acquire(const std::vector<AcquireVote>& votes, const std::vector<RaiseVote>& raised,
                                           const AcquireRound& r);

// Whether an acquire round is decided by the votes in so far (nullopt: a
// server still out), as round_decided says: once the votes that count
// (fresh grants, or the caller's re-entries once one is in) make the
// claim's quorum, or once neither fresh grants nor re-entries can; at once
// when a server says NAME is held in another mode (no grant then, whatever
// the others say).
[[nodiscard]] bool acquire_decided(const std::vector<std::optional<AcquireVote>>& votes, const Claim& claim,
                                   bool reentering);

// drift = ttl * 1% + 2 ms, as in the Redlock description.
[[nodiscard]] Millis clock_drift(Millis ttl);

// Redlock fencing: the servers that voted but handed out a smaller fence
// than the quorum's largest, whose counters must be raised to it before the
// lock counts as held (so any later quorum, which shares a server with this
// one, hands out a larger fence).
[[nodiscard]] std::vector<bool> fences_to_raise(const std::vector<AcquireVote>& votes, const AcquireDecision& d);

// k_floor: the token holds no more levels than the floor asked to keep
// (those of the exec that runs the caller), so nothing was dropped.
enum class ReleaseOutcome { k_released, k_decremented, k_floor, k_not_held };

// How a hold ended (Locker::finish).
struct Ended {
  enum class Kind { k_released, k_decremented, k_kept, k_floor, k_not_held };
  Kind kind = Kind::k_not_held;
  long long levels = 0;  // re-entry levels dropped
  Millis kept{0};        // k_kept: how long the lock stays held for its minimum hold
};

// One level dropped: refused (floor) where any server found no level above
// the floor, else decremented where a server still holds more levels, else
// released where any server let go of the hold (kept for a minimum hold, it
// is no longer the token's), else not held.
[[nodiscard]] ReleaseOutcome decide_release(const std::vector<ReleaseVote>& votes);

// A hold ended across servers: the strongest answer wins (a hold kept
// anywhere is kept, then released, then decremented: a server that missed a
// level, then refused at the floor), with the most levels dropped and the
// longest time kept.
[[nodiscard]] Ended decide_finish(const std::vector<ReleaseVote>& votes);

struct RenewDecision {
  enum class Verdict { k_renewed, k_not_held, k_unavailable };
  Verdict verdict = Verdict::k_unavailable;
  bool foreign = false;  // not held because the key is now foreign
  std::string foreign_type;
  std::vector<redis::Failure> failures;
};

// A renewal counts when the token's lease was extended on as many servers as
// its mode needs and `validity` is left; too few usable answers is
// unavailable (a retry may still save it), else the token no longer holds.
[[nodiscard]] RenewDecision decide_renew(const std::vector<RenewVote>& votes, Millis validity);

// Whether a renewal round is decided by the votes in so far (nullopt: a
// server still out): once the renewals make the quorum of the mode they
// renew, or once they no longer can.
[[nodiscard]] bool renew_decided(const std::vector<std::optional<RenewVote>>& votes);

// Whether a release round (a release, or the end of a hold) is decided by
// the votes in so far: once a majority answered, or once one no longer
// can. The stragglers were sent the release all the same.
[[nodiscard]] bool release_decided(const std::vector<std::optional<ReleaseVote>>& votes);

// The lease a hold has after a round: never shorter than the `ttl` asked for
// (re-entry and renewal never shorten one), and where every server that
// counted (granted, re-entered, renewed) kept a longer one, the shortest of
// those.
[[nodiscard]] Millis held_lease(Millis ttl, const std::vector<AcquireVote>& votes);
[[nodiscard]] Millis held_lease(Millis ttl, const std::vector<RenewVote>& votes);

// What `break` did to one lock across every server.
struct BreakDecision {
  enum class Verdict { k_broken, k_free, k_foreign, k_unavailable };
  Verdict verdict = Verdict::k_unavailable;
  Claim::Mode mode = Claim::Mode::k_exclusive;
  long long limit = 1;
  long long now_ms = 0;
  std::vector<HolderView> holders;  // broken: every holder seen on any server (merged by token), oldest first
  std::string foreign_type;
  std::vector<redis::Failure> failures;  // unavailable: every server's reason
};

// Broken when any server broke a hold and a majority answered (a minority
// that did not answer cannot hold a quorum alone); free when every answer
// says free; foreign when nothing was broken and some server holds a
// foreign key (left alone); unavailable when too few servers answered.
[[nodiscard]] BreakDecision decide_break(const std::vector<BreakVote>& votes);

}  // namespace redlock::lock
