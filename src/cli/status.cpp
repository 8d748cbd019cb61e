#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "lock/layout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

CLI::App* add_status(CLI::App& app, StatusOptions& o) {
  auto* sub = app.add_subcommand("status", "show who holds which lock, for how long");
  sub->add_option("NAME", o.names, "locks to show (default: every lock under the prefix)");
  sub->add_flag("--json", o.json, "print a JSON array instead of a table");
  sub->footer(
      "Example:\n  redlock status                 # every lock, as a table\n"
      "  redlock status deploy --json   # exit 0 when held, 1 when free");
  return sub;
}

namespace {

using Verdict = lock::StatusVerdict;
using State = lock::StatusVerdict::State;

const char* state_name(State s) {
  switch (s) {
    case State::k_held:
      return "held";
    case State::k_foreign:
      return "foreign";
    default:
      return "free";
  }
}

std::string server_state(const lock::ServerView& s) {
  if (s.error) {
    return "unreachable";
  }
  if (s.foreign) {
    return "foreign";
  }
  return s.held() ? "held" : "free";
}

long long age_of(const Verdict& v, const lock::HolderView& h) {
  return std::max(0LL, v.now_ms - h.since_ms);
}

nlohmann::json holder_json(const Verdict& v, const lock::HolderView& h) {
  nlohmann::json j = {{"host", h.host},         {"pid", h.pid},           {"cmd", h.cmd},
                      {"since_ms", h.since_ms}, {"age_ms", age_of(v, h)}, {"ttl_ms", h.ttl_ms},
                      {"fence", h.fence},       {"count", h.count},       {"kept", h.kept}};
  if (h.kept) {
    j["finished_ms"] = h.finished_ms;
  }
  return j;
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json j = {{"name", v.name}, {"state", state_name(v.state)}, {"held", v.state == State::k_held}};
  if (v.state == State::k_foreign) {
    j["type"] = v.foreign_type;
  }
  if (v.state == State::k_held) {
    j["mode"] = v.mode;
    if (v.mode == "semaphore") {
      j["limit"] = v.limit;
    }
    // The first holder's fields at the top level: the whole story for a plain lock.
    j.update(holder_json(v, v.holders.front()));
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& h : v.holders) {
      holders.push_back(holder_json(v, h));
    }
    j["holders"] = std::move(holders);
  }
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& s : v.views) {
    nlohmann::json sj = {{"url", s.endpoint}, {"state", server_state(s)}};
    if (s.error) {
      sj["error"] = *s.error;
    } else if (s.held()) {
      sj["ttl_ms"] = s.holders.front().ttl_ms;
      sj["host"] = s.holders.front().host;
      sj["pid"] = s.holders.front().pid;
      sj["fence"] = s.holders.front().fence;
      sj["holders"] = s.holders.size();
    } else if (s.foreign) {
      sj["type"] = s.type;
    }
    servers.push_back(std::move(sj));
  }
  j["servers"] = std::move(servers);
  return j;
}

using Row = std::vector<std::string>;
constexpr size_t k_columns = 9;

// The STATE column: held, free, foreign(TYPE), held N/LIMIT, shared(N) or
// held(min-hold).
std::string state_label(const Verdict& v) {
  if (v.state == State::k_foreign) {
    return "foreign(" + v.foreign_type + ")";
  }
  if (v.mode == "semaphore") {
    return fmt::format("held {}/{}", v.holders.size(), v.limit);
  }
  if (v.mode == "shared") {
    return fmt::format("shared({})", v.holders.size());
  }
  if (!v.holders.empty() && v.holders.front().kept) {
    return "held(min-hold)";  // its holder finished; kept for --hold-at-least
  }
  return state_name(v.state);
}

// One row per holder, or one of dashes for a lock nobody holds.
void add_holder_rows(const Verdict& v, std::vector<Row>& rows) {
  const std::string state = state_label(v);
  for (const auto& h : v.holders) {
    rows.push_back({escape_for_terminal(v.name), state, escape_for_terminal(h.host), std::to_string(h.pid),
                    format_duration(Millis(age_of(v, h))), h.ttl_ms >= 0 ? format_duration(Millis(h.ttl_ms)) : "none",
                    std::to_string(h.fence), std::to_string(h.count), escape_for_terminal(h.cmd)});
  }
  if (v.holders.empty()) {
    rows.push_back({escape_for_terminal(v.name), state, "-", "-", "-", "-", "-", "-", "-"});
  }
}

// An indented line per server: what that one server says about the lock.
void add_server_rows(const Verdict& v, std::vector<Row>& rows) {
  for (const auto& s : v.views) {
    std::string detail = server_state(s);
    if (s.held()) {
      const auto& h = s.holders.front();
      detail +=
          fmt::format(" ttl {} by {} pid {}", format_duration(Millis(h.ttl_ms)), escape_for_terminal(h.host), h.pid);
    } else if (s.error) {
      detail += ": " + escape_for_terminal(*s.error);
    }
    rows.push_back({"  " + s.endpoint, detail});
  }
}

// Per-server detail lines (two cells) do not set column widths.
std::vector<size_t> column_widths(const std::vector<Row>& rows) {
  std::vector<size_t> width(k_columns, 0);
  for (const auto& row : rows) {
    if (row.size() < k_columns) {
      continue;
    }
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  return width;
}

// One line of the table, without trailing blanks.
std::string render_row(const Row& row, const std::vector<size_t>& width) {
  std::string line;
  if (row.size() < k_columns) {
    line = row[0] + "  " + row[1];
  } else {
    for (size_t c = 0; c < row.size(); ++c) {
      line += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], width[c]);
    }
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  line += '\n';
  return line;
}

std::string format_table(const std::vector<Verdict>& verdicts, bool many_servers) {
  std::vector<Row> rows;
  rows.push_back({"NAME", "STATE", "HOST", "PID", "AGE", "TTL", "FENCE", "COUNT", "COMMAND"});
  for (const auto& v : verdicts) {
    add_holder_rows(v, rows);
    if (many_servers) {
      add_server_rows(v, rows);
    }
  }
  const std::vector<size_t> width = column_widths(rows);
  std::string out;
  for (const auto& row : rows) {
    out += render_row(row, width);
  }
  return out;
}

}  // namespace

int run_status(const StatusOptions& o, const GlobalOptions& g) {
  for (const auto& name : o.names) {
    validate_name(name);
  }
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options);
  std::vector<std::string> names = o.names.empty() ? locker.list() : o.names;
  for (const auto& risk : locker.eviction_risks()) {
    log_warning("{} with a maxmemory limit: it can evict a held lock (set maxmemory-policy noeviction)", risk);
  }
  std::vector<Verdict> verdicts;
  for (const auto& name : names) {
    Verdict v = lock::judge(name, locker.inspect(name));
    // A listed name whose lock expired between SCAN and inspect is simply gone.
    if (!o.names.empty() || v.state != State::k_free) {
      verdicts.push_back(std::move(v));
    }
  }

  std::string output;
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : verdicts) {
      out.push_back(to_json(v));
    }
    output = out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else if (verdicts.empty()) {
    log_warning("no locks under the prefix '{}'", escape_for_terminal(r.options.prefix));
  } else {
    output = format_table(verdicts, locker.size() > 1);
  }
  if (!output.empty() && !write_stdout(output)) {
    log_warning("could not write the status to standard output");
    return to_int(ExitStatus::k_output);
  }

  int status = 0;
  for (const auto& v : verdicts) {
    if (v.state == State::k_foreign) {
      log_warning("{}", lock::foreign_message(v.name, v.foreign_type, ""));
      status = to_int(ExitStatus::k_protocol);
    } else if (v.state == State::k_free && status == 0) {
      status = to_int(ExitStatus::k_no);
    }
  }
  return status;
}

}  // namespace redlock::cli
