#pragma once

// What status's table, JSON and metrics all say of a lock's verdict (their
// files: status_table.cpp, status_format.cpp, status_metrics.cpp).

#include <string>

#include "status/verdict.hpp"

namespace redlock::cli {

// held, free or foreign.
[[nodiscard]] const char* state_name(status::Verdict::State s);

// What one server says of the lock: held, free, foreign or unreachable.
[[nodiscard]] std::string server_state(const lock::ServerView& s);

// How long holder `h` has held the lock (server time), in milliseconds.
[[nodiscard]] long long age_of(const status::Verdict& v, const lock::HolderView& h);

// The revoke pending for holder `h`, if any (nullptr).
[[nodiscard]] const lock::PendingRevoke* revoke_of(const status::Verdict& v, const lock::HolderView& h);

}  // namespace redlock::cli
