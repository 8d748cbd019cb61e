#include "cli/line/usage.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "util/text.hpp"

namespace redlock::cli {

namespace {

// Where the words of `text` go on a line of `room` columns: cut at blanks,
// never inside a word.
std::vector<std::string> fill(std::string_view text, size_t room) {
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at < text.size()) {
    const size_t start = text.find_first_not_of(' ', at);
    if (start == std::string_view::npos) {
      break;
    }
    const size_t end = std::min(text.find(' ', start), text.size());
    const std::string_view word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) {
      line += ' ';
    }
    line += word;
    at = end;
  }
  if (!line.empty()) {
    lines.push_back(std::move(line));
  }
  return lines;
}

// One line of help, wrapped (see wrap_help).
std::string wrap_line(std::string_view line, size_t column, size_t width) {
  if (line.size() <= width) {
    return std::string(line);
  }
  const size_t lead = std::min(line.find_first_not_of(' '), line.size());
  const bool entry = lead > 0 && lead < column && line.size() > column && line[column - 1] == ' ' &&
                     line[column - 2] == ' ' && line[column] != ' ';
  const size_t hang = entry ? column : lead;
  if (hang + 20 > width) {
    return std::string(line);  // too little room to be worth it
  }
  const std::vector<std::string> parts = fill(line.substr(hang), width - hang);
  std::string out(line.substr(0, hang));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out += '\n';
      out.append(hang, ' ');
    }
    out += parts[i];
  }
  return out;
}

// The optimal string alignment distance: insertions, deletions,
// substitutions and transpositions of neighbours, one each.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) {
    d[i][0] = i;
  }
  for (size_t j = 0; j <= b.size(); ++j) {
    d[0][j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string_view without_dashes(std::string_view word) {
  while (!word.empty() && word.front() == '-') {
    word.remove_prefix(1);
  }
  return word;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

std::string wrap_help(std::string_view help, size_t column, size_t width) {
  std::string out;
  out.reserve(help.size() + help.size() / 8);
  size_t at = 0;
  while (at < help.size()) {
    const size_t end = std::min(help.find('\n', at), help.size());
    out += wrap_line(help.substr(at, end - at), column, width);
    if (end < help.size()) {
      out += '\n';
    }
    at = end + 1;
  }
  return out;
}

std::optional<std::string> flock_word(std::string_view typed, std::string_view subcommand) {
  const bool takes = subcommand == "acquire" || subcommand == "exec";
  if (typed == "-e" && takes) {
    return "did you mean -x (--exclusive)?";
  }
  if (typed == "--nb" && takes) {
    return "did you mean -n (--nonblock)?";
  }
  if (typed == "-u" || typed == "--unlock") {
    return std::string("did you mean redlock release --token T NAME?");
  }
  if ((typed == "-o" || typed == "--close") && subcommand == "exec") {
    return std::string("CMD never inherits the lock: leave it out");
  }
  if ((typed == "-F" || typed == "--no-fork") && subcommand == "exec") {
    return std::string("exec stays to renew the lock, so it always forks: leave it out");
  }
  if (typed == "-V") {
    return std::string("did you mean --version?");
  }
  if (typed == "-c" && subcommand == "acquire") {
    return std::string("did you mean redlock exec -c STRING NAME?");
  }
  return std::nullopt;
}

std::optional<std::string> nearest_word(std::string_view typed, const std::vector<std::string>& known) {
  const std::string_view bare = without_dashes(typed);
  if (bare.size() < 2) {
    return std::nullopt;  // every one-letter option is one edit away from `-a`
  }
  const size_t limit = std::max<size_t>(1, bare.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  std::vector<std::string> extended;  // words `typed` begins
  for (const auto& word : known) {
    const std::string_view candidate = without_dashes(word);
    if (candidate.size() > bare.size() && candidate.substr(0, bare.size()) == bare) {
      extended.push_back(word);
    }
    const size_t distance = edit_distance(bare, candidate);
    if (distance <= limit && distance < best_distance) {
      best = word;
      best_distance = distance;
    }
  }
  if (!best && extended.size() == 1) {
    best = extended.front();
  }
  return best;
}

std::string shell_quoted(std::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return is_word_char(c) || std::string_view("-./:=@%+,^").find(c) != std::string_view::npos;
  });
  if (plain) {
    return std::string(word);
  }
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\"'\"'";  // no backslash: the line is escaped for a terminal after
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string with_dashes(const std::vector<std::string>& words, size_t command_at) {
  const std::vector<std::string> shown = redact_arguments(words);
  std::string line = "redlock";
  for (size_t i = 0; i < shown.size(); ++i) {
    if (i == command_at) {
      line += " --";
    }
    line += ' ';
    line += shell_quoted(shown[i]);
  }
  return escape_for_terminal(line);
}

int quiet_level(std::string_view word) {
  if (word == "--silent") {
    return 2;
  }
  if (word == "--quiet") {
    return 1;
  }
  const bool q_only = word.size() > 1 && word[0] == '-' && word.find_first_not_of('q', 1) == std::string_view::npos;
  return q_only ? static_cast<int>(word.size() - 1) : 0;
}

std::string without_secrets(std::string text, const std::vector<std::string>& args) {
  const std::vector<std::string> redacted = redact_arguments(args);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& secret = args[i];
    if (redacted[i] == secret || secret.empty()) {
      continue;
    }
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
      const size_t end = at + secret.size();
      if ((at > 0 && is_word_char(text[at - 1])) || (end < text.size() && is_word_char(text[end]))) {
        at = end;
        continue;
      }
      text.replace(at, secret.size(), redacted[i]);
      at += redacted[i].size();
    }
  }
  return redact_url_passwords(text);
}

}  // namespace redlock::cli
