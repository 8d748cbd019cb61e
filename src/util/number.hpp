#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace redlock {

// A whole decimal number (optional '-'), or nullopt for anything else,
// including out-of-range values and surrounding text.
[[nodiscard]] inline std::optional<long long> parse_integer(std::string_view s) {
  long long v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || s.empty()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace redlock
