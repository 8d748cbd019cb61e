// Duration parsing (--ttl, --wait, --kill-after, ...): any input is either
// a UsageError or a duration within the documented bounds that
// format_duration can print. Also the integers read back from Redis
// (parse_integer): a number parsed once reads back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/duration.hpp"
#include "util/exit_status.hpp"
#include "util/number.hpp"

namespace {

// Just over the documented limit of ~100 years.
constexpr auto k_limit = std::chrono::hours(24 * 366 * 100);

void check(redlock::Millis d) {
  if (d < redlock::Millis(0) || d > k_limit || redlock::format_duration(d).empty()) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check(redlock::parse_duration(text, "--ttl"));
  } catch (const redlock::UsageError&) {
  }
  try {
    if (auto d = redlock::parse_wait(text, "--wait")) {
      check(*d);
    }
  } catch (const redlock::UsageError&) {
  }
  if (auto n = redlock::parse_integer(text)) {
    if (redlock::parse_integer(std::to_string(*n)) != n) {
      std::abort();
    }
  }
  // Any count of milliseconds prints, negative and extreme ones included.
  if (size >= sizeof(long long)) {
    long long ms = 0;
    __builtin_memcpy(&ms, data, sizeof ms);
    if (redlock::format_duration(redlock::Millis(ms)).empty()) {
      std::abort();
    }
  }
  return 0;
}
