// history NAME and history NAME --max-age D (overdue NAME, its older
// spelling): what the run ledger of a name says (lock/ledger.hpp), across
// every server.

#include "ledger/history.hpp"

#include <fmt/format.h>

#include <cerrno>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "cli/show/history_format.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/output.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// The ledger keeps this many runs: overdue reads them all.
constexpr long long k_whole_ledger = 200;
// history shows this many without --limit.
constexpr long long k_shown_runs = 20;

// Prints `text`; a reader that went away (`history NAME | head -1`) ends
// the command quietly, as it ends `status`.
ExitCode print(const std::string& text) {
  if (!write_stdout(text)) {
    if (errno == EPIPE) {
      return reader_gone();
    }
    log_warning("could not write to standard output");
    return ExitStatus::k_output;
  }
  return ExitStatus::k_ok;
}

}  // namespace

ExitCode run_history(const HistoryOptions& o, const GlobalOptions& g, const Cancel& stop) {
  if (o.max_age) {
    // Whether the last ok run is recent enough is a question about the
    // runs: history answers it, as overdue did.
    if (o.limit) {
      throw UsageError("--limit does not go with --max-age: the decision reads the whole history");
    }
    return run_overdue(OverdueOptions{o.name, o.max_age, o.json}, g, stop);
  }
  validate_name(o.name);
  Resolved r = resolve(g);
  lock::Servers servers(r.endpoints, r.options, stop);
  const ledger::History h = ledger::history(servers, o.name, o.limit.value_or(k_shown_runs));
  say_held_warnings();
  if (o.json) {
    const ExitCode printed = print(history_json(h.runs));
    return printed.ok() && h.runs.empty() ? ExitCode(ExitStatus::k_no) : printed;
  }
  if (h.runs.empty()) {
    log_warning("{} has no runs in its history (exec records them; not with --no-history)",
                escape_for_terminal(o.name));
    return ExitStatus::k_no;
  }
  // A terminal gets a table that fits it; a pipe or a file every column whole.
  return print(history_table(h.runs, h.now_ms, stdout_screen().columns));
}

ExitCode run_overdue(const OverdueOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  if (!o.max_age) {
    throw UsageError("overdue needs --max-age D: how long ago the last ok run may have ended");
  }
  Resolved r = resolve(g);
  lock::Servers servers(r.endpoints, r.options, stop);
  const ledger::History h = ledger::history(servers, o.name, k_whole_ledger);
  say_held_warnings();
  const ledger::Overdue d = ledger::decide_overdue(h.runs, h.now_ms, *o.max_age);
  const ExitCode printed =
      print(o.json ? overdue_json(o.name, d, *o.max_age) : overdue_line(o.name, d, *o.max_age) + "\n");
  if (!printed.ok()) {
    return printed;
  }
  return d.overdue ? ExitCode(ExitStatus::k_no) : ExitCode(ExitStatus::k_ok);
}

}  // namespace redlock::cli
