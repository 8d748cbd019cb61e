#include "cli/show/event_format.hpp"

#include <fmt/format.h>

#include <charconv>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string_view>

#include "util/text.hpp"

namespace redlock::cli {

namespace {

// The fields shown first, in this order; the others follow by name.
constexpr std::string_view k_first[] = {"host", "pid", "fence"};

bool is_first(const std::string& key) {
  for (auto f : k_first) {
    if (key == f) {
      return true;
    }
  }
  return false;
}

// Calls `each(key, value)` for the fields in the order they are shown.
template <typename F>
void in_order(const events::Event& e, F each) {
  for (auto f : k_first) {
    auto it = e.fields.find(std::string(f));
    if (it != e.fields.end()) {
      each(it->first, it->second);
    }
  }
  for (const auto& [key, value] : e.fields) {
    if (!is_first(key)) {
      each(key, value);
    }
  }
}

std::string shown_value(const std::string& value) {
  std::string v = escape_for_terminal(value);
  if (!v.empty() && v.find_first_of(" \"") == std::string::npos) {
    return v;
  }
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') {
      out += '\\';  // a backslash is doubled already
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string utc_time(long long ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) {
    return std::to_string(ms);
  }
  char buf[32] = {};
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms % 1000);
}

std::string event_line(const events::Event& e) {
  std::string out = fmt::format("{} {} {}", utc_time(e.time_ms), escape_for_terminal(e.kind), shown_value(e.name));
  in_order(e, [&](const std::string& key, const std::string& value) {
    if (key == "holder" || value.empty()) {
      return;  // the holder's id is for programs (--json)
    }
    out += fmt::format(" {}={}", escape_for_terminal(key), shown_value(value));
  });
  out += '\n';
  return out;
}

std::string event_json(const events::Event& e) {
  nlohmann::ordered_json j;
  j["event"] = e.kind;
  j["name"] = e.name;
  j["time"] = utc_time(e.time_ms);
  j["time_ms"] = e.time_ms;
  in_order(e, [&](const std::string& key, const std::string& value) {
    if (events::numeric_field(key)) {
      long long n = 0;
      auto [at, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec == std::errc() && at == value.data() + value.size() && !value.empty()) {
        // A revoke's grace of 0 is each holder's own --kill-after: null, as in status.
        j[key] = key == "grace_ms" && n == 0 ? nlohmann::json(nullptr) : nlohmann::json(n);
      } else if (!value.empty()) {
        j[key] = value;
      }
      return;
    }
    j[key] = value;
  });
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace redlock::cli
