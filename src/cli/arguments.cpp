#include "cli/arguments.hpp"

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
  if (token.empty() || variable("REDLOCK_TOKEN") != token || variable("REDLOCK_NAME") != name) {
    return std::nullopt;
  }
  const auto pid = parse_integer(variable("REDLOCK_EXEC_PID"));
  const auto level = parse_integer(variable("REDLOCK_EXEC_LEVEL"));
  if (!pid || !level || *pid <= 0 || *level <= 0) {
    return std::nullopt;
  }
  return RunningExec{*pid, *level};
}

}  // namespace redlock::cli
