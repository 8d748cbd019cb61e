#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/servers.hpp"
#include "cli/take.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// Prints `line` on stdout. A token nobody received is a lock nobody can
// release: if the write fails (a closed pipe, a full disk), give the lock
// back and exit 74 (EX_IOERR).
ExitCode print_or_give_back(const std::string& line, lock::Locker& locker, const std::string& name,
                            const std::string& token) {
  if (write_stdout(line + "\n")) {
    return ExitStatus::k_ok;
  }
  (void)locker.release(name, token);
  log_warning("could not write the token to standard output; {} was released", escape_for_terminal(name));
  return ExitStatus::k_output;
}

}  // namespace

ExitCode run_acquire(const AcquireOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const Take take = parse_take(o.take, o.shared);
  Resolved r = resolve(g);

  SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  lock::Locker locker(r.endpoints, r.options, stop);
  // The lock is meant for the script that called us, so record that process.
  const long long holder_pid = getppid();
  auto taken = take_lock(locker, take, make_owner(holder_pid, process_argv(holder_pid)), signals);
  const auto* got_it = std::get_if<lock::Acquired>(&taken);
  if (got_it == nullptr) {
    return status_without_lock(taken);
  }
  const lock::Acquired& got = *got_it;
  if (o.json) {
    nlohmann::json j = {{"name", take.name},  {"token", got.token},        {"fence", got.fence},
                        {"count", got.count}, {"ttl_ms", got.ttl.count()}, {"validity_ms", got.validity.count()}};
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
    return print_or_give_back(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), locker, take.name,
                              got.token);
  }
  return print_or_give_back(got.token, locker, take.name, got.token);
}

}  // namespace redlock::cli
