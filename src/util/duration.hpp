#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace redlock {

using Millis = std::chrono::milliseconds;

// Parses "250ms", "30s", "2m", "1h", "1m30s", "1.5s" or a bare (possibly
// fractional) number of seconds. Rejects empty, negative, unknown units and
// values over ~100 years. Throws UsageError naming `what` (e.g. "--ttl").
[[nodiscard]] Millis parse_duration(std::string_view text, std::string_view what);

// As parse_duration, but also accepts "inf"/"infinity"/"forever" (nullopt = no limit).
[[nodiscard]] std::optional<Millis> parse_wait(std::string_view text, std::string_view what);

// Renders a duration for people: "850ms", "12.5s", "2m3s", "1h2m".
[[nodiscard]] std::string format_duration(Millis d);

// A moment (milliseconds since the epoch, a server's TIME) as every text
// line of redlock's shows one: RFC 3339 in UTC to the second,
// "2026-12-05T02:33:39Z". The same for every host that reads it, whatever
// its zone, and sortable as text.
[[nodiscard]] std::string format_time(long long ms);

}  // namespace redlock
