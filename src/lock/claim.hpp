#pragma once

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
};

// "exclusive", "semaphore" or "shared": the mode's name in the lock's hash.
[[nodiscard]] const char* mode_name(Claim::Mode mode);

}  // namespace redlock::lock
