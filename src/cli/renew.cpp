#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/commands.hpp"
#include "cli/servers.hpp"
#include "lock/layout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

ExitCode run_renew(const RenewOptions& o, const GlobalOptions& g, const Cancel& stop) {
  validate_name(o.name);
  const Millis ttl = o.ttl;
  const std::string token = required_token(o.token, "renew");
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  auto outcome = locker.renew(o.name, token, ttl);
  if (auto* renewed = std::get_if<lock::Renewed>(&outcome)) {
    if (o.json) {
      nlohmann::json j = {
          {"name", o.name}, {"ttl_ms", renewed->ttl.count()}, {"validity_ms", renewed->validity.count()}};
      if (!write_stdout(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
        log_warning("could not write to standard output; {} was renewed", escape_for_terminal(o.name));
        return ExitStatus::k_output;
      }
    }
    return ExitStatus::k_ok;
  }
  const auto& not_held = std::get<lock::NotHeld>(outcome);
  if (not_held.foreign && locker.size() == 1) {
    throw Error(ExitStatus::k_protocol, lock::foreign_message(o.name, not_held.what, ""));
  }
  log_warning("{} is not held by this token (it expired or was released); acquire it again",
              escape_for_terminal(o.name));
  return ExitStatus::k_no;
}

}  // namespace redlock::cli
