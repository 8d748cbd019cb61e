#pragma once

// How `redlock events` writes an event: one line for people, or one JSON
// object a line (man redlock: EVENTS, JSON OUTPUT).

#include <string>

#include "events/events.hpp"

namespace redlock::cli {

// "2026-12-02T13:45:01Z acquired deploy host=web-3 pid=4411 fence=17...
// ...": the server's time (format_time: UTC, to the second, as status and
// history write a time), the kind, the name, then the fields (host,
// pid and fence first), each escaped so that no value can start a line or
// drive the terminal; a value with spaces or quotes is quoted. With a
// newline.
[[nodiscard]] std::string event_line(const events::Event& e);

// {"event":…,"name":…,"time":…,"time_ms":…,"host":…,"pid":…,"fence":…,…}
// on one line, with a newline: numbers as numbers, text that is not UTF-8
// replaced.
[[nodiscard]] std::string event_json(const events::Event& e);

// The server's time `ms` (since the epoch) as 2026-12-02T13:45:01.123Z:
// the "time" of --json, to the millisecond.
[[nodiscard]] std::string utc_time(long long ms);

}  // namespace redlock::cli
