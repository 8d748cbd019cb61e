#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "cli/take/take.hpp"
#include "cli/take/take_all.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// Prints `line` on stdout. A token nobody received is a lock nobody can
// release: if the write fails (a closed pipe, a full disk), give the lock
// back and exit 74 (EX_IOERR).
ExitCode print_or_give_back(const std::string& line, lock::Locker& locker, const HeldAll& all) {
  if (write_stdout(line + "\n")) {
    return ExitStatus::k_ok;
  }
  give_back(locker, all.held, false);
  log_warning("could not write the token to standard output; {} {} released", spoken_names(all.names()),
              all.held.size() == 1 ? "was" : "were");
  return ExitStatus::k_output;
}

// acquire --json: one name's token, fence, count and leases; for several,
// the first name's, and `locks`: every name with its fence and count, in
// the order taken, and the validity of the earliest lease.
nlohmann::json acquired_json(const Take& take, const HeldAll& all, const lock::Locker& locker) {
  const lock::Acquired& got = all.of(take.first);
  nlohmann::json j = {{"name", take.first}, {"token", all.token()},      {"fence", got.fence},
                      {"count", got.count}, {"ttl_ms", got.ttl.count()}, {"validity_ms", all.validity().count()}};
  if (all.held.size() > 1) {
    nlohmann::json locks = nlohmann::json::array();
    for (const auto& h : all.held) {
      locks.push_back({{"name", h.name}, {"fence", h.got.fence}, {"count", h.got.count}});
    }
    j["locks"] = locks;
  }
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
  return j;
}

}  // namespace

ExitCode run_acquire(const AcquireOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const Take take = parse_take(o.take, o.shared);
  Resolved r = resolve(g);

  SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  lock::Locker locker(r.endpoints, r.options, stop);
  // The lock is meant for the script that called us, so record that process.
  const long long holder_pid = getppid();
  auto taken = take_all(locker, take, make_owner(holder_pid, process_argv(holder_pid)), signals);
  if (auto* conflict = std::get_if<Conflict>(&taken)) {
    return conflict->status;
  }
  if (auto* stopped = std::get_if<Stopped>(&taken)) {
    return ExitCode::for_signal(stopped->signal);
  }
  const HeldAll& all = std::get<HeldAll>(taken);
  if (o.json) {
    return print_or_give_back(
        acquired_json(take, all, locker).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), locker, all);
  }
  return print_or_give_back(all.token(), locker, all);
}

}  // namespace redlock::cli
