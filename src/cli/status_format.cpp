#include "cli/status_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/runs.hpp"
#include "lock/layout.hpp"
#include "util/duration.hpp"
#include "util/text.hpp"

namespace redlock::cli {

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

// A holder's fence, or null for a stored one that is not a fence (0): a
// number there would be taken for one.
nlohmann::json fence_json(long long fence) {
  return fence > 0 ? nlohmann::json(fence) : nlohmann::json(nullptr);
}

// The revoke pending for holder `h`, if any.
const lock::PendingRevoke* revoke_of(const Verdict& v, const lock::HolderView& h) {
  if (h.kept) {
    return nullptr;
  }
  const std::string run = lock::run_of(h.token);
  for (const auto& r : v.revokes) {
    if (r.run == run) {
      return &r;
    }
  }
  return nullptr;
}

nlohmann::json revoke_json(const lock::PendingRevoke* r) {
  if (r == nullptr) {
    return nullptr;
  }
  return {{"host", r->host},
          {"pid", r->pid},
          {"since_ms", r->since_ms},
          {"grace_ms", r->grace_ms > 0 ? nlohmann::json(r->grace_ms) : nlohmann::json(nullptr)}};
}

nlohmann::json suspension_json(const std::optional<lock::Suspension>& s) {
  if (!s) {
    return nullptr;
  }
  return {{"reason", s->reason},
          {"host", s->host},
          {"pid", s->pid},
          {"since_ms", s->since_ms},
          {"until_ms", s->until_ms > 0 ? nlohmann::json(s->until_ms) : nlohmann::json(nullptr)}};
}

nlohmann::json holder_json(const Verdict& v, const lock::HolderView& h) {
  nlohmann::json j = {{"host", h.host},
                      {"pid", h.pid},
                      {"cmd", h.cmd},
                      {"note", h.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(h.note)},
                      {"revoke", revoke_json(revoke_of(v, h))},
                      {"since_ms", h.since_ms},
                      {"age_ms", age_of(v, h)},
                      {"ttl_ms", h.ttl_ms},
                      {"fence", fence_json(h.fence)},
                      {"count", h.count},
                      {"kept", h.kept}};
  if (h.kept) {
    j["finished_ms"] = h.finished_ms;
  }
  return j;
}

nlohmann::json waiter_json(const lock::WaiterView& w, size_t position) {
  const std::string mode = lock::mode_name(w.mode);
  nlohmann::json j = {{"position", position}, {"host", w.host},      {"pid", w.pid},
                      {"cmd", w.cmd},         {"mode", mode},        {"since_ms", w.since_ms},
                      {"age_ms", w.age_ms},   {"until_ms", nullptr}, {"left_ms", nullptr}};
  if (w.until_ms >= 0) {
    j["until_ms"] = w.until_ms;
    j["left_ms"] = w.left_ms;
  }
  return j;
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json j = {{"name", v.name}, {"state", state_name(v.state)}, {"held", v.state == State::k_held}};
  if (v.state == State::k_foreign) {
    j["type"] = v.foreign_type;
  } else {
    j["suspended"] = suspension_json(v.suspension);
  }
  if (v.state == State::k_held) {
    j["mode"] = lock::mode_name(v.mode);
    if (v.mode == lock::Claim::Mode::k_semaphore) {
      j["limit"] = v.limit;
    }
    // The oldest holder's fields at the top level: the whole story for a plain lock.
    j.update(holder_json(v, v.holders.front()));
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& h : v.holders) {
      holders.push_back(holder_json(v, h));
    }
    j["holders"] = std::move(holders);
  }
  if (v.state != State::k_foreign && v.runs.read) {
    j["last_run"] = v.runs.last ? run_json(*v.runs.last) : nlohmann::json(nullptr);
    j["last_ok"] = v.runs.last_ok ? run_json(*v.runs.last_ok) : nlohmann::json(nullptr);
  }
  if (v.state != State::k_foreign) {
    nlohmann::json waiters = nlohmann::json::array();
    for (size_t i = 0; i < v.waiters.size(); ++i) {
      waiters.push_back(waiter_json(v.waiters[i], i + 1));
    }
    j["waiters"] = std::move(waiters);
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
      sj["fence"] = fence_json(s.holders.front().fence);
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
constexpr size_t k_columns = 10;
constexpr size_t k_fence_column = 6;  // then COUNT: left out of a narrow table

// A detail line under a lock (a waiter, a server, the last run): two cells,
// which set no column's width.
bool is_detail(const Row& row) {
  return row.size() == 2;
}

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
    const std::string until = s->until_ms > 0 ? fmt::format("until {}", local_time(s->until_ms)) : "until resumed";
    rows.push_back({"  SUSPENDED", fmt::format("by {} pid {} at {}, {}{}", escape_for_terminal(s->host),
                                               escape_for_terminal(s->pid), local_time(s->since_ms), until,
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

// Waiter and per-server detail lines (two cells) do not set column widths.
std::vector<size_t> column_widths(const std::vector<Row>& rows) {
  std::vector<size_t> width(k_columns, 0);
  for (const auto& row : rows) {
    if (is_detail(row)) {
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
  if (is_detail(row)) {
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

// Whether `name` is one redlock would accept: valid UTF-8 without control
// characters (C0, DEL, C1). Only a key another program wrote can hold
// another.
bool plain_name(std::string_view name) {
  if (!is_valid_utf8(name)) {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool c1 = c == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) < 0xa0;
    if (c < 0x20 || c == 0x7f || c1) {
      return false;
    }
  }
  return true;
}

// The labels of a lock's samples. The name label reads back as the name:
// only the exposition format's own escapes (\\, \" and \n). A name redlock
// would not accept (bytes that are not UTF-8, which the format cannot
// carry, or control characters) is spelt as the table shows it ("\xff",
// "\x1b", a backslash doubled) and marked name_escaped="true", so that it
// never reads as, or collides with, a name that spells those escapes out.
std::string labels_for(const std::string& name) {
  const bool plain = plain_name(name);
  std::string out = "name=\"";
  for (const char c : plain ? name : escape_for_terminal(name)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  if (!plain) {
    out += ",name_escaped=\"true\"";
  }
  return out;
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

// The gauges of a name's runs (the run ledger), when it has them.
std::optional<double> last_success_seconds(const Verdict& v) {
  if (!v.runs.last_ok || !v.runs.last_ok->end_ms) {
    return std::nullopt;
  }
  return static_cast<double>(*v.runs.last_ok->end_ms) / 1000;
}

std::optional<double> last_run_seconds(const Verdict& v) {
  const auto took = v.runs.last ? v.runs.last->duration() : std::nullopt;
  if (!took) {
    return std::nullopt;
  }
  return static_cast<double>(took->count()) / 1000;
}

std::optional<double> last_run_exit_status(const Verdict& v) {
  if (!v.runs.last || !v.runs.last->exit) {
    return std::nullopt;
  }
  return static_cast<double>(*v.runs.last->exit);
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

void sort_verdicts(std::vector<Verdict>& verdicts, StatusSort by) {
  // The key of a held lock under `by` (smaller first); free locks have none.
  const auto key = [by](const Verdict& v) -> std::optional<long long> {
    if (v.state != State::k_held || v.holders.empty() || by == StatusSort::k_name) {
      return std::nullopt;
    }
    if (by == StatusSort::k_age) {
      long long oldest = 0;
      for (const auto& h : v.holders) {
        oldest = std::max(oldest, age_of(v, h));
      }
      return -oldest;
    }
    long long soonest = std::numeric_limits<long long>::max();
    for (const auto& h : v.holders) {
      soonest = std::min(soonest, h.ttl_ms < 0 ? std::numeric_limits<long long>::max() : h.ttl_ms);
    }
    return soonest;
  };
  std::stable_sort(verdicts.begin(), verdicts.end(), [&](const Verdict& a, const Verdict& b) {
    if (by != StatusSort::k_name) {
      const std::optional<long long> ka = key(a);
      const std::optional<long long> kb = key(b);
      if (ka.has_value() != kb.has_value()) {
        return ka.has_value();
      }
      if (ka && *ka != *kb) {
        return *ka < *kb;
      }
    }
    return a.name < b.name;
  });
}

std::string status_table(const std::vector<Verdict>& verdicts, bool many_servers, bool with_waiters,
                         const TableLayout& layout) {
  std::vector<Row> rows;
  rows.push_back({"NAME", "STATE", "HOST", "PID", "AGE", "TTL", "FENCE", "COUNT", "WAITING", "COMMAND"});
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
  if (!layout.wide) {
    for (auto& row : rows) {
      if (!is_detail(row)) {
        row.erase(row.begin() + k_fence_column, row.begin() + k_fence_column + 2);
      }
    }
  }
  const std::vector<size_t> width = column_widths(rows);
  std::string out;
  for (const auto& row : rows) {
    out += render_row(row, width);
  }
  return clip_lines(out, layout.width);
}

std::string status_json(const std::vector<Verdict>& verdicts) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : verdicts) {
    out.push_back(to_json(v));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string status_prometheus(const std::vector<Verdict>& verdicts) {
  struct Family {
    const char* name;
    const char* help;
    std::function<std::optional<double>(const Verdict&)> value;
  };
  const auto held = [](const Verdict& v) { return v.state == State::k_held; };
  const std::vector<Family> families = {
      {"redlock_lock_held", "1 while the lock is held, 0 while it is free.",
       [&](const Verdict& v) { return std::optional<double>(held(v) ? 1 : 0); }},
      {"redlock_lock_holders", "How many hold the lock (a semaphore's places taken, readers sharing it).",
       [](const Verdict& v) { return std::optional<double>(static_cast<double>(v.holders.size())); }},
      {"redlock_lock_waiters", "How many wait in the lock's line.",
       [](const Verdict& v) {
         return std::optional<double>(
             static_cast<double>(std::max<long long>(v.waiting, static_cast<long long>(v.waiters.size()))));
       }},
      {"redlock_lock_ttl_seconds", "Time left before the lock frees itself unless renewed (its soonest holder's).",
       [&](const Verdict& v) -> std::optional<double> {
         if (!held(v)) {
           return std::nullopt;
         }
         long long ttl = v.holders.front().ttl_ms;
         for (const auto& h : v.holders) {
           ttl = std::min(ttl, h.ttl_ms);
         }
         return static_cast<double>(std::max(0LL, ttl)) / 1000;
       }},
      {"redlock_lock_age_seconds", "How long the lock has been held (its oldest holder's).",
       [&](const Verdict& v) -> std::optional<double> {
         if (!held(v)) {
           return std::nullopt;
         }
         return static_cast<double>(age_of(v, v.holders.front())) / 1000;
       }},
      // Only for the names they concern: ten thousand zeros are no news.
      {"redlock_lock_suspended", "1 while the name is suspended (redlock suspend); absent otherwise.",
       [](const Verdict& v) { return v.suspension ? std::optional<double>(1) : std::nullopt; }},
      {"redlock_lock_revoke_pending",
       "How many of the lock's holders were asked to give it back (redlock revoke); absent when none.",
       [](const Verdict& v) {
         return v.revokes.empty() ? std::nullopt : std::optional<double>(static_cast<double>(v.revokes.size()));
       }},
      {"redlock_last_success_timestamp_seconds", "When the last ok run of the name ended (Unix time, server clock).",
       last_success_seconds},
      {"redlock_last_run_duration_seconds", "How long the last run of the name took, once it ended.", last_run_seconds},
      {"redlock_last_run_exit_status", "The exit status of the last run of the name, once it ended.",
       last_run_exit_status},
  };
  std::string out;
  for (const auto& f : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const auto& v : verdicts) {
      if (v.state == State::k_foreign) {
        continue;
      }
      if (const auto value = f.value(v)) {
        out += fmt::format("{}{{{}}} {}\n", f.name, labels_for(v.name), *value);
      }
    }
  }
  return out;
}

namespace {

// A label value: backslash, double quote and newline escaped, as the
// exposition format asks.
std::string label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string servers_prometheus(const std::vector<ServerGauges>& servers) {
  struct Family {
    const char* name;
    const char* help;
    std::function<std::optional<bool>(const ServerGauges&)> value;
  };
  const std::vector<Family> families = {
      {"redlock_up", "1 when the server answered, 0 when it could not be reached or refused redlock.",
       [](const ServerGauges& s) { return std::optional<bool>(s.up); }},
      {"redlock_server_evicts_locks",
       "1 when the server can evict a held lock (a maxmemory limit with a policy other than noeviction).",
       [](const ServerGauges& s) { return s.evicts_locks; }},
      {"redlock_server_restart_forgets_locks",
       "1 when a restart or crash of the server can forget held locks (not appendonly yes, appendfsync always).",
       [](const ServerGauges& s) { return s.restart_forgets_locks; }},
  };
  std::string out;
  for (const auto& f : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const auto& s : servers) {
      if (const auto value = f.value(s)) {
        out += fmt::format("{}{{server=\"{}\"}} {}\n", f.name, label_value(s.server), *value ? 1 : 0);
      }
    }
  }
  return out;
}

}  // namespace redlock::cli
