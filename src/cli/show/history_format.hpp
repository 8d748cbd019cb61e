#pragma once

// What `history` (and `history --max-age`, once `overdue`), exec and
// `status` say of a lock's runs (the run ledger, lock/ledger.hpp), as pure
// functions: no I/O, and no clock but the server's, which the caller passes.

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ledger/runs.hpp"
#include "lock/ledger.hpp"

namespace redlock::cli {

// How a run ended, in words: "ok", "failed (exit 3)", "signalled (9)",
// "lost (74)", "running", "abandoned", "timed-out", "revoked".
[[nodiscard]] std::string outcome_text(const lock::Run& run);

// One run in one line for a human, as exec and status name a run: its
// outcome, where, when and how long ("ok on web-3, 3h ago, took 12s").
[[nodiscard]] std::string run_summary(const lock::Run& run, long long now_ms);

// history's table: a header and one line per run, newest first (host and
// command escaped for a terminal), each started at format_time. With a
// `width` (a terminal's), it fits: CMD is cut with "…" first, then left
// out, then PID and TOOK, and HOST is cut last; 0 (a pipe) keeps every
// column whole.
[[nodiscard]] std::string history_table(const std::vector<lock::Run>& runs, long long now_ms, size_t width = 0);

// A run as JSON (documented field by field in the README, checked by
// tests/shell/json_fields.sh).
[[nodiscard]] nlohmann::json run_json(const lock::Run& run);

// history --json: the array of runs, indented by two, with a final newline.
[[nodiscard]] std::string history_json(const std::vector<lock::Run>& runs);

// overdue --json: the decision as one object, with a final newline.
[[nodiscard]] std::string overdue_json(const std::string& name, const ledger::Overdue& d, Millis max_age);

// overdue's one line: whether NAME's last ok run is within `max_age`, and which.
[[nodiscard]] std::string overdue_line(const std::string& name, const ledger::Overdue& d, Millis max_age);

}  // namespace redlock::cli
