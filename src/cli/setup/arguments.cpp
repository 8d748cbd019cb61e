#include "cli/setup/arguments.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>

#include "util/exit_status.hpp"
#include "util/number.hpp"
#include "util/text.hpp"
#include "util/token.hpp"

namespace redlock::cli {

std::vector<std::string> named_locks(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    validate_name(name);
    if (std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  }
  return out;
}

StatusNames status_names(const std::vector<std::string>& words) {
  StatusNames out;
  for (const auto& word : named_locks(words)) {
    const bool glob = word.find_first_of("*?[") != std::string::npos;
    (glob ? out.globs : out.names).push_back(word);
  }
  return out;
}

bool glob_matches(const std::string& glob, const std::string& name) {
  return fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

std::string token_from(const std::string& flag) {
  const char* variable = std::getenv("REDLOCK_TOKEN");
  std::string token = flag.empty() ? std::string(variable ? variable : "") : flag;
  if (!token.empty() && !plausible_token(token)) {
    throw UsageError(
        fmt::format("invalid token{}: a token is printable ASCII without spaces, at most 256 bytes "
                    "(as acquire prints it)",
                    flag.empty() ? " in $REDLOCK_TOKEN" : ""));
  }
  return token;
}

std::string required_token(const std::string& flag, const char* verb) {
  std::string token = token_from(flag);
  if (token.empty()) {
    throw UsageError(fmt::format("{} needs the holder's token: --token T or $REDLOCK_TOKEN", verb));
  }
  return token;
}

std::optional<RunningExec> exec_holding(const std::string& name, const std::string& token) {
  const auto variable = [](const char* key) {
    const char* v = std::getenv(key);
    return std::string(v ? v : "");
  };
  if (token.empty() || variable("REDLOCK_TOKEN") != token) {
    return std::nullopt;
  }
  // REDLOCK_EXEC_LEVELS: "<level> <name>" a line, for every name the exec
  // holds; else (an exec of one name before it) REDLOCK_NAME's level.
  std::optional<long long> level;
  const std::string levels = variable("REDLOCK_EXEC_LEVELS");
  if (!levels.empty()) {
    for (size_t start = 0; start <= levels.size();) {
      size_t end = levels.find('\n', start);
      end = end == std::string::npos ? levels.size() : end;
      const std::string_view line(levels.data() + start, end - start);
      if (const size_t space = line.find(' '); space != std::string_view::npos && line.substr(space + 1) == name) {
        level = parse_integer(std::string(line.substr(0, space)));
        break;
      }
      start = end + 1;
    }
  } else if (variable("REDLOCK_NAME") == name) {
    level = parse_integer(variable("REDLOCK_EXEC_LEVEL"));
  }
  const auto pid = parse_integer(variable("REDLOCK_EXEC_PID"));
  if (!pid || !level || *pid <= 0 || *level <= 0) {
    return std::nullopt;
  }
  return RunningExec{*pid, *level};
}

}  // namespace redlock::cli
