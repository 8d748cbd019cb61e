// status's table: a line per holder, the detail lines under each lock,
// the columns laid out, and fitted to a terminal's width (cli/show/table).

#include <fmt/format.h>

#include <algorithm>

#include "cli/show/history_format.hpp"
#include "cli/show/status_format.hpp"
#include "cli/show/status_parts.hpp"
#include "cli/show/table.hpp"
#include "lock/layout.hpp"
#include "util/duration.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

using Verdict = status::Verdict;
using State = status::Verdict::State;

using Row = std::vector<std::string>;

// A line of the table as it is shown: a lock's or a holder's cells, in the
// columns shown, or a detail line under a lock (a waiter, a server, the
// last run: two cells, which set no column's width).
struct Line {
  Row cells;
  bool detail = false;
};

// The STATE column: held, free, foreign(TYPE), held N/LIMIT (a semaphore's
// places), shared N (readers) or held(min-hold).
std::string state_label(const Verdict& v) {
  if (v.state == State::k_foreign) {
    return "foreign(" + v.foreign_type + ")";
  }
  if (v.state == State::k_free) {
    // also a semaphore or shared lock nobody holds on a quorum
    return v.suspension ? "suspended" : state_name(v.state);
  }
  if (v.mode == lock::Claim::Mode::k_semaphore) {
    return fmt::format("held {}/{}", v.holders.size(), v.limit);
  }
  if (v.mode == lock::Claim::Mode::k_shared) {
    return fmt::format("shared {}", v.holders.size());
  }
  if (!v.holders.empty() && v.holders.front().kept) {
    return "held(min-hold)";  // its holder finished; kept for --hold-at-least
  }
  return state_name(v.state);
}

// What operators did to the lock, a line each under it: a suspension, a
// revoke pending for a holder, and what holders noted (--note).
void add_mark_rows(const Verdict& v, std::vector<Row>& rows) {
  if (const auto& s = v.suspension) {
    const std::string until = s->until_ms > 0 ? fmt::format("until {}", format_time(s->until_ms)) : "until resumed";
    rows.push_back({"  SUSPENDED", fmt::format("by {} pid {} at {}, {}{}", escape_for_terminal(s->host),
                                               escape_for_terminal(s->pid), format_time(s->since_ms), until,
                                               s->reason.empty() ? "" : ": " + escape_for_terminal(s->reason))});
  }
  for (const auto& h : v.holders) {
    if (const lock::PendingRevoke* r = revoke_of(v, h)) {
      rows.push_back(
          {"  revoking", fmt::format("{} pid {}, asked by {} pid {} {} ago{}", escape_for_terminal(h.host), h.pid,
                                     escape_for_terminal(r->host), escape_for_terminal(r->pid),
                                     format_duration(Millis(std::max(0LL, v.now_ms - r->since_ms))),
                                     r->grace_ms > 0 ? fmt::format(" (grace {})", format_duration(Millis(r->grace_ms)))
                                                     : std::string())});
    }
    if (!h.note.empty()) {
      rows.push_back(
          {"  note", fmt::format("{} pid {}: {}", escape_for_terminal(h.host), h.pid, escape_for_terminal(h.note))});
    }
  }
}

// One row per holder, or one of dashes for a lock nobody holds.
void add_holder_rows(const Verdict& v, std::vector<Row>& rows) {
  const std::string state = state_label(v);
  const std::string waiting =
      v.state == State::k_foreign
          ? "-"
          : std::to_string(std::max<long long>(v.waiting, static_cast<long long>(v.waiters.size())));
  for (const auto& h : v.holders) {
    rows.push_back({escape_for_terminal(v.name), state, escape_for_terminal(h.host), std::to_string(h.pid),
                    format_duration(Millis(age_of(v, h))), h.ttl_ms >= 0 ? format_duration(Millis(h.ttl_ms)) : "none",
                    h.fence > 0 ? std::to_string(h.fence) : "-", std::to_string(h.count), waiting,
                    escape_command(h.cmd)});
  }
  if (v.holders.empty()) {
    rows.push_back({escape_for_terminal(v.name), state, "-", "-", "-", "-", "-", "-", waiting, "-"});
  }
}

// One line under a lock for each waiter: its place in line, who it is, how
// long it has waited and how long it will wait still.
void add_waiter_rows(const Verdict& v, std::vector<Row>& rows) {
  for (size_t i = 0; i < v.waiters.size(); ++i) {
    const auto& w = v.waiters[i];
    const std::string left =
        w.until_ms < 0 ? "no time limit" : fmt::format("gives up in {}", format_duration(Millis(w.left_ms)));
    const std::string what = w.mode == lock::Claim::Mode::k_shared ? " (shared)" : "";
    rows.push_back({fmt::format("  waiting {}", i + 1),
                    fmt::format("{} pid {}{} for {}, {}: {}", escape_for_terminal(w.host), w.pid, what,
                                format_duration(Millis(w.age_ms)), left, escape_command(w.cmd))});
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

// A detail line under a lock: its label and its text, cut with "…" to
// `width` (0: whole), without trailing blanks.
std::string detail_line(const Row& cells, size_t width) {
  std::string text = fit_columns(cells[0] + "  " + cells[1], width);
  while (!text.empty() && text.back() == ' ') {
    text.pop_back();
  }
  return text + "\n";
}

// The narrowest NAME is cut to on a terminal before COMMAND is: enough to
// tell most names apart.
constexpr size_t k_min_name = 12;

// How the table gives way on a narrow terminal: NAME is cut first (to
// k_min_name, ending with "…"), then COMMAND; then whole columns are left
// out, COMMAND first, then from the right; NAME and STATE stay, NAME cut
// to its header at the last. No other value is ever cut. `shown` are the
// columns shown, in their order.
std::vector<FitStep> fit_steps(const std::vector<StatusColumn>& shown) {
  const auto at = [&shown](StatusColumn c) {
    return static_cast<size_t>(std::find(shown.begin(), shown.end(), c) - shown.begin());
  };
  using C = StatusColumn;
  std::vector<FitStep> steps = {{at(C::k_name), k_min_name}, {at(C::k_command), 1}, {at(C::k_command), 0}};
  for (const C c : {C::k_waiting, C::k_count, C::k_fence, C::k_ttl, C::k_age, C::k_pid, C::k_host}) {
    steps.push_back({at(c), 0});
  }
  steps.push_back({at(C::k_name), 1});
  return steps;
}

// The columns `layout` shows: those -o named, or every one (but FENCE and
// COUNT on a terminal, unless --wide).
std::vector<StatusColumn> shown_columns(const TableLayout& layout) {
  if (!layout.columns.empty()) {
    return layout.columns;
  }
  std::vector<StatusColumn> shown;
  shown.reserve(k_status_columns.size());
  for (size_t c = 0; c < k_status_columns.size(); ++c) {
    const auto column = static_cast<StatusColumn>(c);
    if (layout.wide || (column != StatusColumn::k_fence && column != StatusColumn::k_count)) {
      shown.push_back(column);
    }
  }
  return shown;
}

// Each row as shown: a lock's or holder's row (one cell per column, in
// StatusColumn's order) cut down to the columns shown; detail rows as they are.
std::vector<Line> lay_out(const std::vector<Row>& rows, const std::vector<StatusColumn>& shown) {
  std::vector<Line> lines;
  lines.reserve(rows.size());
  for (const auto& row : rows) {
    if (row.size() != k_status_columns.size()) {
      lines.push_back({row, true});
      continue;
    }
    Row cells;
    cells.reserve(shown.size());
    for (const StatusColumn column : shown) {
      cells.push_back(row[static_cast<size_t>(column)]);
    }
    lines.push_back({std::move(cells), false});
  }
  return lines;
}

// status NAME: the lock's last run, held or free ("last run: ok on web-3,
// ended 3h ago, took 12s"), and its last ok run when that is another.
void add_run_row(const Verdict& v, std::vector<Row>& rows) {
  const lock::LastRuns& r = v.runs;
  if (!r.last) {
    return;
  }
  std::string line = "last run: " + run_summary(*r.last, r.now_ms);
  if (r.last_ok && r.last_ok->id != r.last->id) {
    line += "; last ok: " + run_summary(*r.last_ok, r.now_ms);
  }
  rows.push_back({"", line});
}

}  // namespace

std::string clip_lines(std::string_view text, size_t width) {
  if (width == 0) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size());
  size_t column = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      out += c;
      column = 0;
      continue;
    }
    // A UTF-8 continuation byte belongs to the character before it.
    const bool starts_character = (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    if (starts_character) {
      ++column;
    }
    if (column <= width) {
      out += c;
    }
  }
  return out;
}

std::string status_table(const std::vector<Verdict>& verdicts, bool many_servers, bool with_waiters,
                         const TableLayout& layout) {
  std::vector<Row> rows;
  rows.emplace_back(k_status_columns.begin(), k_status_columns.end());
  for (const auto& v : verdicts) {
    add_holder_rows(v, rows);
    add_mark_rows(v, rows);
    if (with_waiters) {
      add_run_row(v, rows);
      add_waiter_rows(v, rows);
    }
    if (many_servers) {
      add_server_rows(v, rows);
    }
  }
  const std::vector<StatusColumn> shown = shown_columns(layout);
  const std::vector<Line> lines = lay_out(rows, shown);
  std::vector<Cells> table;
  for (const auto& line : lines) {
    if (!line.detail) {
      table.push_back(line.cells);
    }
  }
  // Detail lines do not set column widths.
  const ColumnWidths widths = column_widths(table, layout.width, fit_steps(shown));
  std::string out;
  for (const auto& line : lines) {
    out += line.detail ? detail_line(line.cells, layout.width) : table_line(line.cells, widths);
  }
  // What the steps could not fit (a terminal narrower than NAME and STATE).
  return clip_lines(out, layout.width);
}

}  // namespace redlock::cli
