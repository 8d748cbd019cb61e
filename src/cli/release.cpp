#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/setup/arguments.hpp"
#include "cli/setup/servers.hpp"
#include "cli/take/take.hpp"
#include "exec/keeper.hpp"
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

namespace {

// Gives back one level of `name` held by `token` (with --hold-at-least, the
// last level kept until then): 0, or 1 when the token does not hold it (the
// name is added to `not_held`, said once for every name), or holds only the
// levels of the exec that runs this command.
ExitCode release_one(lock::Locker& locker, const std::string& name, const std::string& token, Millis hold,
                     std::vector<std::string>& not_held) {
  // The command's inherited token must never take its own exec's level.
  const std::optional<RunningExec> exec = exec_holding(name, token);
  const long long floor = exec ? exec->level : 0;
  if (hold > Millis(0)) {
    const lock::Ended ended = locker.finish(name, token, hold, false, floor);
    if (ended.kind == lock::Ended::Kind::k_floor) {
      return refuse_exec_level(name, exec);
    }
    if (ended.kind == lock::Ended::Kind::k_kept) {
      log_debug("{} stays held for {} more (--hold-at-least); its token no longer holds it", escape_for_terminal(name),
                format_duration(ended.kept));
      return ExitStatus::k_ok;
    }
    if (ended.kind != lock::Ended::Kind::k_not_held) {
      log_debug("released {}", escape_for_terminal(name));
      return ExitStatus::k_ok;
    }
  } else {
    switch (locker.release(name, token, floor)) {
      case lock::ReleaseOutcome::k_released:
        log_debug("released {}", escape_for_terminal(name));
        return ExitStatus::k_ok;
      case lock::ReleaseOutcome::k_decremented:
        log_debug("released one level of {}; it is still held", escape_for_terminal(name));
        return ExitStatus::k_ok;
      case lock::ReleaseOutcome::k_floor:
        return refuse_exec_level(name, exec);
      case lock::ReleaseOutcome::k_not_held:
        break;
    }
  }
  not_held.push_back(escape_for_terminal(name));
  return ExitStatus::k_no;
}

}  // namespace

// Several names are released one by one, the last taken first: every one
// the token holds is released even when another is not held (then 1).
ExitCode run_release(const ReleaseOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const std::vector<std::string> names = parse_names(o.names);
  const std::string token = required_token(o.token, "release");
  Resolved r = resolve(g);
  // A keeper of acquire --while-pid renews this token's lock: it ends
  // first, so that it neither renews nor finds the lock lost.
  (void)exec::stop_keepers(token);
  lock::Locker locker(r.endpoints, r.options, stop);
  ExitCode status = ExitStatus::k_ok;
  std::vector<std::string> not_held;
  for (auto name = names.rbegin(); name != names.rend(); ++name) {
    if (const ExitCode one = release_one(locker, *name, token, o.hold_at_least, not_held); one != ExitStatus::k_ok) {
      status = one;
    }
  }
  if (!not_held.empty()) {
    std::reverse(not_held.begin(), not_held.end());
    const bool one = not_held.size() == 1;
    log_warning(
        "{} {} not held by this token ({}); nothing changed", spoken_list(not_held), one ? "is" : "are",
        one ? "it expired, was released, or is someone else's" : "they expired, were released, or are someone else's");
  }
  return status;
}

}  // namespace redlock::cli
