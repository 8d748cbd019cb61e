#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>

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
  // The keys are <prefix>{NAME}...: their hash tag runs from the first '{'
  // to the first '}' after it, the same for every key of the lock (one
  // Cluster slot), and two names under one prefix never share a key. Under
  // a prefix without braces (the default) the tag is NAME up to its first
  // '}': a name that starts with '}' would leave it empty, and Redis would
  // hash each whole key, scattering the lock's keys over several slots.
  if (name.front() == '}') {
    throw UsageError(
        fmt::format("invalid lock name '{}': it starts with '}}', which would leave its keys without a Redis hash tag",
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

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Where the scheme of the URL whose "://" is at `sep` starts.
size_t scheme_start(std::string_view s, size_t sep) {
  size_t i = sep;
  while (i > 0 && is_scheme_char(s[i - 1])) {
    --i;
  }
  return i;
}

// True for the name of a setting or an option that holds a secret: it
// contains PASS, SECRET, TOKEN, KEY or AUTH, in any case.
bool names_secret(std::string_view name) {
  std::string lower;
  for (char c : name) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (const char* word : {"pass", "secret", "token", "key", "auth"}) {
    if (lower.find(word) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// "NAME=" or "--name=" at the start of `word`: the length up to and
// including '=' when NAME names a secret, else 0.
size_t secret_assignment(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return 0;
  }
  std::string_view name = word.substr(0, eq);
  size_t dashes = name.find_first_not_of('-');  // npos (all dashes) is > 2 too
  if (dashes > 2) {
    return 0;
  }
  for (char c : name.substr(dashes)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return 0;
    }
  }
  return names_secret(name) ? eq + 1 : 0;
}

// An option whose next word is a secret: redis-cli's -a, or any --option
// (or -option) whose name names a secret, given without "=".
bool secret_option(std::string_view word) {
  if (word == "-a") {
    return true;
  }
  size_t name = word.find_first_not_of('-');
  if (word.size() < 2 || word[0] != '-' || name == std::string_view::npos || word.find('=') != std::string_view::npos) {
    return false;  // not an option, "--" alone, or --name=value
  }
  return names_secret(word.substr(name));
}

// The end of the shell word starting at `i`: unquoted whitespace ends it;
// '…' and "…" (with backslash escapes outside '…') do not. An unclosed
// quote runs to the end.
size_t word_end(std::string_view s, size_t i) {
  char quote = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (quote == 0 && is_space(c)) {
      return i;
    }
    if (c == '\\' && quote != '\'') {
      ++i;
    } else if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == quote) {
      quote = 0;
    }
  }
  return s.size();
}

// Blanks secrets inside the shell words of `s` (a script given to sh -c,
// say): the value of NAME=value and --name=value, and the word after -a or
// --name, where NAME names a secret.
std::string redact_words(std::string_view s) {
  std::string out;
  bool after_option = false;
  for (size_t i = 0; i < s.size();) {
    if (is_space(s[i])) {
      out.push_back(s[i++]);
      continue;
    }
    size_t end = word_end(s, i);
    std::string_view word = s.substr(i, end - i);
    if (after_option) {
      out += k_redacted;
    } else if (size_t keep = secret_assignment(word); keep > 0) {
      out.append(word.substr(0, keep));
      out += k_redacted;
    } else {
      out.append(word);
    }
    after_option = secret_option(word);
    i = end;
  }
  return out;
}

}  // namespace

namespace {

// The first "?NAME=" or "&NAME=" in `url` whose NAME names a secret
// (sentinel_password=…): where the value starts, and where it ends: the
// next '&' (a value may hold anything else, spaces and quotes too).
std::optional<std::pair<size_t, size_t>> secret_query_value(std::string_view url) {
  for (size_t q = url.find_first_of("?&"); q != std::string_view::npos; q = url.find_first_of("?&", q + 1)) {
    size_t eq = url.find('=', q + 1);
    if (eq == std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view name = url.substr(q + 1, eq - q - 1);
    if (name.find_first_of("?&@/ ") == std::string_view::npos && names_secret(name)) {
      size_t end = eq + 1;
      while (end < url.size() && url[end] != '&') {
        ++end;
      }
      return std::make_pair(eq + 1, end);
    }
  }
  return std::nullopt;
}

// One URL (up to the next one) with its userinfo password and its secret
// query values hidden.
std::string redact_one_url(std::string_view url) {
  auto query = secret_query_value(url);
  // The userinfo may hold any character (quotes, spaces, '/', '@'): it runs
  // to the last '@' — unless that '@' is inside a secret query value.
  size_t at = url.rfind('@');
  if (query && at != std::string_view::npos && at >= query->first) {
    at = url.substr(0, query->first).rfind('@');
  }
  std::string out;
  size_t done = 0;
  if (at != std::string_view::npos && (!query || at < query->first)) {
    std::string_view userinfo = url.substr(0, at);
    size_t colon = userinfo.find(':');
    out.append(url.substr(0, colon != std::string_view::npos ? colon + 1 : 0));  // "user:pw@" or "pw@"
    out += k_redacted;
    done = at;
  }
  while (query) {
    out.append(url.substr(done, query->first - done));
    out += k_redacted;
    done = query->second;
    auto next = secret_query_value(url.substr(done));
    if (next) {
      next->first += done;
      next->second += done;
    }
    query = next;
  }
  out.append(url.substr(done));
  return out;
}

}  // namespace

std::string redact_url_passwords(std::string_view s) {
  std::string out;
  size_t done = 0;
  for (size_t sep = s.find("://"); sep != std::string_view::npos;) {
    // Hiding too much is better than showing a piece of a password.
    size_t start = sep + 3;
    size_t next = s.find("://", start);
    size_t region_end = next == std::string_view::npos ? s.size() : scheme_start(s, next);
    if (next != std::string_view::npos && region_end > start && s[region_end - 1] == ',') {
      --region_end;  // the comma that separates the URLs of a list
    }
    out.append(s.substr(done, start - done));
    out += redact_one_url(s.substr(start, region_end - start));
    done = region_end;
    sep = next;
  }
  out.append(s.substr(done));
  return out;
}

std::string redact_secrets(std::string_view s) {
  return redact_words(redact_url_passwords(s));
}

std::vector<std::string> redact_arguments(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  bool after_option = false;
  for (const auto& arg : argv) {
    if (after_option) {
      out.emplace_back(k_redacted);
    } else if (size_t keep = secret_assignment(arg); keep > 0) {
      out.push_back(arg.substr(0, keep) + k_redacted);  // the value may hold spaces: all of it
    } else {
      out.push_back(redact_secrets(arg));
    }
    after_option = secret_option(arg);
  }
  return out;
}

std::string redact_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : redact_arguments(argv)) {
    out += (out.empty() ? "" : " ") + arg;
  }
  return out;
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

std::string recorded_command(const std::vector<std::string>& argv) {
  return truncate_utf8(make_valid_utf8(redact_command(argv)), k_max_command_bytes);
}

}  // namespace redlock
