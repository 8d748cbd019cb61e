#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redis/connection.hpp"

namespace redlock::redis {

enum class RunResult { k_settled, k_woken, k_deadline, k_cancelled };

// Drives every connection in one poll() loop until each one has all its
// replies or has failed (each bounded by its own timeouts), so N servers cost
// one round trip, not N. If `cancel_fd` (>= 0) becomes readable first, stops
// and returns k_cancelled, failing (and closing) unsettled connections.
RunResult run_all(std::span<Connection* const> conns, int cancel_fd = -1);

// Waits until any connection has a reply or fails (k_woken), `until` passes
// (k_deadline), or `cancel_fd` is readable (k_cancelled). For subscribers.
RunResult wait_any(std::span<Connection* const> conns, std::optional<TimePoint> until, int cancel_fd = -1);

// One command on one connection, waited for: the reply, or a thrown Error
// (69 unavailable, 77 refused). Error replies are returned, not thrown.
[[nodiscard]] Reply call(Connection& conn, const std::vector<std::string>& argv);

}  // namespace redlock::redis
