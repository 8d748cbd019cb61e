#pragma once

// Each server's answer to one round, as the reply readers (answers.cpp)
// decode it: the votes that the quorum (quorum.hpp) decides from.

#include <optional>
#include <string>
#include <vector>

#include "lock/claim.hpp"
#include "lock/view.hpp"
#include "redis/failure.hpp"
#include "util/duration.hpp"

namespace redlock::lock {

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

// One server's answer to the raise_fence script: raised, or why not.
struct RaiseVote {
  std::optional<redis::Failure> failure;
};

// One server's answer to the release script: a release, or the end of a hold.
struct ReleaseVote {
  enum class Kind { k_released, k_decremented, k_kept, k_floor, k_not_held, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  long long levels = 0;  // released / decremented / kept: the re-entry levels dropped; floor: the levels held
  Millis kept{0};        // kept: how long the lock stays held for its minimum hold
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

// One server's answer to the renew script.
struct RenewVote {
  enum class Kind { k_renewed, k_not_held, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  Claim claim;      // renewed: the mode (and limit) the lock is held in
  Millis lease{0};  // renewed: the lease it has there now (never shortened: it may exceed the TTL asked for)
  std::string foreign_type;
  std::optional<redis::Failure> failure;
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

// One server's answer to the suspend script.
struct MarkVote {
  enum class Kind { k_suspended, k_resumed, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  long long until_ms = -1;  // suspended
  long long now_ms = 0;     // suspended
  bool was = false;         // resumed: it was suspended there
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

// A holder that a revoke asked to give the lock back, as one server named
// it: its run id (lock::hold_id of its token; "" for a lock kept under no
// token), who runs it, since when (server ms), and whether an exec heard
// it on the run's own channel.
struct RevokedHolder {
  std::string run;
  std::string host, pid, cmd;
  long long since_ms = 0;
  bool listening = false;
};

// One server's answer to the revoke script.
struct RevokeVote {
  enum class Kind { k_revoking, k_free, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  long long listeners = 0;
  long long now_ms = 0;
  long long heard = 0;  // on the runs' own channels, all together
  std::vector<RevokedHolder> asked;
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};

}  // namespace redlock::lock
