#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/setup/arguments.hpp"
#include "cli/setup/servers.hpp"
#include "cli/take/take.hpp"
#include "lock/layout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

// Several names are renewed one by one, in sorted order; each the token
// holds is renewed even when another is not held (then 1).
ExitCode run_renew(const RenewOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const std::vector<std::string> names = parse_names(o.names);
  const Millis ttl = o.ttl;
  const std::string token = required_token(o.token, "renew");
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  ExitCode status = ExitStatus::k_ok;
  std::vector<std::string> unheld;  // said in one line at the end
  for (const auto& name : names) {
    auto outcome = locker.renew(name, token, ttl);
    if (auto* renewed = std::get_if<lock::Renewed>(&outcome)) {
      if (o.json) {
        nlohmann::json j = {
            {"name", name}, {"ttl_ms", renewed->ttl.count()}, {"validity_ms", renewed->validity.count()}};
        if (!write_stdout(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
          log_warning("could not write to standard output; {} was renewed", escape_for_terminal(name));
          return ExitStatus::k_output;
        }
      }
      continue;
    }
    const auto& not_held = std::get<lock::NotHeld>(outcome);
    if (not_held.foreign && locker.size() == 1) {
      throw Error(ExitStatus::k_protocol, lock::foreign_message(name, not_held.what, ""));
    }
    unheld.push_back(escape_for_terminal(name));
    status = ExitStatus::k_no;
  }
  // One line for every name, as any status 1 has.
  if (!unheld.empty()) {
    const bool one = unheld.size() == 1;
    log_warning("{} {} not held by this token ({}); acquire {} again", spoken_list(unheld), one ? "is" : "are",
                one ? "it expired or was released" : "they expired or were released", one ? "it" : "them");
  }
  return status;
}

}  // namespace redlock::cli
