#include "cli/show/doctor_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/text.hpp"

namespace redlock::cli {

namespace {

using doctor::Finding;

// The level and the check's name, in columns ("warn  persistence   "),
// and where what was found begins.
constexpr size_t k_level_width = 5;
constexpr size_t k_check_width = 13;
constexpr size_t k_text_column = k_level_width + 1 + k_check_width + 1;

// A check's line: what was found and what to do, wrapped to `width` (0:
// not) under its column.
std::string check_lines(const Finding& f, size_t width) {
  std::string text = f.detail;
  if (!f.advice.empty()) {
    text += "; " + f.advice;
  }
  const std::string head =
      fmt::format("{:<{}} {:<{}} ", doctor::level_name(f.level), k_level_width, f.check, k_check_width);
  const std::string wrapped =
      wrap_words(escape_for_terminal(text), width > k_text_column ? width - k_text_column : 0, "");
  std::string out;
  size_t at = 0;
  while (at < wrapped.size()) {
    const size_t end = wrapped.find('\n', at);
    out += (at == 0 ? escape_for_terminal(head) : std::string(k_text_column, ' ')) + wrapped.substr(at, end - at + 1);
    at = end + 1;
  }
  return out;
}

}  // namespace

std::string doctor_text(const std::vector<Finding>& findings, size_t width) {
  // The findings come server by server, those about the set last.
  bool several = false;
  for (const auto& f : findings) {
    several = several || (!f.server.empty() && f.server != findings.front().server);
  }
  std::string out;
  const std::string* group = nullptr;
  for (const auto& f : findings) {
    // With one server, the checks about the set (its quorum, independence)
    // are about that server too: they go on under its name.
    const bool new_group = group == nullptr || (f.server != *group && (several || !f.server.empty()));
    if (new_group) {
      if (!out.empty()) {
        out += "\n";
      }
      out += f.server.empty() ? std::string(several ? "all servers\n" : "")
                              : "server " + escape_for_terminal(f.server) + "\n";
      group = &f.server;
    }
    out += check_lines(f, width);
  }
  return out;
}

std::string doctor_json(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    out.push_back({{"check", f.check},
                   {"level", std::string(doctor::level_name(f.level))},
                   {"server", f.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.server)},
                   {"detail", f.detail},
                   {"advice", f.advice.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.advice)}});
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace redlock::cli
