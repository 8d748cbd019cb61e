#include "cli/line/option_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/number.hpp"
#include "util/text.hpp"

namespace redlock::cli {

int parse_whole_number(const std::string& text, const char* option, int lo, int hi) {
  const std::optional<long long> n = parse_integer(text);
  if (!n || *n < lo || *n > hi) {
    throw UsageError(
        fmt::format("invalid {} '{}': a whole number from {} to {}", option, escape_for_terminal(text), lo, hi));
  }
  return static_cast<int>(*n);
}

// --ttl: a duration of at least 10ms.
Millis parse_ttl(const std::string& text) {
  Millis ttl = parse_duration(text, "--ttl");
  if (ttl < Millis(10)) {
    throw UsageError(fmt::format("--ttl {} is too short: a lock needs at least 10ms", escape_for_terminal(text)));
  }
  return ttl;
}

// --connect-timeout and --timeout: a duration of at least 1ms.
Millis parse_timeout(const std::string& text, const char* what) {
  Millis d = parse_duration(text, what);
  if (d < Millis(1)) {
    throw UsageError(fmt::format("{} must be at least 1ms", what));
  }
  return d;
}

StatusFormat parse_format(const std::string& text) {
  if (text == "table") {
    return StatusFormat::k_table;
  }
  if (text == "json") {
    return StatusFormat::k_json;
  }
  if (text == "prometheus") {
    return StatusFormat::k_prometheus;
  }
  throw UsageError(fmt::format("invalid --format '{}': use table, json or prometheus", escape_for_terminal(text)));
}

StatusSort parse_sort(const std::string& text) {
  if (text == "name") {
    return StatusSort::k_name;
  }
  if (text == "age") {
    return StatusSort::k_age;
  }
  if (text == "ttl") {
    return StatusSort::k_ttl;
  }
  throw UsageError(fmt::format("invalid --sort '{}': use name, age or ttl", escape_for_terminal(text)));
}

namespace {

// Every column name, for the message that names them.
std::string column_names() {
  std::string names;
  for (const std::string_view name : k_status_columns) {
    names.append(names.empty() ? "" : ", ").append(name);
  }
  return names;
}

StatusColumn parse_column(std::string_view name) {
  for (size_t c = 0; c < k_status_columns.size(); ++c) {
    const std::string_view known = k_status_columns[c];
    const bool same = name.size() == known.size() &&
                      std::equal(name.begin(), name.end(), known.begin(),
                                 [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
    if (same) {
      return static_cast<StatusColumn>(c);
    }
  }
  throw UsageError(name.empty() ? fmt::format("an empty column name in --columns; the columns are {}", column_names())
                                : fmt::format("unknown column '{}' in --columns; the columns are {}",
                                              escape_for_terminal(std::string(name)), column_names()));
}

}  // namespace

std::vector<StatusColumn> parse_columns(const std::vector<std::string>& lists) {
  std::vector<StatusColumn> columns;
  for (const std::string& list : lists) {
    std::string_view rest = list;
    while (true) {
      const size_t comma = rest.find(',');
      columns.push_back(parse_column(rest.substr(0, comma)));
      if (comma == std::string_view::npos) {
        break;
      }
      rest.remove_prefix(comma + 1);
    }
  }
  return columns;
}

LogFormat parse_log_format(const std::string& text, const char* where) {
  if (text == "text") {
    return LogFormat::k_text;
  }
  if (text == "json") {
    return LogFormat::k_json;
  }
  throw UsageError(fmt::format("invalid {} '{}': use text or json", where, escape_for_terminal(text)));
}

int parse_syslog_facility(const std::string& text, const char* where) {
  if (auto f = syslog_facility_named(text)) {
    return *f;
  }
  throw UsageError(fmt::format("invalid {} '{}': use user, daemon, cron, auth, authpriv, syslog or local0 to local7",
                               where, escape_for_terminal(text)));
}

Millis parse_interval(const std::string& text) {
  const Millis interval = parse_duration(text, "--interval");
  if (interval < Millis(100)) {
    throw UsageError("--interval must be at least 100ms");
  }
  return interval;
}

exec::OnLost parse_on_lost(const std::string& s) {
  if (s == "term") {
    return exec::OnLost::k_term;
  }
  if (s == "kill") {
    return exec::OnLost::k_kill;
  }
  if (s == "ignore") {
    return exec::OnLost::k_ignore;
  }
  throw UsageError(fmt::format("invalid --on-lost '{}': use term, kill or ignore", escape_for_terminal(s)));
}

bool parse_on_busy(const std::string& s) {
  if (s == "fail") {
    return false;
  }
  if (s == "replace") {
    return true;
  }
  throw UsageError(fmt::format("invalid --on-busy '{}': use fail or replace", escape_for_terminal(s)));
}

Millis parse_bound(const std::string& text, const char* option) {
  const Millis d = parse_duration(text, option);
  if (d < Millis(1)) {
    throw UsageError(fmt::format("{} must be more than 0 (at least 1ms)", option));
  }
  return d;
}

}  // namespace redlock::cli
