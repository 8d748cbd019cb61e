#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redis/connection.hpp"

namespace redlock::redis {

enum class RunResult { k_settled, k_woken, k_deadline, k_cancelled };

// A descriptor (>= 0) that cancels every wait below that is given no
// `cancel_fd` of its own: the process's stop signals, so that SIGINT,
// SIGTERM or SIGHUP ends any round trip at once. -1 (the default): none.
void set_stop_fd(int fd);

// Drives every connection in one poll() loop until each one has all its
// replies or has failed (each bounded by its own timeouts), so N servers cost
// one round trip, not N. If `cancel_fd` (>= 0; else the stop descriptor)
// becomes readable first, writes what it can of the queued commands without
// blocking and returns k_cancelled, failing unsettled connections (see
// Connection::fail_cancelled).
RunResult run_all(std::span<Connection* const> conns, int cancel_fd = -1);

// Waits until any connection has a reply, fails or is closed by its peer (k_woken), `until` passes
// (k_deadline), or `cancel_fd` is readable (k_cancelled). For subscribers.
RunResult wait_any(std::span<Connection* const> conns, std::optional<TimePoint> until, int cancel_fd = -1);

// Reads what has already arrived on `conns`, without waiting (poll() with
// no timeout): a subscriber that is not waited on keeps up.
void read_arrived(std::span<Connection* const> conns);

// One command on one connection, waited for: the reply, or a thrown Error
// (69 unavailable, 77 refused; 69 too when cancelled by the stop
// descriptor). Error replies are returned, not thrown.
[[nodiscard]] Reply call(Connection& conn, const std::vector<std::string>& argv);

}  // namespace redlock::redis
