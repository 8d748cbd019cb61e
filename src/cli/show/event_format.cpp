#include "cli/show/event_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "util/duration.hpp"
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
  std::string out = fmt::format("{} {} {}", format_time(e.time_ms), escape_for_terminal(e.kind), shown_value(e.name));
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
  // An object whose keys keep the order they are set in (a key set again
  // keeps its place), made by hand: nlohmann's ordered_json would be a
  // second instantiation of the whole library in the binary for this one
  // line.
  std::vector<std::pair<std::string, std::string>> fields;
  const auto set = [&fields](const std::string& key, const nlohmann::json& value) {
    std::string dumped = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto it = std::find_if(fields.begin(), fields.end(), [&key](const auto& f) { return f.first == key; });
    if (it != fields.end()) {
      it->second = std::move(dumped);
    } else {
      fields.emplace_back(key, std::move(dumped));
    }
  };
  set("event", e.kind);
  set("name", e.name);
  set("time", utc_time(e.time_ms));
  set("time_ms", e.time_ms);
  in_order(e, [&](const std::string& key, const std::string& value) {
    if (events::numeric_field(key)) {
      long long n = 0;
      auto [at, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec == std::errc() && at == value.data() + value.size() && !value.empty()) {
        // A revoke's grace of 0 is each holder's own --kill-after: null, as in status.
        set(key, key == "grace_ms" && n == 0 ? nlohmann::json(nullptr) : nlohmann::json(n));
      } else if (!value.empty()) {
        set(key, value);
      }
      return;
    }
    set(key, value);
  });
  std::string out = "{";
  for (const auto& [key, value] : fields) {
    out += (out.size() > 1 ? "," : "") +
           nlohmann::json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += ":" + value;
  }
  return out + "}\n";
}

}  // namespace redlock::cli
