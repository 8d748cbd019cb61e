#pragma once

#include <string>
#include <string_view>

#include "util/duration.hpp"

namespace redlock::lock {

// What kind of hold is asked for: the lock itself (exclusive, the writer
// of a readers/writer lock), one of `limit` places of a counting semaphore,
// or a reader's share.
struct Claim {
  enum class Mode { k_exclusive, k_semaphore, k_shared };
  Mode mode = Mode::k_exclusive;
  int limit = 1;
  // A plain lock's minimum hold (exec --hold-at-least): its first expiry is
  // at least this long, whatever the TTL.
  Millis min_hold{0};
  // Fair waiting: a newcomer is busy at once, and not put in line, when
  // this many already wait there (0: no bound).
  int max_waiters = 0;
  // The run ledger (ledger.hpp): a new hold starts a run (exec, unless
  // --no-history), and a free lock is not taken when the last ok run ended
  // within skip_ok_within (exec --skip-if-ok-within; 0: always taken).
  bool record_run = false;
  // With record_run, the acquire only checks the ledger and the run begins
  // later (Locker::start_run): exec of several names, once every name is
  // held, so that one that dies while it waits leaves no run.
  bool run_later = false;
  Millis skip_ok_within{0};
  // Whether the acquire itself starts a run, which giving back unused drops.
  [[nodiscard]] bool starts_run() const { return record_run && !run_later; }
  // The token a free lock is taken under: "" for a new random one; a lock
  // of several names takes each under the token of the first it took.
  std::string token = {};
};

// "exclusive", "semaphore" or "shared": the mode's name in the lock's hash,
// the scripts' arguments and replies, and what redlock prints.
[[nodiscard]] const char* mode_name(Claim::Mode mode);

// The mode a name stands for (mode_name's inverse). Any other name reads as
// exclusive, the plain lock's layout, as the scripts read it.
[[nodiscard]] Claim::Mode mode_named(std::string_view name);

}  // namespace redlock::lock
