#pragma once

// The lock's decisions, apart from any I/O: given what each server answered
// to one round, who holds the lock, whether an acquire or renewal counts,
// and what has to be undone where. Pure functions, tested table-driven in
// tests/unit/quorum_test.cpp; Locker (locker.hpp) does the talking.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lock/claim.hpp"
#include "lock/ledger.hpp"
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

// A run in a lock's ledger as an acquire's answer names it: the run before
// a new hold that never ended (abandoned), or the last ok run that made a
// server refuse (skipped), with that server's clock.
struct RunSeen {
  std::string host;
  std::string pid;
  long long start_ms = 0;  // abandoned: when it started (server time, 0 if not known)
  long long end_ms = 0;    // skipped: when it ended (server time)
  long long now_ms = 0;    // skipped: the server's clock
};

// A name suspended (redlock suspend) as a server's marker says: acquire
// refuses newcomers until it lapses or is resumed.
struct Suspension {
  std::string reason;
  std::string host, pid;    // who suspended it
  long long since_ms = 0;   // since when (server time)
  long long until_ms = -1;  // until when (server time); -1: until resumed
  long long now_ms = 0;     // the server's clock when it answered
};

// One server's answer to the acquire script, decoded by the I/O layer.
struct AcquireVote {
  enum class Kind {
    k_granted,    // a fresh hold with the round's new token
    k_reentered,  // the caller's token held it here: one more level
    k_busy,       // held by others (or full)
    k_mismatch,   // held in another mode, or as a semaphore with another limit
    k_upgrade,    // the caller's token holds a reader's share and asked for more
    k_foreign,    // the key is not redlock's: left alone
    k_skipped,    // free, but the last ok run ended within the skip window: nothing taken
    k_suspended,  // the name is suspended: nothing taken
    k_failed,     // no usable answer (unreachable, refused, error reply, replicas short)
  };
  Kind kind = Kind::k_failed;
  long long fence = 0;                    // granted / reentered
  long long count = 0;                    // granted / reentered: re-entry depth now
  Millis ttl_left{0};                     // busy: the holder's PTTL (0 if unknown)
  Millis lease{0};                        // granted / reentered: the lease it has there now
  std::string host, pid;                  // busy: who holds it, if the server said
  std::string cmd;                        // busy: the holder's command, if the server said
  long long holders = 0;                  // busy: how many hold it (a semaphore's or readers': several)
  bool kept = false;                      // busy: held only for a finished holder's minimum hold
  std::optional<Millis> held;             // busy: how long the holder has held it, if the server said
  bool line_full = false;                 // busy: not put in line, as max_waiters already wait
  long long place = 0;                    // busy: the caller's place in line (0: not in line)
  long long ahead = 0;                    // busy: waiters ahead of the caller
  long long ticket = 0;                   // busy, in line: the caller's ticket on this server
  std::string held_limit;                 // mismatch: a semaphore's limit
  std::string foreign_type;               // foreign: what the key holds
  std::optional<redis::Failure> failure;  // failed: why
  RunSeen last_ok;                        // skipped: the last ok run
  std::optional<RunSeen> abandoned;       // granted: the run before it that never ended
  Suspension suspension;                  // suspended: the server's marker
  // Mismatch / upgrade: the mode NAME is held in.
  Claim::Mode held_mode = Claim::Mode::k_exclusive;
  // Failed: what the server did all the same (granted or reentered, with a
  // fence that cannot be used: bad_fence says what it sent), undone whatever
  // the round comes to; k_failed when it took nothing that is known.
  Kind taken = Kind::k_failed;
  std::string bad_fence;
};

// What an acquire round comes to.
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
  // Busy / lost race: about the holder.
  Millis ttl_left{0};
  std::string host, pid;           // the first server that named a holder: who, ...
  std::string cmd;                 // ... its command,
  long long holders = 0;           // ... how many hold it there,
  bool kept = false;               // ... and whether only a minimum hold keeps it
  std::optional<Millis> held;      // ... how long it has been held (longest seen), if known
  bool line_full = false;          // some server did not put the caller in line: max_waiters wait
  long long place = 0, ahead = 0;  // the caller's place in line, and how many are ahead (largest seen)
  // The caller's ticket in line to keep on every server: the lower median of
  // the tickets the servers gave it (one server's clock off by much moves it
  // little), 0 if it is in no line.
  long long ticket = 0;
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

// Decides an acquire from every server's vote. `reentering` says whether the
// caller offered a token to re-enter with; `validity` is what is left of the
// lease once the round (and any fence raising) is over. A re-entry counts
// only when the caller's token held the lock on a quorum; then it never
// becomes a fresh token, and partial re-entries are undone.
[[nodiscard]] AcquireDecision decide_acquire(const std::vector<AcquireVote>& votes, const Claim& claim, bool reentering,
                                             Millis validity);

// Whether an acquire round is decided by the votes in so far (nullopt: a
// server still out), as round_decided says: once the votes that count
// (fresh grants, or the caller's re-entries once one is in) make the
// claim's quorum, or once neither fresh grants nor re-entries can; at once
// when a server says NAME is held in another mode (no grant then, whatever
// the others say).
[[nodiscard]] bool acquire_decided(const std::vector<std::optional<AcquireVote>>& votes, const Claim& claim,
                                   bool reentering);

// Redlock fencing: the servers that voted but handed out a smaller fence
// than the quorum's largest, whose counters must be raised to it before the
// lock counts as held (so any later quorum, which shares a server with this
// one, hands out a larger fence).
[[nodiscard]] std::vector<bool> fences_to_raise(const std::vector<AcquireVote>& votes, const AcquireDecision& d);

// One server's answer to the release script: a release, or the end of a hold.
struct ReleaseVote {
  enum class Kind { k_released, k_decremented, k_kept, k_floor, k_not_held, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  long long levels = 0;  // released / decremented / kept: the re-entry levels dropped; floor: the levels held
  Millis kept{0};        // kept: how long the lock stays held for its minimum hold
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

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

// One server's answer to the renew script.
struct RenewVote {
  enum class Kind { k_renewed, k_not_held, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  Claim claim;      // renewed: the mode (and limit) the lock is held in
  Millis lease{0};  // renewed: the lease it has there now (never shortened: it may exceed the TTL asked for)
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

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

// One holder of a lock as one server sees it.
struct HolderView {
  std::string token;
  std::string host;
  long long pid = 0;
  std::string cmd;
  long long since_ms = 0;  // server time of acquisition
  long long ttl_ms = 0;    // time left
  long long fence = 0;     // 0: the stored one is not a fence redlock hands out (see usable_fence)
  long long count = 0;     // re-entry depth
  // Held only for its minimum hold (--hold-at-least): the holder above has
  // finished (at finished_ms, server time) and no token holds the lock.
  bool kept = false;
  long long finished_ms = 0;
  std::string note{};  // --note ("" for none)
};

// A revoke asked of one hold (revoke-2.lua's mark), pending while the hold
// lasts.
struct PendingRevoke {
  std::string run;  // the hold's run id (lock::run_of of its token)
  std::string host, pid;
  long long since_ms = 0;  // when it was asked (server time)
  long long grace_ms = 0;  // 0: the holder's own --kill-after
};

// One waiter in a lock's line (fair waiting), for `status`.
struct WaiterView {
  std::string id;        // the waiter's id in the line
  long long ticket = 0;  // its place in the server's order (smaller: earlier)
  std::string host;
  long long pid = 0;
  std::string cmd;
  long long since_ms = 0;   // server time it started waiting
  long long until_ms = -1;  // server time its --wait ends; -1: it waits for as long as it takes
  long long age_ms = 0;     // how long it has waited, by the server's clock
  long long left_ms = -1;   // how long it will wait still; -1: as long as it takes
  // What it waits for.
  Claim::Mode mode = Claim::Mode::k_exclusive;
};

// One server's view of a lock, for `status`.
struct ServerView {
  std::string endpoint;              // display URL
  std::optional<std::string> error;  // unreachable / error text
  std::string type;                  // "none", "hash", or a foreign type
  bool foreign = false;
  long long now_ms = 0;                  // server TIME
  long long ttl_ms = -2;                 // the key's PTTL
  long long limit = 1;                   // a semaphore's limit
  std::vector<HolderView> holders;       // live holders
  std::vector<WaiterView> waiters;       // the head of the live line of waiters, first come first
  long long waiting = 0;                 // how many are alive in the whole line
  std::optional<Suspension> suspension;  // the name is suspended (held or not)
  std::vector<PendingRevoke> revokes;    // revokes asked of holds (maybe past ones)
  // While held: the mode it is held in.
  Claim::Mode mode = Claim::Mode::k_exclusive;
  [[nodiscard]] bool held() const { return !error && !foreign && !holders.empty(); }
};

// The overall picture of one lock across all servers, for `status`.
struct StatusVerdict {
  enum class State { k_free, k_held, k_foreign };
  std::string name;
  State state = State::k_free;
  std::string foreign_type;
  Claim::Mode mode = Claim::Mode::k_exclusive;  // held: the mode it is held in
  long long limit = 1;
  long long now_ms = 0;             // server time of the view the holders come from
  std::vector<HolderView> holders;  // holders with a quorum, oldest first
  std::vector<WaiterView> waiters;  // the head of the line on any server, first come first
  long long waiting = 0;            // how many wait in line (the longest server's line)
  std::vector<ServerView> views;
  LastRuns runs;                         // its last run and last ok run (ledger::last_runs; none for a foreign key)
  std::optional<Suspension> suspension;  // suspended, as the first server that says so has it
  // Revokes pending for holders in `holders` (matched by run), one each.
  std::vector<PendingRevoke> revokes;
  // Neither held nor foreign, but with something to show: a suspension.
  [[nodiscard]] bool shown() const { return state != State::k_free || suspension.has_value(); }
};

// One server's answer to the break script.
struct BreakVote {
  enum class Kind { k_broken, k_free, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  Claim::Mode mode = Claim::Mode::k_exclusive;  // broken: the mode the lock was held in
  long long limit = 1;                          // broken: a semaphore's limit
  long long now_ms = 0;                         // broken: the server's TIME
  std::vector<HolderView> holders;              // broken: whom this server's lock was taken from
  std::string foreign_type;                     // foreign: what the key holds
  std::optional<redis::Failure> failure;
};

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

// A holder counts when as many servers as its mode needs agree on its token
// (the merged view: smallest TTL, largest fence and count); the lock is
// foreign when a majority of servers hold a foreign key.
[[nodiscard]] StatusVerdict judge(std::string name, std::vector<ServerView> views);

}  // namespace redlock::lock
