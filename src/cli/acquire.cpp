#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "cli/take/take.hpp"
#include "cli/take/take_all.hpp"
#include "exec/keeper.hpp"
#include "exec/lease.hpp"
#include "exec/renewer.hpp"
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

// --while-pid PID: a process that is there to be watched (64 otherwise,
// before any traffic).
void check_watched(long long pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
    throw UsageError(fmt::format("--while-pid {}: no such process", pid));
  }
}

// The keeper's life (exec/keeper.hpp), in its own process: renews `all`
// until `watched` exits (then releases it), the lock is lost (then tells
// `watched` and sends it SIGTERM), release --token takes over (SIGUSR1), or
// a stop signal comes (then releases it).
int keep_for(const Resolved& r, const HeldAll& all, Millis ttl, pid_t watched) noexcept {
  try {
    SignalFd signals({SIGUSR1, SIGTERM, SIGINT, SIGHUP});
    lock::Locker locker(r.endpoints, r.options, signals.cancel());
    exec::LockerLease lease(locker, all.names(), all.token(), ttl);
    exec::Renewer renewer(lease, all.sent(), all.valid_until());
    renewer.start();
    const exec::KeptEnd end = exec::keep_while(watched, renewer, signals);
    renewer.stop();
    if (end == exec::KeptEnd::k_lost) {
      std::string why = renewer.lost_reason();
      if (why.empty()) {
        why = fmt::format("{} could not be renewed in time", spoken_names(all.names()));
      }
      exec::tell_lost(watched,
                      fmt::format("redlock: {}; the lock kept for pid {} is lost: sent it SIGTERM\n", why, watched));
    } else if (end != exec::KeptEnd::k_handed_over) {
      give_back(locker, all.held, false);
    }
    exec::forget_keeper(all.token(), getpid());
    return 0;
  } catch (...) {
    return 1;
  }
}

// acquire --while-pid: the keeper started for `watched`, and the token
// printed; if it cannot be (the keeper not noted for release, the token
// not written), the keeper releases the lock.
ExitCode keep_and_print(const Resolved& r, const HeldAll& all, const Take& take, pid_t watched,
                        const std::string& line) {
  const pid_t keeper = exec::start_keeper([&] { return keep_for(r, all, take.ttl, watched); });
  try {
    exec::note_keeper(all.token(), keeper);
  } catch (const Error&) {
    (void)kill(keeper, SIGTERM);
    throw;
  }
  if (write_stdout(line + "\n")) {
    return ExitStatus::k_ok;
  }
  (void)kill(keeper, SIGTERM);
  log_warning("could not write the token to standard output; {} {} released", spoken_names(all.names()),
              all.held.size() == 1 ? "was" : "were");
  return ExitStatus::k_output;
}

// Who holds the lock, as status shows it: the script that called us, or
// with --while-pid the process it is kept for.
lock::Owner holder(const AcquireOptions& o) {
  if (!o.while_pid) {
    const long long pid = getppid();
    return make_owner(pid, process_argv(pid));
  }
  std::vector<std::string> argv = {"kept", "for", fmt::format("{}:", *o.while_pid)};
  for (std::string& word : process_argv(*o.while_pid)) {
    argv.push_back(std::move(word));
  }
  return make_owner(*o.while_pid, argv);
}

}  // namespace

ExitCode run_acquire(const AcquireOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const Take take = parse_take(o.take, o.shared);
  if (o.while_pid) {
    check_watched(*o.while_pid);
  }
  Resolved r = resolve(g);

  SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  lock::Locker locker(r.endpoints, r.options, stop);
  auto taken = take_all(locker, take, holder(o), signals);
  if (auto* conflict = std::get_if<Conflict>(&taken)) {
    return conflict->status;
  }
  if (auto* stopped = std::get_if<Stopped>(&taken)) {
    return ExitCode::for_signal(stopped->signal);
  }
  const HeldAll& all = std::get<HeldAll>(taken);
  const std::string line =
      o.json ? acquired_json(take, all, locker).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
             : all.token();
  if (o.while_pid) {
    try {
      return keep_and_print(r, all, take, static_cast<pid_t>(*o.while_pid), line);
    } catch (const Error&) {
      give_back(locker, all.held, false);
      throw;
    }
  }
  return print_or_give_back(line, locker, all);
}

}  // namespace redlock::cli
