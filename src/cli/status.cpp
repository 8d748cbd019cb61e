#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/servers.hpp"
#include "cli/status_format.hpp"
#include "lock/audit.hpp"
#include "lock/checks.hpp"
#include "lock/layout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/output.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

using Verdict = lock::StatusVerdict;
using State = lock::StatusVerdict::State;

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

// Every lock asked for (or every lock under the prefix), judged across the
// servers; with `runs`, with its last run. The table of every lock shows no
// runs, and does not pay a round trip for them.
std::vector<Verdict> snapshot(lock::Locker& locker, const std::vector<std::string>& asked, bool scan, bool runs) {
  std::vector<std::string> names = asked.empty() ? locker.list(scan) : asked;
  std::vector<std::vector<lock::ServerView>> views = locker.inspect(names);
  std::vector<Verdict> verdicts;
  for (size_t i = 0; i < names.size(); ++i) {
    Verdict v = lock::judge(names[i], views[i]);
    // A listed name whose lock expired between the listing and its reading is simply gone.
    if (!asked.empty() || v.shown()) {
      verdicts.push_back(std::move(v));
    }
  }
  if (!runs) {
    return verdicts;
  }
  // The last run of each, from the run ledgers, free locks included.
  std::vector<std::string> shown;
  for (const auto& v : verdicts) {
    if (v.state != State::k_foreign) {
      shown.push_back(v.name);
    }
  }
  std::vector<lock::LastRuns> last = locker.last_runs(shown);
  for (size_t i = 0, k = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].state != State::k_foreign) {
      verdicts[i].runs = std::move(last[k++]);
    }
  }
  return verdicts;
}

struct Shown {
  std::string output;                  // for standard output
  std::string empty;                   // why there is nothing to show, if so
  ExitCode status = ExitStatus::k_ok;  // 0; 1 when an asked-for lock is free; 76 for a foreign key
};

// Where the locks are looked for, for people: the prefix and the servers.
struct Where {
  std::string prefix;
  std::string servers;  // without passwords
};

Shown show(const StatusOptions& o, Format format, const std::vector<Verdict>& verdicts, const Where& where,
           bool many_servers) {
  Shown shown;
  if (format == Format::k_json) {
    shown.output = status_json(verdicts);
  } else if (format == Format::k_prometheus) {
    shown.output = status_prometheus(verdicts);
  } else if (verdicts.empty()) {
    shown.empty = fmt::format("no locks under the prefix '{}' on {}", escape_for_terminal(where.prefix),
                              escape_for_terminal(where.servers));
  } else {
    shown.output = status_table(verdicts, many_servers, !o.names.empty());
  }
  for (const auto& v : verdicts) {
    if (v.state == State::k_foreign) {
      shown.status = ExitStatus::k_protocol;
    } else if (v.state == State::k_free && shown.status.ok()) {
      shown.status = ExitStatus::k_no;
    }
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
void say_free(const std::vector<Verdict>& verdicts) {
  std::vector<std::string> free;
  for (const auto& v : verdicts) {
    if (v.state == State::k_free) {
      free.push_back(escape_for_terminal(v.name));
    }
  }
  log_warning("{} {} not held", spoken_list(free), free.size() == 1 ? "is" : "are");
}

// status --watch: shown again every `interval` (redrawn in place on a
// terminal, one block after another otherwise) until a stop signal, which
// ends it with 0, even while a reader that stopped reading (less) keeps a
// write waiting. Redis trouble is shown and tried again at the next turn.
ExitCode watch(const StatusOptions& o, const std::vector<std::string>& names, Format format, Millis interval,
               lock::Locker& locker, const Where& where) {
  SignalFd stops({SIGINT, SIGTERM, SIGHUP});
  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  StoppableStdout out;
  for (bool first = true;; first = false) {
    std::string block;
    try {
      const auto verdicts = snapshot(locker, names, o.scan, !names.empty() || format != Format::k_table);
      say_held_warnings();
      const Shown shown = show(o, format, verdicts, where, locker.size() > 1);
      block = shown.empty.empty() ? shown.output : shown.empty + "\n";
    } catch (const Error& e) {
      if (stopped(stops)) {
        return ExitStatus::k_ok;
      }
      block = fmt::format("redlock: {}\n", one_line(e.what()));
    }
    if (terminal) {
      const std::time_t now = std::time(nullptr);
      char when[64] = {};
      std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
      std::string what = "redlock status";
      for (const auto& name : names) {
        what += ' ';
        what += escape_for_terminal(name);
      }
      what += " on " + escape_for_terminal(where.servers);
      block = fmt::format("\033[H\033[2JEvery {}: {}    {}\n\n{}", format_duration(interval), what, when, block);
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
        log_warning("could not write the status to standard output");
        return ExitStatus::k_output;
    }
    if (!stops.cancel().sleep_until(Clock::now() + interval) && stopped(stops)) {
      return ExitStatus::k_ok;
    }
  }
}

// status --format prometheus: always a whole exposition, the servers'
// families (redlock_up and what may lose locks) included when the locks
// cannot be read; the exit status still says why they could not.
ExitCode prometheus(const StatusOptions& o, const std::vector<std::string>& names, const Resolved& r,
                    lock::Locker& locker, const Cancel& stop) {
  std::vector<ServerGauges> servers;
  for (const auto& facts : lock::probe(r.endpoints, r.options, stop)) {
    servers.push_back({facts.server, !facts.failure, lock::evicts_locks(facts), lock::restart_forgets_locks(facts)});
  }
  std::vector<Verdict> verdicts;
  std::optional<Error> failure;
  try {
    verdicts = snapshot(locker, names, o.scan, true);
  } catch (const Error& e) {
    failure = e;
  }
  const Where where{r.options.prefix, display_endpoints(r.endpoints)};
  const Shown shown = show(o, Format::k_prometheus, verdicts, where, locker.size() > 1);
  if (!write_stdout(shown.output + servers_prometheus(servers))) {
    log_warning("could not write the status to standard output");
    return ExitStatus::k_output;
  }
  if (failure) {
    log_warning("{}", failure->what());
    return failure->status();
  }
  warn_foreign(verdicts);
  if (shown.status == ExitStatus::k_no) {
    say_free(verdicts);
  }
  return shown.status;
}

}  // namespace

ExitCode run_status(const StatusOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const std::vector<std::string> names = named_locks(o.names);
  const Format format = format_of(o);
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
  const auto verdicts = snapshot(locker, names, o.scan, !names.empty() || format != Format::k_table);
  const Shown shown = show(o, format, verdicts, where, locker.size() > 1);
  if (!shown.empty.empty()) {
    log_warning("{}", shown.empty);
  }
  if (!shown.output.empty() && !write_stdout(shown.output)) {
    log_warning("could not write the status to standard output");
    return ExitStatus::k_output;
  }
  warn_foreign(verdicts);
  if (shown.status == ExitStatus::k_no) {
    say_free(verdicts);
  }
  return shown.status;
}

}  // namespace redlock::cli
