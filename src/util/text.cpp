#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "util/exit_status.hpp"

namespace redlock {
namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 if it is invalid;
// `code_point` (if given) receives the character.
size_t utf8_len(std::string_view s, size_t i, char32_t* code_point = nullptr) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n;
  unsigned int cp;
  if (c < 0x80) {
    if (code_point != nullptr) {
      *code_point = c;
    }
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
  if (code_point != nullptr) {
    *code_point = static_cast<char32_t>(cp);
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

namespace {

// Whether UTF-8 `s` holds a C0 or C1 control character or DEL.
bool has_control(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    // C1 controls (U+0080..U+009F, "\xc2\x80".."\xc2\x9f") are control characters too.
    bool c1 = c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0;
    if (is_control(c) || c1) {
      return true;
    }
  }
  return false;
}

}  // namespace

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
  if (has_control(name)) {
    throw UsageError(fmt::format("invalid lock name '{}': it contains a control character", escape_for_terminal(name)));
  }
}

void validate_text(std::string_view text, std::string_view option, size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw UsageError(fmt::format("{}: {} bytes is too long (at most {})", option, text.size(), max_bytes));
  }
  if (!is_valid_utf8(text)) {
    throw UsageError(fmt::format("{}: the text is not valid UTF-8", option));
  }
  if (has_control(text)) {
    throw UsageError(fmt::format("{} '{}': it contains a control character (it must fit on one line)", option,
                                 escape_for_terminal(text)));
  }
}

std::string spoken_list(const std::vector<std::string>& items, size_t at_most) {
  const size_t named = std::min(items.size(), std::max<size_t>(at_most, 1));
  std::string out;
  for (size_t i = 0; i < named; ++i) {
    out += (i == 0 ? "" : (i + 1 == named && named == items.size()) ? " and " : ", ") + items[i];
  }
  if (named < items.size()) {
    out += fmt::format(" and {} more", items.size() - named);
  }
  return out;
}

namespace {

// The format characters (general category Cf) and the line and paragraph
// separators (Zl, Zp) of Unicode 15, as sorted ranges: invisible, yet some
// reorder the text around them (U+202E turns the rest of a line around),
// join or split words (U+200B: "deploy" and "deploy\u200b" are two names
// that look alike) or end a line (U+2028).
struct Range {
  char32_t first;
  char32_t last;
};
constexpr Range k_format_characters[] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},   {0x070f, 0x070f},
    {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},   {0x200b, 0x200f},   {0x2028, 0x202e},
    {0x2060, 0x2064},   {0x2066, 0x206f},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
    {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f},
};

bool is_format_character(char32_t cp) {
  const auto* after = std::upper_bound(std::begin(k_format_characters), std::end(k_format_characters), cp,
                                       [](char32_t c, const Range& r) { return c < r.first; });
  return after != std::begin(k_format_characters) && cp <= (after - 1)->last;
}

std::string escape(std::string_view s, bool backslashes) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp = 0;
    size_t n = utf8_len(s, i, &cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    if (c == '\\' && backslashes) {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (n == 1 && is_control(c)) {
      out += fmt::format("\\x{:02x}", c);
    } else if ((cp >= 0x80 && cp <= 0x9f) || is_format_character(cp)) {
      // C1 controls are terminal controls too; format characters and
      // separators are invisible or move the text around them. Both are
      // shown by number: a name may hold them, the terminal must not act.
      out += cp <= 0xffff ? fmt::format("\\u{:04x}", static_cast<unsigned int>(cp))
                          : fmt::format("\\U{:08x}", static_cast<unsigned int>(cp));
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string escape_for_terminal(std::string_view s) {
  return escape(s, true);
}

std::string escape_controls(std::string_view s) {
  return escape(s, false);
}

std::string escape_command(std::string_view s) {
  return escape(s, false);
}

std::string make_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_len(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string truncate_utf8(std::string_view s, size_t max_bytes) {
  size_t cut = 0;
  while (cut < s.size()) {
    size_t n = std::max<size_t>(1, utf8_len(s, cut));
    if (cut + n > max_bytes) {
      break;
    }
    cut += n;
  }
  return std::string(s.substr(0, cut));
}

namespace {

bool opens_character(char c) {
  return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
}

}  // namespace

size_t text_columns(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), opens_character));
}

std::string fit_columns(std::string_view s, size_t columns) {
  if (columns == 0 || text_columns(s) <= columns) {
    return std::string(s);
  }
  // The first columns - 1 characters, and the ellipsis.
  size_t kept = 0;
  size_t end = 0;
  for (; end < s.size(); ++end) {
    if (opens_character(s[end]) && kept++ == columns - 1) {
      break;
    }
  }
  return std::string(s.substr(0, end)) + std::string(k_cut_mark);
}

std::string wrap_words(std::string_view text, size_t columns, std::string_view indent) {
  if (columns == 0) {
    return std::string(text) + "\n";
  }
  std::string out;
  std::string line;
  size_t used = 0;  // columns of `line`
  const auto end_line = [&] {
    out += line + "\n";
    line = std::string(indent);
    used = text_columns(indent);
  };
  bool line_empty = true;  // nothing but the indent on `line` yet
  size_t at = 0;
  while (at < text.size()) {
    const size_t word_end = std::min(text.find(' ', at), text.size());
    const std::string_view word = text.substr(at, word_end - at);
    at = word_end + 1;
    if (word.empty()) {
      continue;
    }
    const size_t width = text_columns(word);
    if (!line_empty && used + 1 + width > columns) {
      end_line();
      line_empty = true;
    }
    if (!line_empty) {
      line += ' ';
      ++used;
    }
    line += word;
    used += width;
    line_empty = false;
  }
  out += line + "\n";
  return out;
}

}  // namespace redlock
