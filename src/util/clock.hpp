#pragma once

#include <chrono>

namespace redlock {

// Every local deadline is on the monotonic clock; anything shared between
// hosts is on the server's TIME instead.
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

}  // namespace redlock
