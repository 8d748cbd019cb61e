#pragma once

// What `status` prints, as pure functions of the locks' verdicts: the
// table (status_table.cpp), the JSON document and the order of the locks
// (status_format.cpp) and the Prometheus metrics (status_metrics.cpp). No
// I/O, no clock: the ages and TTLs come from the verdicts (server time).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "status/verdict.hpp"

namespace redlock::cli {

// How the table is laid out. The default is what a pipe or a file gets
// (scripts read it): every column, each line as long as it needs. On a
// terminal FENCE and COUNT are left out unless `wide`, and the table fits
// `width` columns: NAME is cut first (its values ending with "…"), then
// COMMAND, then whole columns are left out (COMMAND first); no other value
// is ever cut, and a detail line is cut with "…". `columns` (status -o)
// names the columns to show instead, as ps -o does.
struct TableLayout {
  bool wide = true;
  size_t width = 0;                   // 0: no limit
  std::vector<StatusColumn> columns;  // status -o: these, in this order, wide or not (none: as above)
};

// The table: a header line and one line per holder (one of dashes for a lock
// nobody holds); with `with_waiters`, an indented line per waiter; with
// `many_servers`, an indented line per server. Names, hosts and commands are
// escaped for a terminal; no line ends in a blank.
[[nodiscard]] std::string status_table(const std::vector<status::Verdict>& verdicts, bool many_servers,
                                       bool with_waiters, const TableLayout& layout = {});

// `text` with each line cut to at most `width` columns (a column per UTF-8
// character, never half of one); 0 leaves it whole.
[[nodiscard]] std::string clip_lines(std::string_view text, size_t width);

enum class StatusSort;

// Orders the locks for `status --sort`: by name; by age, the longest held
// first; by ttl, the soonest to expire first (a hold with no expiry after
// those with one). Locks nobody holds come after the held ones, by name.
void sort_verdicts(std::vector<status::Verdict>& verdicts, StatusSort by);

// The JSON array of `status --json` (documented field by field in the
// README), indented by two, with a final newline; bytes that are not UTF-8
// are replaced.
[[nodiscard]] std::string status_json(const std::vector<status::Verdict>& verdicts);

// The Prometheus text exposition format: one family at a time, each with its
// HELP and TYPE lines; foreign keys have no samples.
[[nodiscard]] std::string status_prometheus(const std::vector<status::Verdict>& verdicts);

// What the metrics say of one server: whether it answered, and whether it
// can evict a held lock or forget one in a restart (nullopt: not known).
struct ServerGauges {
  std::string server;  // its URL, without a password
  bool up = false;
  std::optional<bool> evicts_locks;
  std::optional<bool> restart_forgets_locks;
};

// The servers' families of the Prometheus exposition: redlock_up (1 or 0,
// always one sample per server), redlock_server_evicts_locks and
// redlock_server_restart_forgets_locks (where known).
[[nodiscard]] std::string servers_prometheus(const std::vector<ServerGauges>& servers);

}  // namespace redlock::cli
