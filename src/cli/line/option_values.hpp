#pragma once

// The values of the command line's options, read from their text: each
// parser throws a UsageError (exit 64) in redlock's own words for a value
// that cannot be one, naming the option. cli/line/options.cpp binds them to the
// options; they know nothing of CLI11.

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "exec/policy.hpp"
#include "util/duration.hpp"

namespace redlock::cli {

// A whole number from `lo` to `hi` given to `option`.
[[nodiscard]] int parse_whole_number(const std::string& text, const char* option, int lo, int hi);

// --ttl: a duration of at least 10ms.
[[nodiscard]] Millis parse_ttl(const std::string& text);

// --connect-timeout and --timeout: a duration of at least 1ms.
[[nodiscard]] Millis parse_timeout(const std::string& text, const char* what);

// A bound that must be more than nothing (--max-runtime, --warn-after,
// --stale-after): a duration of at least 1ms.
[[nodiscard]] Millis parse_bound(const std::string& text, const char* option);

// status --format: table, json or prometheus.
[[nodiscard]] StatusFormat parse_format(const std::string& text);

// status --sort: name, age or ttl.
[[nodiscard]] StatusSort parse_sort(const std::string& text);

// status -o/--columns: each a comma-separated list of the table's column
// names (any case), in the order to show them; several lists add up.
[[nodiscard]] std::vector<StatusColumn> parse_columns(const std::vector<std::string>& lists);

// status --interval: a duration of at least 100ms.
[[nodiscard]] Millis parse_interval(const std::string& text);

// --log-format (and $REDLOCK_LOG_FORMAT): text or json.
[[nodiscard]] LogFormat parse_log_format(const std::string& text, const char* where);

// --syslog-facility: user, daemon, local0 ... local7, ... (syslog(3)).
[[nodiscard]] int parse_syslog_facility(const std::string& text, const char* where);

// exec --on-lost: term, kill or ignore.
[[nodiscard]] exec::OnLost parse_on_lost(const std::string& s);
// --on-busy: "fail" (false) or "replace" (true).
[[nodiscard]] bool parse_on_busy(const std::string& s);

}  // namespace redlock::cli
