#pragma once

#include <optional>
#include <variant>

#include "lock/locker.hpp"

namespace redlock::lock {

// The wait was cut short by the cancel descriptor (a signal): nothing is held.
struct Interrupted {};

using WaitOutcome = std::variant<Acquired, Busy, Interrupted>;

// Tries to acquire `name`, waiting up to `wait` (nullopt: forever) without
// polling (safety promise 4): after a busy answer it subscribes to the lock's
// release channel on every server and sleeps until a release message
// arrives or the holder's PTTL runs out (plus a little jitter), then tries
// again. A zero wait is exactly one try. When `cancel_fd` becomes readable
// the wait ends at once with Interrupted, holding nothing.
[[nodiscard]] WaitOutcome acquire_waiting(Locker& locker, const std::string& name, Millis ttl,
                                          const std::string& reenter, const Owner& owner, std::optional<Millis> wait,
                                          int cancel_fd, const Claim& claim = Claim{});

}  // namespace redlock::lock
