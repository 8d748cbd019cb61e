// The redaction half of util/text.hpp: secrets hidden from everything
// redlock records (the holder's command line) or prints (usage errors).
// It hides too much rather than too little: a word that only looks like a
// secret is hidden as well.

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/text.hpp"

namespace redlock {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool is_quote(char c) {
  return c == '\'' || c == '"';
}

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// A character of the name of a setting, an option, a header or a JSON key.
bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// Where the scheme of the URL whose "://" is at `sep` starts.
size_t scheme_start(std::string_view s, size_t sep) {
  size_t i = sep;
  while (i > 0 && is_scheme_char(s[i - 1])) {
    --i;
  }
  return i;
}

// True for the name of a setting, an option, a header or a key that holds
// a secret: it contains one of these, in any case (MYSQL_PWD, X-Api-Key,
// Authorization, --client-secret, Cookie, --oauth2-bearer...).
bool names_secret(std::string_view name) {
  std::string lower;
  for (char c : name) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (const char* word : {"pass", "pwd", "secret", "token", "key", "auth", "cred", "cookie", "bearer"}) {
    if (lower.find(word) != std::string::npos) {
      return true;
    }
  }
  return false;
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

// `word` up to `from`, then "***" for the rest; a quote that closes one
// opened before `from` stays, so the word still reads as quoted.
std::string hidden_from(std::string_view word, size_t from) {
  std::string out(word.substr(0, from));
  out += k_redacted;
  if (from < word.size() && is_quote(word.back()) && std::count(out.begin(), out.end(), word.back()) % 2 == 1) {
    out += word.back();
  }
  return out;
}

// Where a secret value starts and ends in a text.
struct KeyedValue {
  size_t from;
  size_t to;
};

// The '=' or ':' after a key that ends at `end`, if one follows ("token": and
// "Key :" too).
std::optional<size_t> separator_after(std::string_view text, size_t end) {
  size_t sep = end;
  if (sep < text.size() && is_quote(text[sep])) {
    ++sep;
  }
  while (sep < text.size() && (text[sep] == ' ' || text[sep] == '\t')) {
    ++sep;
  }
  if (sep < text.size() && (text[sep] == '=' || text[sep] == ':')) {
    return sep;
  }
  return std::nullopt;
}

// The value after the separator at `sep` of a key preceded by `before`.
KeyedValue value_after(std::string_view text, size_t sep, char before) {
  size_t from = sep + 1;
  while (text[sep] == ':' && from < text.size() && (text[from] == ' ' || text[from] == '\t')) {
    ++from;
  }
  const bool query = before == '?' || before == '&';
  return KeyedValue{from, query ? std::min(text.size(), text.find('&', from)) : text.size()};
}

// The first value of a secret key in `text` from `start`: "NAME=value",
// "--name=value", "X-Api-Key: value", "Authorization: Bearer value", JSON's
// "token": value, a query's ?api_key=value. It ends at the next '&' for a
// query's, else at the end of `text`.
std::optional<KeyedValue> keyed_value(std::string_view text, size_t start = 0) {
  for (size_t i = start; i < text.size(); ++i) {
    if (!is_key_char(text[i]) || (i > 0 && is_key_char(text[i - 1]))) {
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_key_char(text[end])) {
      ++end;
    }
    const char before = i > 0 ? text[i - 1] : ' ';
    const auto sep = separator_after(text, end);
    // host:port after "//" or "@" is no key and value (http://keycloak:8080).
    const bool host = sep && text[*sep] == ':' && (before == '/' || before == '@');
    if (sep && !host && names_secret(text.substr(i, end - i))) {
      return value_after(text, *sep, before);
    }
    i = end - 1;
  }
  return std::nullopt;
}

// `word` with the value of every secret key in it hidden.
std::string hide_keyed_values(std::string_view word) {
  std::string out;
  size_t done = 0;
  for (auto v = keyed_value(word); v; v = keyed_value(word, v->to)) {
    if (v->to == word.size()) {
      return out + hidden_from(word.substr(done), v->from - done);
    }
    out.append(word.substr(done, v->from - done));
    out += k_redacted;
    done = v->to;
  }
  out.append(word.substr(done));
  return out;
}

// How an option of a known program carries a secret.
enum class Carries {
  k_attached,       // only glued to the option (mysql -pSECRET; -p alone asks for it)
  k_value,          // glued or the next word: all of it (sshpass -p SECRET)
  k_after_colon,    // what follows the value's first ':' (curl -u user:SECRET)
  k_after_percent,  // ... its first '%' (smbclient -U user%SECRET)
  k_after_comma,    // ... its first ',' (lftp -u user,SECRET)
};

struct SecretOption {
  std::string_view program;  // its name; "mysql*": every name that starts with "mysql"
  std::string_view option;
  Carries carries;
};

// Options of common programs that carry a secret under a name that does
// not say so (options that do, --password or --api-key, need no row).
constexpr SecretOption k_secret_options[] = {
    {"mysql*", "-p", Carries::k_attached},  // mysql, mysqldump, mysqladmin...
    {"mariadb*", "-p", Carries::k_attached},
    {"sshpass", "-p", Carries::k_value},
    {"curl", "-u", Carries::k_after_colon},
    {"curl", "--user", Carries::k_after_colon},
    {"curl", "-U", Carries::k_after_colon},
    {"curl", "--proxy-user", Carries::k_after_colon},
    {"curl", "-E", Carries::k_after_colon},  // certificate:password
    {"curl", "--cert", Carries::k_after_colon},
    {"curl", "--proxy-cert", Carries::k_after_colon},
    {"curl", "-b", Carries::k_value},
    {"mongo*", "-p", Carries::k_value},  // mongo, mongosh, mongodump...
    {"ldap*", "-w", Carries::k_value},   // ldapsearch, ldapmodify...
    {"sqlcmd", "-P", Carries::k_value},
    {"bcp", "-P", Carries::k_value},
    {"smbclient", "-U", Carries::k_after_percent},
    {"smbclient", "--user", Carries::k_after_percent},
    {"rpcclient", "-U", Carries::k_after_percent},
    {"rpcclient", "--user", Carries::k_after_percent},
    {"smbcacls", "-U", Carries::k_after_percent},
    {"smbcacls", "--user", Carries::k_after_percent},
    {"lftp", "-u", Carries::k_after_comma},
    {"zip", "-P", Carries::k_value},
    {"unzip", "-P", Carries::k_value},
    {"7z", "-p", Carries::k_attached},
    {"7za", "-p", Carries::k_attached},
    {"7zr", "-p", Carries::k_attached},
    {"openssl", "-k", Carries::k_value},
};

// The row's program that `word` names (its last path component, quotes
// aside), or "".
std::string_view program_named(std::string_view word) {
  while (!word.empty() && is_quote(word.back())) {
    word.remove_suffix(1);
  }
  while (!word.empty() && is_quote(word.front())) {
    word.remove_prefix(1);
  }
  if (size_t slash = word.rfind('/'); slash != std::string_view::npos) {
    word.remove_prefix(slash + 1);
  }
  for (const auto& row : k_secret_options) {
    const bool family = row.program.back() == '*';
    const std::string_view stem = family ? row.program.substr(0, row.program.size() - 1) : row.program;
    if (family ? word.substr(0, stem.size()) == stem : word == stem) {
      return row.program;
    }
  }
  return {};
}

std::string hide_value(std::string_view value, Carries carries) {
  const char sep = carries == Carries::k_after_colon     ? ':'
                   : carries == Carries::k_after_percent ? '%'
                   : carries == Carries::k_after_comma   ? ','
                                                         : '\0';
  if (sep == '\0') {
    return k_redacted;
  }
  const size_t at = value.find(sep);
  // A user name alone: the program asks for the password.
  return at == std::string_view::npos ? std::string(value) : hidden_from(value, at + 1);
}

// Reads a command line word by word, knowing which program it is in and
// whether the previous word announced a secret.
class Redactor {
 public:
  // `word` with its secrets hidden. `argument`: a whole argument of a
  // program, which may hold spaces (else one word of a script).
  std::string next(std::string_view word, bool argument) {
    if (m_value) {
      const Carries carries = *m_value;
      m_value.reset();
      announce(word);
      return hide_value(word, carries);
    }
    if (std::string_view program = program_named(word); !program.empty()) {
      m_program = program;
    }
    if (auto shown = known_option(word)) {
      return *shown;
    }
    announce(word);
    if (auto v = keyed_value(word); v && v->from == word.size()) {
      m_value = Carries::k_value;  // "Authorization:" alone: the value is the next word
    }
    return argument ? hide_in_argument(word) : hide_keyed_values(word);
  }

 private:
  // The next word is a secret after -a or --password...
  void announce(std::string_view word) {
    if (secret_option(word)) {
      m_value = Carries::k_value;
    }
  }

  // `word` as shown when it is (or starts) an option of k_secret_options
  // for the program the line is in.
  std::optional<std::string> known_option(std::string_view word) {
    for (const auto& row : k_secret_options) {
      if (row.program != m_program || word.substr(0, row.option.size()) != row.option) {
        continue;
      }
      std::string_view rest = word.substr(row.option.size());
      if (rest.empty()) {
        if (row.carries != Carries::k_attached) {
          m_value = row.carries;
        }
        return std::string(word);
      }
      const bool short_option = row.option.size() == 2;  // -pSECRET; --user=u:SECRET
      if (short_option || rest.front() == '=') {
        const size_t keep = short_option ? 0 : 1;
        return std::string(row.option) + std::string(rest.substr(0, keep)) + hide_value(rest.substr(keep), row.carries);
      }
    }
    return std::nullopt;
  }

  // A whole argument: one whose first word holds a secret key
  // ("Authorization: Bearer x", "--token=two words") is hidden to its
  // end, spaces and all; any other may be a script, read word by word.
  static std::string hide_in_argument(std::string_view arg) {
    const size_t word = std::min(arg.size(), arg.find_first_not_of(" \t\n"));
    const size_t first_word_end = std::min(arg.size(), arg.find_first_of(" \t\n", word));
    if (auto v = keyed_value(arg); v && v->from <= first_word_end + 1 && v->to == arg.size()) {
      return hidden_from(arg, v->from);
    }
    return redact_secrets(arg);
  }

  std::string_view m_program;      // the last program of k_secret_options named
  std::optional<Carries> m_value;  // what the next word is, when it is a secret
};

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
    } else if (quote == 0 && is_quote(c)) {
      quote = c;
    } else if (c == quote) {
      quote = 0;
    }
  }
  return s.size();
}

// Blanks secrets inside the shell words of `s` (a script given to sh -c,
// say), as Redactor reads them.
std::string redact_words(std::string_view s) {
  std::string out;
  Redactor redactor;
  for (size_t i = 0; i < s.size();) {
    if (is_space(s[i])) {
      out.push_back(s[i++]);
      continue;
    }
    size_t end = word_end(s, i);
    out += redactor.next(s.substr(i, end - i), false);
    i = end;
  }
  return out;
}

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
  out.reserve(argv.size());
  Redactor redactor;
  for (const auto& arg : argv) {
    out.push_back(redactor.next(arg, true));
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

std::string recorded_command(const std::vector<std::string>& argv) {
  std::string all = make_valid_utf8(redact_command(argv));
  if (all.size() <= k_max_command_bytes) {
    return all;
  }
  return truncate_utf8(all, k_max_command_bytes - k_cut_mark.size()) + std::string(k_cut_mark);
}

}  // namespace redlock
