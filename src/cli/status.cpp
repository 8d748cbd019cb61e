#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "cli/commands.hpp"
#include "cli/setup/arguments.hpp"
#include "cli/setup/servers.hpp"
#include "cli/show/status_format.hpp"
#include "doctor/audit.hpp"
#include "doctor/checks.hpp"
#include "ledger/history.hpp"
#include "lock/layout.hpp"
#include "status/survey.hpp"
#include "status/verdict.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/output.hpp"
#include "util/signals.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

using Verdict = status::Verdict;
using State = status::Verdict::State;

using Format = StatusFormat;

Format format_of(const StatusOptions& o) {
  if (!o.format) {
    return o.json ? Format::k_json : Format::k_table;
  }
  if (o.json && *o.format != Format::k_json) {
    throw UsageError(fmt::format("--json is --format json; it does not go with --format {}",
                                 *o.format == Format::k_table ? "table" : "prometheus"));
  }
  return *o.format;
}

// The locks to show, and the globs that matched no held lock.
struct Snapshot {
  std::vector<Verdict> verdicts;  // the named ones first
  size_t named = 0;               // how many of them were named
  std::vector<std::string> unmatched;
  bool indexed_only = false;  // a server was listed from its index, without SCAN
};

// Whether a lock named is free: status NAME... says so and exits 1. A
// free lock status lists on its own (a suspended name nobody holds) is not.
bool named_free(const Snapshot& snap) {
  return std::any_of(snap.verdicts.begin(), snap.verdicts.begin() + static_cast<std::ptrdiff_t>(snap.named),
                     [](const Verdict& v) { return v.state == State::k_free; });
}

bool matches_any(const std::vector<std::string>& globs, const std::string& name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_matches(g, name); });
}

// The names of `listed` that a glob of `globs` matches (every one when
// there are none), after the names asked for, which are not repeated.
void add_listed(std::vector<std::string>& names, const std::vector<std::string>& globs,
                std::vector<std::string> listed) {
  const size_t named = names.size();
  for (auto& name : listed) {
    const bool wanted = globs.empty() || matches_any(globs, name);
    if (wanted && std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(named), name) ==
                      names.begin() + static_cast<std::ptrdiff_t>(named)) {
      names.push_back(std::move(name));
    }
  }
}

// Every lock named (free ones too), then those under the prefix that a glob
// matches (every one when neither names nor globs are given), judged across
// the servers; with `runs`, with its last run. The globs are matched here
// against the names the index of held locks lists: a glob never makes
// status read the whole keyspace. The table of every lock shows no runs,
// and does not pay a round trip for them. With `ledgers` (the metrics, whose
// last-run gauges a job's dead man's switch reads while its lock is free),
// the names with runs are listed too, held or free.
Snapshot snapshot(lock::Locker& locker, const StatusNames& asked, bool scan, bool runs, bool ledgers = false) {
  std::vector<std::string> names = asked.names;
  const size_t named = names.size();
  status::Survey survey(locker.servers());
  bool indexed_only = false;
  if (named == 0 || !asked.globs.empty()) {
    add_listed(names, asked.globs, survey.list(scan, ledgers, &indexed_only));
  }
  std::vector<std::vector<lock::ServerView>> views = survey.inspect(names);
  Snapshot out;
  out.named = named;
  out.indexed_only = indexed_only;
  for (size_t i = 0; i < names.size(); ++i) {
    Verdict v = status::judge(names[i], std::move(views[i]));
    // A listed name whose lock expired between the listing and its reading
    // is simply gone (with `ledgers`, once its runs are known to be none).
    if (i < named || v.shown() || ledgers) {
      out.verdicts.push_back(std::move(v));
    }
  }
  const auto listed = [&](const Verdict& v) { return v.shown() || (ledgers && (v.runs.last || v.runs.last_ok)); };
  const auto match_globs = [&] {
    for (const auto& glob : asked.globs) {
      const bool matched = std::any_of(out.verdicts.begin(), out.verdicts.end(),
                                       [&](const Verdict& v) { return listed(v) && glob_matches(glob, v.name); });
      if (!matched) {
        out.unmatched.push_back(glob);
      }
    }
  };
  if (!runs) {
    match_globs();
    return out;
  }
  std::vector<Verdict>& verdicts = out.verdicts;
  // The last run of each, from the run ledgers, free locks included.
  std::vector<std::string> shown;
  for (const auto& v : verdicts) {
    if (v.state != State::k_foreign) {
      shown.push_back(v.name);
    }
  }
  std::vector<lock::LastRuns> last = ledger::last_runs(locker.servers(), shown);
  for (size_t i = 0, k = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].state != State::k_foreign) {
      verdicts[i].runs = std::move(last[k++]);
    }
  }
  verdicts.erase(std::remove_if(verdicts.begin() + static_cast<std::ptrdiff_t>(named), verdicts.end(),
                                [&](const Verdict& v) { return !listed(v); }),
                 verdicts.end());
  match_globs();
  return out;
}

struct Shown {
  std::string output;                  // for standard output
  std::string empty;                   // why there is nothing to show, if so
  std::string unmatched;               // which globs matched no held lock, if any
  ExitCode status = ExitStatus::k_ok;  // 0; 1: a lock named is free, a glob matched none; 76: a foreign key
};

std::string quoted_globs(const std::vector<std::string>& globs) {
  std::vector<std::string> quoted;
  quoted.reserve(globs.size());
  for (const auto& g : globs) {
    quoted.push_back("'" + escape_for_terminal(g) + "'");
  }
  return spoken_list(quoted);
}

// Where the locks are looked for, for people: the prefix and the servers.
struct Where {
  std::string prefix;
  std::string servers;  // without passwords
};

// `named`: names were given (their waiters and last runs are shown).
Shown show(const StatusOptions& o, Format format, Snapshot& snap, bool named, const Where& where, bool many_servers,
           const TableLayout& layout) {
  if (o.sort) {
    sort_verdicts(snap.verdicts, *o.sort);
  }
  const std::vector<Verdict>& verdicts = snap.verdicts;
  Shown shown;
  if (format == Format::k_json) {
    shown.output = status_json(verdicts);
  } else if (format == Format::k_prometheus) {
    shown.output = status_prometheus(verdicts);
  } else if (verdicts.empty()) {
    shown.empty =
        snap.unmatched.empty()
            ? fmt::format("no locks under the prefix '{}' on {}{}", escape_for_terminal(where.prefix),
                          escape_for_terminal(where.servers),
                          // The index lists what this version holds; an old
                          // host's lock is found only by a scan.
                          snap.indexed_only ? " (from the index of held locks; status --scan also lists the "
                                              "locks of redlock versions before 0.2)"
                                            : "")
            : fmt::format("no held lock under the prefix '{}' on {} matches {}", escape_for_terminal(where.prefix),
                          escape_for_terminal(where.servers), quoted_globs(snap.unmatched));
  } else {
    shown.output = status_table(verdicts, many_servers, named, layout);
  }
  if (!snap.unmatched.empty() && shown.empty.empty()) {
    shown.unmatched = fmt::format("no held lock matches {}", quoted_globs(snap.unmatched));
  }
  if (std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.state == State::k_foreign; })) {
    shown.status = ExitStatus::k_protocol;
  } else if (named_free(snap)) {
    shown.status = ExitStatus::k_no;
  }
  if (!snap.unmatched.empty() && shown.status.ok()) {
    shown.status = ExitStatus::k_no;
  }
  return shown;
}

// Keys redlock did not write end status with 76, and a failure gets one
// line: it names them all.
void warn_foreign(const std::vector<Verdict>& verdicts) {
  std::vector<std::pair<std::string, std::string>> foreign;
  for (const auto& v : verdicts) {
    if (v.state == State::k_foreign) {
      foreign.emplace_back(v.name, v.foreign_type);
    }
  }
  if (!foreign.empty()) {
    log_warning("{}", lock::foreign_keys_message(foreign));
  }
}

// Whether a stop signal came. Every one pending is taken: a second Ctrl-C
// or a TERM sent with the INT is the same request to stop, not an
// interruption of the ending watch (which would turn its 0 into 130).
bool stopped(SignalFd& stops) {
  if (stops.take() == 0) {
    return false;
  }
  while (stops.take() != 0) {
  }
  return true;
}

// status NAME... exits 1 when a lock named is free, and says which.
void say_free(const Snapshot& snap) {
  std::vector<std::string> free;
  for (size_t i = 0; i < snap.named; ++i) {
    if (snap.verdicts[i].state == State::k_free) {
      free.push_back(escape_for_terminal(snap.verdicts[i].name));
    }
  }
  log_warning("{} {} not held", spoken_list(free), free.size() == 1 ? "is" : "are");
}

// What fits a screen, as watch(1) shows it: each line clipped to its width,
// and only as many lines as leave the header in sight (the last line never
// ends in a newline that would scroll it away).
std::string fit_screen(const std::string& text, const Screen& shown) {
  std::string clipped = clip_lines(text, shown.columns);
  size_t lines = 0;
  for (size_t at = 0; at < clipped.size(); ++at) {
    if (clipped[at] == '\n' && ++lines + 1 >= shown.rows) {
      clipped.resize(at + 1);
      break;
    }
  }
  return clipped;
}

// The header of a watched screen, as watch(1) has it: what is shown, then
// the time, on one line of at most `columns`; what is shown is cut (ending
// with "…") so that the time stays in sight.
std::string watch_header(const std::string& what, const std::string& when, size_t columns) {
  constexpr size_t k_gap = 4;
  const size_t need = text_columns(what) + k_gap + text_columns(when);
  if (need <= columns) {
    return what + std::string(k_gap, ' ') + when;
  }
  const size_t room = columns > text_columns(when) + 2 ? columns - text_columns(when) - 2 : 0;
  if (room < 8) {
    return fit_columns(what, columns);
  }
  return fit_columns(what, room) + "  " + when;
}

// status --watch: shown again every `interval` (redrawn in place on a
// terminal, clipped to the screen under its header, one block after
// another otherwise) until a stop signal, which ends it with 0, even while
// a reader that stopped reading (less) keeps a write waiting. Redis trouble
// is shown and tried again at the next turn.
ExitCode watch(const StatusOptions& o, const StatusNames& names, Format format, Millis interval, lock::Locker& locker,
               const Where& where) {
  SignalFd stops({SIGINT, SIGTERM, SIGHUP});
  StoppableStdout out;
  for (bool first = true;; first = false) {
    const Screen now = stdout_screen();
    const bool terminal = now.columns > 0;
    std::string block;
    try {
      const bool runs = !names.names.empty() || format != Format::k_table;
      Snapshot snap = snapshot(locker, names, o.scan, runs);
      say_held_warnings();
      const Shown shown =
          show(o, format, snap, !names.names.empty(), where, locker.size() > 1,
               terminal ? TableLayout{o.wide, now.columns, o.columns} : TableLayout{true, 0, o.columns});
      block = shown.empty.empty() ? shown.output : shown.empty + "\n";
    } catch (const Error& e) {
      if (stopped(stops)) {
        return ExitStatus::k_ok;
      }
      block = fmt::format("redlock: {}\n", one_line(e.what()));
    }
    if (terminal) {
      const std::string when =
          format_time(std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count());
      std::string what = "redlock status";
      for (const auto& name : o.names) {
        what += ' ';
        what += escape_for_terminal(name);
      }
      what += " on ";
      what += escape_for_terminal(where.servers);
      std::string screen = watch_header(fmt::format("Every {}: {}", format_duration(interval), what), when,
                                        static_cast<size_t>(now.columns)) +
                           "\n\n";
      screen += block;
      block = fmt::format("\033[H\033[2J{}", fit_screen(screen, now));
    } else if (!first) {
      block = fmt::format("\n{}", block);  // insert() would trip a false -Wrestrict of GCC 12
    }
    switch (out.write(block, stops.cancel())) {
      case StoppableStdout::Outcome::k_written:
        break;
      case StoppableStdout::Outcome::k_stopped:
        (void)stopped(stops);
        return ExitStatus::k_ok;
      case StoppableStdout::Outcome::k_failed:
        if (errno == EPIPE) {
          return reader_gone();
        }
        log_warning("could not write the status to standard output");
        return ExitStatus::k_output;
    }
    if (!stops.cancel().sleep_until(Clock::now() + interval) && stopped(stops)) {
      return ExitStatus::k_ok;
    }
  }
}

// What is said on stderr once the status is out (foreign keys, globs that
// matched nothing, named locks that are free), and the exit status.
ExitCode said_after(const Shown& shown, const Snapshot& snap) {
  warn_foreign(snap.verdicts);
  if (!shown.unmatched.empty()) {
    log_warning("{}", shown.unmatched);
  }
  if (shown.status == ExitStatus::k_no && named_free(snap)) {
    say_free(snap);
  }
  return shown.status;
}

// status --format prometheus: always a whole exposition, the servers'
// families (redlock_up and what may lose locks) included when the locks
// cannot be read; the exit status still says why they could not.
ExitCode prometheus(const StatusOptions& o, const StatusNames& names, const Resolved& r, lock::Locker& locker,
                    const Cancel& stop) {
  std::vector<ServerGauges> servers;
  for (const auto& facts : doctor::probe(r.endpoints, r.options, stop)) {
    servers.push_back(
        {facts.server, !facts.failure, doctor::evicts_locks(facts), doctor::restart_forgets_locks(facts)});
  }
  Snapshot snap;
  std::optional<Error> failure;
  try {
    snap = snapshot(locker, names, o.scan, true, true);
  } catch (const Error& e) {
    failure = e;
  }
  const Where where{r.options.prefix, display_endpoints(r.endpoints)};
  const Shown shown =
      show(o, Format::k_prometheus, snap, !names.names.empty(), where, locker.size() > 1, TableLayout{});
  if (!write_stdout(shown.output + servers_prometheus(servers))) {
    if (errno == EPIPE) {
      return reader_gone();
    }
    log_warning("could not write the status to standard output");
    return ExitStatus::k_output;
  }
  if (failure) {
    log_warning("{}", failure->what());
    return failure->status();
  }
  return said_after(shown, snap);
}

}  // namespace

ExitCode run_status(const StatusOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const StatusNames names = status_names(o.names);
  const Format format = format_of(o);
  if (!o.columns.empty() && format != Format::k_table) {
    // ps -o shapes ps's one output; a JSON or metrics reader wants every field.
    throw UsageError(fmt::format("--columns picks the table's columns; it does not go with {}",
                                 format == Format::k_json ? "--json" : "--format prometheus"));
  }
  if (o.interval && !o.watch) {
    throw UsageError("--interval goes with --watch");
  }
  const Millis interval = o.interval.value_or(Millis(2000));
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  const Where where{r.options.prefix, display_endpoints(r.endpoints)};
  if (o.watch) {
    return watch(o, names, format, interval, locker, where);
  }
  if (format == Format::k_prometheus) {
    return prometheus(o, names, r, locker, stop);
  }
  Snapshot snap = snapshot(locker, names, o.scan, !names.names.empty() || format != Format::k_table);
  const Screen terminal = stdout_screen();
  // A terminal gets a table that fits it (unless --wide); a pipe or a file
  // every column, whole.
  // -o names the columns wherever it goes.
  const TableLayout layout = terminal.columns > 0 && !o.wide ? TableLayout{false, terminal.columns, o.columns}
                                                             : TableLayout{true, 0, o.columns};
  const Shown shown = show(o, format, snap, !names.names.empty(), where, locker.size() > 1, layout);
  if (!shown.empty.empty()) {
    log_warning("{}", shown.empty);
  }
  if (!shown.output.empty() && !write_stdout(shown.output)) {
    if (errno == EPIPE) {
      return reader_gone();
    }
    log_warning("could not write the status to standard output");
    return ExitStatus::k_output;
  }
  return said_after(shown, snap);
}

}  // namespace redlock::cli
