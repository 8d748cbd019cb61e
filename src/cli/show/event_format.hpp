#pragma once

// How `redlock events` writes an event: one line for people, or one JSON
// object a line (man redlock: EVENTS, JSON OUTPUT).

#include <string>

#include "events/events.hpp"

namespace redlock::cli {

// "2026-12-02T13:45:01.123Z acquired deploy host=web-3 pid=4411 fence=17...
// ...": the server's time (UTC), the kind, the name, then the fields (host,
// pid and fence first), each escaped so that no value can start a line or
// drive the terminal; a value with spaces or quotes is quoted. With a
// newline.
[[nodiscard]] std::string event_line(const events::Event& e);

// {"event":…,"name":…,"time":…,"time_ms":…,"host":…,"pid":…,"fence":…,…}
// on one line, with a newline: numbers as numbers, text that is not UTF-8
// replaced.
[[nodiscard]] std::string event_json(const events::Event& e);

// The server's time `ms` (since the epoch) as 2026-12-02T13:45:01.123Z.
[[nodiscard]] std::string utc_time(long long ms);

}  // namespace redlock::cli
