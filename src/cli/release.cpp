#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/servers.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// A release that would take the level of the exec running this command:
// the command gave back more than it took.
ExitCode refuse_exec_level(const std::string& name, const std::optional<RunningExec>& exec) {
  log_warning(
      "{} is held at this level by the exec that runs this command, pid {}; nothing changed (a release gives "
      "back only what the command acquired: the exec releases its own level when the command ends)",
      escape_for_terminal(name), exec ? exec->pid : 0);
  return ExitStatus::k_no;
}

}  // namespace

ExitCode run_release(const ReleaseOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  const std::string token = required_token(o.token, "release");
  const Millis hold = o.hold_at_least;
  // The command's inherited token must never take its own exec's level.
  const std::optional<RunningExec> exec = exec_holding(o.name, token);
  const long long floor = exec ? exec->level : 0;
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  if (hold > Millis(0)) {
    const lock::Ended ended = locker.finish(o.name, token, hold, false, floor);
    if (ended.kind == lock::Ended::Kind::k_floor) {
      return refuse_exec_level(o.name, exec);
    }
    if (ended.kind == lock::Ended::Kind::k_kept) {
      log_debug("{} stays held for {} more (--hold-at-least); its token no longer holds it",
                escape_for_terminal(o.name), format_duration(ended.kept));
      return ExitStatus::k_ok;
    }
    if (ended.kind != lock::Ended::Kind::k_not_held) {
      log_debug("released {}", escape_for_terminal(o.name));
      return ExitStatus::k_ok;
    }
  } else {
    switch (locker.release(o.name, token, floor)) {
      case lock::ReleaseOutcome::k_released:
        log_debug("released {}", escape_for_terminal(o.name));
        return ExitStatus::k_ok;
      case lock::ReleaseOutcome::k_decremented:
        log_debug("released one level of {}; it is still held", escape_for_terminal(o.name));
        return ExitStatus::k_ok;
      case lock::ReleaseOutcome::k_floor:
        return refuse_exec_level(o.name, exec);
      case lock::ReleaseOutcome::k_not_held:
        break;
    }
  }
  log_warning("{} is not held by this token (it expired, was released, or is someone else's); nothing changed",
              escape_for_terminal(o.name));
  return ExitStatus::k_no;
}

}  // namespace redlock::cli
