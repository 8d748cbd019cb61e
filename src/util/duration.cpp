#include "util/duration.hpp"

#include <fmt/format.h>

#include <cmath>

#include "util/exit_status.hpp"

namespace redlock {
namespace {

constexpr double k_max_ms = 100.0 * 365 * 24 * 3600 * 1000;

[[noreturn]] void bad(std::string_view text, std::string_view what, std::string_view why) {
  throw UsageError(
      fmt::format("invalid duration '{}' for {}: {} (use e.g. 250ms, 30s, 2m, 1h, 1d, 1m30s)", text, what, why));
}

// Unit multipliers in milliseconds; "ms" must be tried before "m".
double unit_ms(std::string_view unit) {
  if (unit == "ms")
    return 1;
  if (unit == "s")
    return 1000;
  if (unit == "m")
    return 60'000;
  if (unit == "h")
    return 3'600'000;
  if (unit == "d")  // as status prints long ages and TTLs
    return 86'400'000;
  return -1;
}

}  // namespace

Millis parse_duration(std::string_view text, std::string_view what) {
  if (text.empty()) {
    bad(text, what, "empty");
  }
  double total = 0;
  size_t i = 0;
  bool any_unit = false;
  while (i < text.size()) {
    size_t start = i;
    bool dot = false;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !dot))) {
      dot = dot || text[i] == '.';
      ++i;
    }
    std::string_view number = text.substr(start, i - start);
    if (number.empty() || number == ".") {
      bad(text, what, text[start] == '-' ? "must not be negative" : "expected a number");
    }
    if (number.size() > 20) {
      bad(text, what, "too large");
    }
    double value = std::stod(std::string(number));
    size_t ustart = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    std::string_view unit = text.substr(ustart, i - ustart);
    if (unit.empty()) {
      if (any_unit || i != text.size()) {
        bad(text, what, "missing unit");
      }
      total += value * 1000;  // a bare number is seconds
      break;
    }
    double mult = unit_ms(unit);
    if (mult < 0) {
      bad(text, what, fmt::format("unknown unit '{}'", unit));
    }
    any_unit = true;
    total += value * mult;
    if (!std::isfinite(total) || total > k_max_ms) {
      bad(text, what, "too large");
    }
  }
  if (!std::isfinite(total) || total > k_max_ms) {
    bad(text, what, "too large");
  }
  return Millis(static_cast<long long>(std::llround(total)));
}

std::optional<Millis> parse_wait(std::string_view text, std::string_view what) {
  if (text == "inf" || text == "infinity" || text == "forever") {
    return std::nullopt;
  }
  return parse_duration(text, what);
}

std::string format_duration(Millis d) {
  const long long signed_ms = d.count();
  // The magnitude as unsigned, so that even the smallest long long negates.
  const unsigned long long ms =
      signed_ms < 0 ? 0ULL - static_cast<unsigned long long>(signed_ms) : static_cast<unsigned long long>(signed_ms);
  const char* sign = signed_ms < 0 ? "-" : "";
  if (ms < 1000) {
    return fmt::format("{}{}ms", sign, ms);
  }
  if (ms < 59'950) {  // below what rounds to "60.0s": that reads as 1m
    const unsigned long long tenths = (ms + 50) / 100;
    if (tenths % 10 == 0) {
      return fmt::format("{}{}s", sign, tenths / 10);
    }
    return fmt::format("{}{}.{}s", sign, tenths / 10, tenths % 10);
  }
  const unsigned long long s = ms / 1000 + (ms % 1000 >= 500 ? 1 : 0);
  if (s < 3600) {
    return s % 60 ? fmt::format("{}{}m{}s", sign, s / 60, s % 60) : fmt::format("{}{}m", sign, s / 60);
  }
  const unsigned long long m = s / 60;
  if (m < 48ULL * 60) {
    return m % 60 ? fmt::format("{}{}h{}m", sign, m / 60, m % 60) : fmt::format("{}{}h", sign, m / 60);
  }
  return fmt::format("{}{}d{}h", sign, m / 1440, (m / 60) % 24);
}

}  // namespace redlock
