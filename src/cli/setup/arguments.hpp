#pragma once

// The lock names and tokens a command line gives, each checked (a
// UsageError, 64, for one that cannot be).

#include <optional>
#include <string>
#include <vector>

namespace redlock::cli {

// The lock names given to status or break, each checked (64 for a bad one),
// once each in the order first given: a name given twice is one lock.
[[nodiscard]] std::vector<std::string> named_locks(const std::vector<std::string>& names);

// What status is asked for: lock names, and globs (words with *, ? or [,
// read as fnmatch(3) reads them, a backslash quoting the next character)
// matched against the names of the held locks. Each is checked as a name is
// (64 for a bad one), and given once.
struct StatusNames {
  std::vector<std::string> names;
  std::vector<std::string> globs;
};
[[nodiscard]] StatusNames status_names(const std::vector<std::string>& words);

// Whether `name` matches `glob` (fnmatch(3), no flags: * and ? match any
// character, / and a leading dot included).
[[nodiscard]] bool glob_matches(const std::string& glob, const std::string& name);

// The token from --token, else $REDLOCK_TOKEN; empty if neither. A token
// that cannot be one (spaces, control characters, too long) is a UsageError.
[[nodiscard]] std::string token_from(const std::string& flag);

// The token for release/renew: required, from --token or $REDLOCK_TOKEN
// (a UsageError naming `verb` when neither is given).
[[nodiscard]] std::string required_token(const std::string& flag, const char* verb);

// The exec that runs this process, as its environment tells it: exec gives
// its command REDLOCK_EXEC_PID and REDLOCK_EXEC_LEVEL (the re-entry level it
// holds) beside REDLOCK_NAME and REDLOCK_TOKEN.
struct RunningExec {
  long long pid = 0;
  long long level = 0;  // the levels of the lock that are the exec's own
};

// The exec that runs this process and holds `name` with `token`, if any: a
// release by that token must leave the exec's levels alone.
[[nodiscard]] std::optional<RunningExec> exec_holding(const std::string& name, const std::string& token);

}  // namespace redlock::cli
