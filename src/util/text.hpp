#pragma once

#include <string>
#include <string_view>

namespace redlock {

inline constexpr size_t k_max_name_bytes = 512;

// Checks a lock name: 1 to 512 bytes of valid UTF-8 with no control
// characters and no braces. Throws UsageError with the reason.
void validate_name(std::string_view name);

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates).
[[nodiscard]] bool is_valid_utf8(std::string_view s);

// Makes text safe to print on a terminal: control characters, DEL and invalid
// UTF-8 bytes become \n, \t, \xNN escapes; a backslash becomes "\\".
[[nodiscard]] std::string escape_for_terminal(std::string_view s);

// Replaces the password of every URL in `s` ("scheme://user:password@…")
// with "***", so a command line recorded for `status` never shows one.
[[nodiscard]] std::string redact_url_passwords(std::string_view s);

}  // namespace redlock
