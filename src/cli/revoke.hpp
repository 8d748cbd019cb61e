#pragma once

// Revoking a lock's holders and waiting for them to give it back: the
// revoke subcommand, and exec --on-busy replace (with whether the
// replacement may run at all).

#include <optional>
#include <string>

#include "lock/locker.hpp"
#include "util/duration.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

// How a revoke ended; `said` is the line that says so (for stdout or
// stderr, without its newline).
struct Revoked {
  enum class Kind {
    k_given_back,  // the holders asked no longer hold it (some may have been broken after the grace)
    k_still_held,  // an exec still holds it after the grace
    k_not_held,    // nobody held it
    k_stopped,     // a stop signal came while waiting (`signal`)
  };
  Kind kind = Kind::k_not_held;
  int signal = 0;
  std::string said;
};

// Asks the holders of `name` to give it back within `grace` (nullopt:
// their own --kill-after, waiting 10s), by `by`, and waits until they have
// (polling the lock, at most the grace and a second more); a holder that
// listens for none (not an exec) is then broken, only that hold.
[[nodiscard]] Revoked revoke_holders(lock::Locker& locker, const std::string& name, const lock::Owner& by,
                                     std::optional<Millis> grace, SignalFd& signals);

// Why an acquire of `name` by a newcomer as `claim` would be refused
// whoever holds it: the name suspended, the last ok run within
// claim.skip_ok_within, or claim.max_waiters already in line (on more
// servers than a grant can do without); nullopt when none of these.
// --on-busy replace asks before it revokes: a replacement that may not
// run must not stop the run it would replace. It reads what status and
// the ledger read, so it lives above both.
[[nodiscard]] std::optional<lock::Busy> refusal(lock::Locker& locker, const std::string& name,
                                                const lock::Claim& claim);

}  // namespace redlock::cli
