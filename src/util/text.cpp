#include "util/text.hpp"

#include <fmt/format.h>

#include "util/exit_status.hpp"

namespace redlock {
namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 if it is invalid.
size_t utf8_len(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n;
  unsigned int cp;
  if (c < 0x80) {
    return 1;
  } else if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) {
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  static constexpr unsigned int k_min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < k_min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return n;
}

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_len(s, i);
    if (n == 0) {
      return false;
    }
    i += n;
  }
  return true;
}

void validate_name(std::string_view name) {
  if (name.empty()) {
    throw UsageError("invalid lock name: it is empty (a name is 1 to 512 bytes)");
  }
  if (name.size() > k_max_name_bytes) {
    throw UsageError(
        fmt::format("invalid lock name: {} bytes is too long (at most {})", name.size(), k_max_name_bytes));
  }
  if (!is_valid_utf8(name)) {
    throw UsageError("invalid lock name: it is not valid UTF-8");
  }
  // Braces would let two (prefix, name) pairs share a key ("a" + "b}{c" and
  // "a{b}" + "c") and move a name's keys out of their one hash slot.
  if (name.find_first_of("{}") != std::string_view::npos) {
    throw UsageError(fmt::format("invalid lock name '{}': it contains '{{' or '}}' (they mark Redis hash tags)",
                                 escape_for_terminal(name)));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    // C1 controls (U+0080..U+009F, "\xc2\x80".."\xc2\x9f") are control characters too.
    bool c1 = c == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) < 0xa0;
    if (is_control(c) || c1) {
      throw UsageError(
          fmt::format("invalid lock name '{}': it contains a control character", escape_for_terminal(name)));
    }
  }
}

std::string escape_for_terminal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_len(s, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    if (n == 1) {
      if (c == '\\') {
        out += "\\\\";
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else if (is_control(c)) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out.push_back(static_cast<char>(c));
      }
    } else {
      // C1 controls (U+0080..U+009F) are terminal controls too.
      if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      } else {
        out.append(s.substr(i, n));
      }
    }
    i += n;
  }
  return out;
}

std::string redact_url_passwords(std::string_view s) {
  std::string out;
  size_t done = 0;
  for (size_t sep = s.find("://"); sep != std::string_view::npos; sep = s.find("://", sep + 3)) {
    // The authority runs to the next '/', whitespace or quote; userinfo ends at its last '@'.
    size_t start = sep + 3;
    size_t end = s.find_first_of("/ \t\n'\"", start);
    std::string_view authority = s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    size_t at = authority.rfind('@');
    if (at == std::string_view::npos) {
      continue;
    }
    size_t colon = authority.find(':');
    size_t secret_from = colon != std::string_view::npos && colon < at ? colon + 1 : 0;  // "user:pw@" or "pw@"
    out.append(s.substr(done, start + secret_from - done));
    out += "***";
    done = start + at;
  }
  out.append(s.substr(done));
  return out;
}

}  // namespace redlock
