#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redis/connection.hpp"
#include "util/cancel.hpp"

namespace redlock::redis {

enum class RunResult { k_settled, k_woken, k_deadline, k_cancelled };

// Drives every connection in one poll() loop until each one has all its
// replies or has failed (each bounded by its own timeouts), so N servers cost
// one round trip, not N. If `cancel` comes first (a stop signal), writes
// what it can of the queued commands without blocking and returns
// k_cancelled, failing unsettled connections (see
// Connection::fail_cancelled).
RunResult run_all(std::span<Connection* const> conns, const Cancel& cancel);

// As run_all, but also ends as soon as `enough()` says so (asked after each
// wake, once the connections whose phase timed out have failed: k_woken) or
// `until` passes (k_deadline). Connections still unsettled then are left as
// they are, in flight: the caller waits for them again, or gives up on them
// (Connection::abandon). One loop for many servers whose caller needs only
// some of them, such as a Redlock round that a majority decides.
RunResult run_until(std::span<Connection* const> conns, const std::function<bool()>& enough,
                    std::optional<TimePoint> until, const Cancel& cancel);

// Waits until any connection has a reply, fails or is closed by its peer
// (k_woken), `until` passes (k_deadline), or `cancel` comes (k_cancelled).
// For subscribers.
RunResult wait_any(std::span<Connection* const> conns, std::optional<TimePoint> until, const Cancel& cancel);

// Reads what has already arrived on `conns`, without waiting (poll() with
// no timeout): a subscriber that is not waited on keeps up.
void read_arrived(std::span<Connection* const> conns);

// One command on one connection, waited for: the reply, or a thrown Error
// (69 unavailable, 77 refused; 69 too when the connection's Cancel cut it
// short). Error replies are returned, not thrown.
[[nodiscard]] Reply call(Connection& conn, const std::vector<std::string>& argv);

}  // namespace redlock::redis
