#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "lock/waiter.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

CLI::App* add_acquire(CLI::App& app, AcquireOptions& o) {
  auto* sub = app.add_subcommand("acquire", "take the lock and print its token");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  sub->add_option("--ttl", o.ttl, "how long the lock lives unless renewed (default 30s)")->type_name("D");
  sub->add_option("--wait", o.wait, "how long to wait for a held lock: 0 (one try, the default), 30s, inf")
      ->type_name("D");
  sub->add_option("--token", o.token, "re-enter the lock if this token holds it (default: $REDLOCK_TOKEN)")
      ->type_name("T");
  sub->add_option("--limit", o.limit, "a counting semaphore: up to N holders at once (default 1, a plain lock)")
      ->type_name("N");
  sub->add_option("--conflict-exit-code", o.conflict_exit_code, "exit status when the lock is busy (default 75)")
      ->type_name("N");
  sub->add_flag("--json", o.json, "print token, fence, ttl_ms and validity_ms as JSON");
  sub->footer("Example:\n  tok=$(redlock acquire --ttl 60s --wait 10s migrate) || exit 1");
  return sub;
}

int run_acquire(const AcquireOptions& o, const GlobalOptions& g) {
  validate_name(o.name);
  const Millis ttl = parse_ttl(o.ttl);
  const auto wait = parse_wait(o.wait, "--wait");
  validate_exit_code(o.conflict_exit_code, "--conflict-exit-code");
  const lock::Claim claim = make_claim(o.limit, false);
  const std::string reenter = token_from(o.token);
  Resolved r = resolve(g);

  SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  lock::Locker locker(r.endpoints, r.options);
  // The lock is meant for the script that called us, so record that process.
  const long long holder_pid = getppid();
  lock::Owner owner{host_name(), holder_pid, process_command(holder_pid)};
  auto outcome = lock::acquire_waiting(locker, o.name, ttl, reenter, owner, wait, signals.fd(), claim);

  if (std::holds_alternative<lock::Interrupted>(outcome)) {
    int sig = signals.take();
    log_warning("interrupted by signal {} while waiting for {}; nothing was taken", sig, escape_for_terminal(o.name));
    return 128 + sig;
  }
  if (auto* busy = std::get_if<lock::Busy>(&outcome)) {
    return report_busy(o.name, *busy, wait, o.conflict_exit_code);
  }
  const auto& got = std::get<lock::Acquired>(outcome);
  if (int sig = signals.take()) {
    // Asked to stop while the acquire was in flight: give it back.
    (void)locker.release(o.name, got.token);
    log_warning("interrupted by signal {}; {} was released", sig, escape_for_terminal(o.name));
    return 128 + sig;
  }
  if (o.json) {
    nlohmann::json j = {{"name", o.name},
                        {"token", got.token},
                        {"fence", got.fence},
                        {"count", got.count},
                        {"ttl_ms", got.ttl.count()},
                        {"validity_ms", got.validity.count()}};
    if (locker.size() > 1) {
      auto names = locker.endpoint_names();
      nlohmann::json voted = nlohmann::json::array();
      for (size_t i = 0; i < names.size(); ++i) {
        if (got.voted[i]) {
          voted.push_back(names[i]);
        }
      }
      j["voted"] = voted;
    }
    fmt::print("{}\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}\n", got.token);
  }
  return 0;
}

}  // namespace redlock::cli
