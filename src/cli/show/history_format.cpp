#include "cli/show/history_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/show/table.hpp"
#include "util/duration.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string ago(long long then_ms, long long now_ms) {
  return format_duration(Millis(std::max(0LL, now_ms - then_ms))) + " ago";
}

}  // namespace

std::string outcome_text(const lock::Run& run) {
  // Running in the ledger, but its hold is gone from the lock: its redlock
  // died (or lost the lock and has not said so yet), and no run since has
  // named it abandoned.
  if (run.outcome == lock::Outcome::k_running && run.held == false) {
    return "abandoned?";
  }
  std::string name = lock::outcome_name(run.outcome);
  if (!run.exit) {
    return name;
  }
  switch (run.outcome) {
    case lock::Outcome::k_failed:
      return fmt::format("failed (exit {})", *run.exit);
    case lock::Outcome::k_signalled:
      return fmt::format("signalled ({})", *run.exit > 128 ? *run.exit - 128 : *run.exit);
    case lock::Outcome::k_lost:
      return "lost (74)";
    case lock::Outcome::k_timed_out:
      return "timed-out (124)";
    default:
      return name;
  }
}

std::string run_summary(const lock::Run& run, long long now_ms) {
  std::string out = fmt::format("{} on {}", outcome_text(run), escape_for_terminal(run.host));
  if (run.end_ms) {
    out += fmt::format(", ended {}", ago(*run.end_ms, now_ms));
  } else if (run.start_ms) {
    out += fmt::format(", started {}", ago(*run.start_ms, now_ms));
  }
  if (const auto took = run.duration()) {
    out += fmt::format(", took {}", format_duration(*took));
  }
  return out;
}

std::string history_table(const std::vector<lock::Run>& runs, long long now_ms, size_t width) {
  std::vector<Cells> rows = {{"STARTED", "HOST", "PID", "TOOK", "OUTCOME", "CMD"}};
  for (const lock::Run& r : runs) {
    std::string took = "-";
    if (const auto d = r.duration()) {
      took = format_duration(*d);
    } else if (r.outcome == lock::Outcome::k_running && r.held != false && r.start_ms) {
      took = format_duration(Millis(std::max(0LL, now_ms - *r.start_ms))) + "+";
    }
    rows.push_back({r.start_ms ? format_time(*r.start_ms) : "-", escape_for_terminal(r.host),
                    r.pid > 0 ? std::to_string(r.pid) : "-", took, outcome_text(r), escape_command(r.cmd)});
  }
  // On a narrow terminal CMD is cut first, then left out, then PID and
  // TOOK; HOST is cut last. STARTED and OUTCOME are never cut.
  enum : size_t { k_started, k_host, k_pid, k_took, k_outcome, k_cmd };
  const ColumnWidths widths =
      column_widths(rows, width, {{k_cmd, 8}, {k_cmd, 0}, {k_pid, 0}, {k_took, 0}, {k_host, 8}, {k_host, 0}});
  std::string out;
  for (const auto& row : rows) {
    out += table_line(row, widths);
  }
  return out;
}

nlohmann::json run_json(const lock::Run& r) {
  const auto took = r.duration();
  return {{"run", r.id},
          {"outcome", lock::outcome_name(r.outcome)},
          {"exit", or_null(r.exit)},
          {"host", r.host},
          {"pid", r.pid},
          {"cmd", r.cmd},
          {"fence", r.fence > 0 ? nlohmann::json(r.fence) : nlohmann::json(nullptr)},
          {"start_ms", or_null(r.start_ms)},
          {"end_ms", or_null(r.end_ms)},
          {"duration_ms", took ? nlohmann::json(took->count()) : nlohmann::json(nullptr)}};
}

std::string history_json(const std::vector<lock::Run>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const lock::Run& r : runs) {
    nlohmann::json j = run_json(r);
    j["held"] = or_null(r.held);  // history reads the lock beside the ledger
    out.push_back(std::move(j));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string overdue_json(const std::string& name, const ledger::Overdue& d, Millis max_age) {
  const nlohmann::json out = {{"name", name},
                              {"overdue", d.overdue},
                              {"max_age_ms", max_age.count()},
                              {"age_ms", d.last_ok ? nlohmann::json(d.age.count()) : nlohmann::json(nullptr)},
                              {"last_ok", d.last_ok ? run_json(*d.last_ok) : nlohmann::json(nullptr)}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string overdue_line(const std::string& name, const ledger::Overdue& d, Millis max_age) {
  const std::string shown = escape_for_terminal(name);
  if (!d.last_ok) {
    return fmt::format("{} is overdue: no ok run in its history", shown);
  }
  const lock::Run& r = *d.last_ok;
  const std::string when =
      fmt::format("its last ok run ended {} ago on {} (pid {}, {})", format_duration(d.age),
                  escape_for_terminal(r.host), r.pid, r.end_ms ? format_time(*r.end_ms) : std::string("?"));
  if (d.overdue) {
    return fmt::format("{} is overdue: {}, more than --max-age {}", shown, when, format_duration(max_age));
  }
  return fmt::format("{} is on time: {}, within --max-age {}", shown, when, format_duration(max_age));
}

}  // namespace redlock::cli
