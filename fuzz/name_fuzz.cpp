// Lock-name validation and the text helpers every name passes through on
// its way to a terminal: a valid name is 1-512 bytes of UTF-8 without control
// characters, and escaping anything gives printable, valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/exit_status.hpp"
#include "util/text.hpp"

namespace {

bool printable(std::string_view s) {
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      return false;
    }
  }
  return redlock::is_valid_utf8(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  bool valid = true;
  try {
    redlock::validate_name(text);
  } catch (const redlock::UsageError&) {
    valid = false;
  }
  if (valid && (text.empty() || text.size() > redlock::k_max_name_bytes || !redlock::is_valid_utf8(text))) {
    std::abort();
  }
  if (!printable(redlock::escape_for_terminal(text))) {
    std::abort();
  }
  // Redaction only ever shortens a password to "***"; it never drops the rest.
  const std::string redacted = redlock::redact_url_passwords(text);
  if (text.find("://") == std::string_view::npos && redacted != text) {
    std::abort();
  }
  return 0;
}
