#include "util/duration.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <ctime>
#include <string>

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

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// The number at text[i…] ("12", "1.5", ".5"); moves i past it.
double take_number(std::string_view text, size_t& i, std::string_view what) {
  const size_t start = i;
  bool dot = false;
  while (i < text.size() && (is_digit(text[i]) || (text[i] == '.' && !dot))) {
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
  return std::stod(std::string(number));
}

// The unit at text[i…] (letters, maybe none); moves i past it.
std::string_view take_unit(std::string_view text, size_t& i) {
  const size_t start = i;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
    ++i;
  }
  return text.substr(start, i - start);
}

// Milliseconds per `unit`. No unit means seconds, but only for a number
// that is the whole text (`alone`): "1m30" is a mistake, not 1m30s.
double multiplier(std::string_view text, std::string_view what, std::string_view unit, bool alone) {
  if (unit.empty()) {
    if (!alone) {
      bad(text, what, "missing unit");
    }
    return 1000;
  }
  const double ms = unit_ms(unit);
  if (ms < 0) {
    bad(text, what, fmt::format("unknown unit '{}'", unit));
  }
  return ms;
}

}  // namespace

Millis parse_duration(std::string_view text, std::string_view what) {
  if (text.empty()) {
    bad(text, what, "empty");
  }
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const bool first = i == 0;
    const double value = take_number(text, i, what);
    const std::string_view unit = take_unit(text, i);
    total += value * multiplier(text, what, unit, first && i == text.size());
    if (!std::isfinite(total) || total > k_max_ms) {
      bad(text, what, "too large");
    }
  }
  // Rounded to the nearest millisecond (total is never negative). Not
  // std::llround: it is the only thing redlock would need libm for, and
  // mapping libm costs every call a little.
  auto whole = static_cast<long long>(total);
  if (total - static_cast<double>(whole) >= 0.5) {
    ++whole;
  }
  return Millis(whole);
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

std::string format_time(long long ms) {
  // Floor division: a moment before the epoch still names its own second.
  const long long secs = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
  const auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  char out[32] = {};
  if (gmtime_r(&t, &tm) == nullptr || std::strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
    return "?";
  }
  return out;
}

}  // namespace redlock
