#pragma once

// What an acquire comes to, as data: what Locker::try_acquire returns (a
// grant, or busy), and what decide_acquire (quorum.hpp) tells it to do at
// a round's end: what to give back where, and what to return or throw.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lock/claim.hpp"
#include "lock/view.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"
#include "util/exit_status.hpp"

namespace redlock::lock {

struct Acquired {
  std::string token;
  long long fence = 0;
  long long count = 1;  // re-entry depth after this acquire
  Millis ttl{0};
  Millis validity{0};  // time left that the lock is safely ours, as the answers came in
  TimePoint sent;      // when the acquire request went out (monotonic)
  // Until when it is safely ours: every lease granted runs from after
  // `sent`, so `sent` + ttl less the clock drift (not less the round's own
  // time, which `validity` already took off).
  TimePoint valid_until;
  std::vector<bool> voted;  // per server: did it grant the lock
  std::vector<bool> busy;   // per server: did it say busy (and keep a waiter in its line)
  // A run before this one (Claim::record_run) that never ended: its
  // redlock died and its lock expired (recorded as abandoned).
  std::optional<RunSeen> abandoned;
};

struct Busy {
  Millis ttl_left{0};          // the holder's remaining PTTL (smallest seen), 0 if unknown
  std::string host, pid;       // holder's host and pid, if any server said
  std::string cmd;             // ... its command (from the same server),
  long long holders = 0;       // ... how many hold it there (a semaphore's or readers'),
  bool kept = false;           // ... and whether only a finished holder's minimum hold keeps it
  std::optional<Millis> held;  // ... how long it has held the lock (the longest seen), if known
  bool line_full = false;      // not put in line: --max-waiters already wait there
  bool lost_race = false;      // no single holder: a split vote among several contenders
  long long place = 0;         // this waiter's place in line (1 = next), 0 if not in line
  long long ahead = 0;         // waiters ahead of this caller
  long long ticket = 0;        // in line over several servers: the ticket to keep (0: none)
  // Free, but not taken: the last ok run ended within Claim::skip_ok_within
  // (on a majority of servers). Waiting again would not change that.
  std::optional<RunSeen> skipped;
  // Not taken: the name is suspended (redlock suspend); nor would waiting
  // change that. The waiter is out of line.
  std::optional<Suspension> suspended;
};

using AcquireOutcome = std::variant<Acquired, Busy>;

// What decide_acquire knows of a round besides its votes.
struct AcquireRound {
  std::string name;
  Claim claim;
  std::string token;    // the round's new token
  std::string reenter;  // the token offered to re-enter with ("" for none)
  Millis ttl{0};
  TimePoint sent;                    // when the acquire went out (monotonic)
  Millis elapsed{0};                 // how long the round and the raising of fences took
  std::vector<std::string> servers;  // each server's name, for messages
};

// The end of an acquire round: first what to give back where (nothing
// stays half-held; giving back never wakes waiters unless announced), then
// the error to throw, or else the outcome to return.
struct AcquireResult {
  std::vector<bool> release_fresh;  // release the round's new token here
  std::vector<bool> undo_reentry;   // release one level of the re-entered token here
  bool announce_release = false;    // the release of the new token tells waiters it is free
  std::optional<Error> error;
  AcquireOutcome outcome;
};

}  // namespace redlock::lock
