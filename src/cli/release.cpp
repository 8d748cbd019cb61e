#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/servers.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

ExitCode run_release(const ReleaseOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  const std::string token = required_token(o.token, "release");
  const Millis hold = o.hold_at_least;
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  if (hold > Millis(0)) {
    const lock::Ended ended = locker.finish(o.name, token, hold, false);
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
    switch (locker.release(o.name, token)) {
      case lock::ReleaseOutcome::k_released:
        log_debug("released {}", escape_for_terminal(o.name));
        return ExitStatus::k_ok;
      case lock::ReleaseOutcome::k_decremented:
        log_debug("released one level of {}; it is still held", escape_for_terminal(o.name));
        return ExitStatus::k_ok;
      case lock::ReleaseOutcome::k_not_held:
        break;
    }
  }
  log_warning("{} is not held by this token (it expired, was released, or is someone else's); nothing changed",
              escape_for_terminal(o.name));
  return ExitStatus::k_no;
}

}  // namespace redlock::cli
