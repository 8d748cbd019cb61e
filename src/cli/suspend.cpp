// suspend NAME and resume NAME: an operator's hold on new runs of a name
// (a maintenance window) that running holders do not feel.

#include <fmt/format.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "cli/show/history_format.hpp"
#include "cli/take/take.hpp"
#include "lock/marks.hpp"
#include "util/log.hpp"
#include "util/output.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// What was done, on standard output (break's way): 0, or 74 when it cannot
// be written (what was asked is done all the same).
ExitCode said(const std::string& line) {
  if (!write_stdout(line)) {
    log_warning("could not write to standard output; the name was changed as asked");
    return ExitStatus::k_output;
  }
  return ExitStatus::k_ok;
}

}  // namespace

ExitCode run_suspend(const SuspendOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  validate_text(o.reason, "--reason", k_max_note_bytes);
  const std::string reason = redact_secrets(o.reason);
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  const lock::Owner by = make_owner(getppid(), {});
  const lock::SuspendedUntil s = lock::suspend(locker.servers(), o.name, reason, by, o.lapse_after.value_or(Millis(0)));
  say_held_warnings();
  const std::string until =
      s.until_ms > 0 ? fmt::format("until {} (for {})", format_time(s.until_ms), format_duration(*o.lapse_after))
                     : fmt::format("until redlock resume {}", escape_for_terminal(o.name));
  return said(fmt::format("suspended {} {}: new acquires and execs of it are busy (75); a running holder goes on\n",
                          escape_for_terminal(o.name), until));
}

ExitCode run_resume(const ResumeOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  const bool was = lock::resume(locker.servers(), o.name, make_owner(getppid(), {}));
  say_held_warnings();
  return said(was ? fmt::format("resumed {}\n", escape_for_terminal(o.name))
                  : fmt::format("{} was not suspended\n", escape_for_terminal(o.name)));
}

}  // namespace redlock::cli
