#include <fmt/format.h>
#include <unistd.h>

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

namespace {

using BreakVerdict = lock::BreakDecision::Verdict;

const char* verdict_name(BreakVerdict v) {
  switch (v) {
    case BreakVerdict::k_broken:
      return "broken";
    case BreakVerdict::k_foreign:
      return "foreign";
    default:
      return "free";
  }
}

// "web-3 pid 4411 (./deploy.sh), held for 12.5s"; and when the holder is
// the exec that runs this very command, says so: break is allowed there
// (an operator's tool), but it takes the lock from under the command.
std::string describe(const std::string& name, const lock::HolderView& h, long long now_ms) {
  std::string who = fmt::format("{} pid {}", escape_for_terminal(h.host), h.pid);
  if (!h.cmd.empty()) {
    who += fmt::format(" ({})", escape_command(h.cmd));
  }
  if (h.since_ms > 0) {
    who += fmt::format(", held for {}", format_duration(Millis(std::max(0LL, now_ms - h.since_ms))));
  }
  if (const auto exec = exec_holding(name, h.token)) {
    who += fmt::format(
        ", which is the exec that runs this command, pid {} (it finds its lock lost at its next renewal)", exec->pid);
  }
  return who;
}

std::string line_for(const std::string& name, const lock::BreakDecision& d) {
  std::string what = escape_for_terminal(name);
  if (d.mode == lock::Claim::Mode::k_semaphore) {
    what += fmt::format(" (semaphore of {})", d.limit);
  } else if (d.mode == lock::Claim::Mode::k_shared) {
    what += " (shared)";
  }
  std::string from;
  for (const auto& h : d.holders) {
    from += (from.empty() ? "" : "; ") + describe(name, h, d.now_ms);
  }
  return fmt::format("broke {}: took it from {}", what, from.empty() ? "an unknown holder" : from);
}

nlohmann::json to_json(const std::string& name, const lock::Broken& b, const std::vector<std::string>& urls) {
  const auto& d = b.decision;
  nlohmann::json j = {{"name", name}, {"state", verdict_name(d.verdict)}};
  if (d.verdict == BreakVerdict::k_broken) {
    j["mode"] = lock::mode_name(d.mode);
    if (d.mode == lock::Claim::Mode::k_semaphore) {
      j["limit"] = d.limit;
    }
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& h : d.holders) {
      holders.push_back({{"host", h.host},
                         {"pid", h.pid},
                         {"cmd", h.cmd},
                         {"since_ms", h.since_ms},
                         {"age_ms", std::max(0LL, d.now_ms - h.since_ms)},
                         {"fence", h.fence > 0 ? nlohmann::json(h.fence) : nlohmann::json(nullptr)},
                         {"count", h.count}});
    }
    j["holders"] = std::move(holders);
  } else if (d.verdict == BreakVerdict::k_foreign) {
    j["type"] = d.foreign_type;
  }
  nlohmann::json servers = nlohmann::json::array();
  for (size_t i = 0; i < b.servers.size() && i < urls.size(); ++i) {
    servers.push_back({{"url", urls[i]}, {"state", b.servers[i]}});
  }
  j["servers"] = std::move(servers);
  return j;
}

// The one line for the names that were not broken: keys redlock did not
// write, then locks that were free.
std::string not_broken_message(const std::vector<std::pair<std::string, std::string>>& foreign,
                               const std::vector<std::string>& free) {
  std::string free_part;
  if (!free.empty()) {
    free_part =
        spoken_list(free) + (free.size() == 1 ? " is not held: nothing to break" : " are not held: nothing to break");
  }
  if (foreign.empty()) {
    return free_part;
  }
  const std::string foreign_part = lock::foreign_keys_message(foreign);
  return free.empty() ? foreign_part : foreign_part + "; and " + free_part;
}

}  // namespace

ExitCode run_break(const BreakOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const std::vector<std::string> names = named_locks(o.names);
  if (o.grace) {
    // A graceful break is what revoke did, line for line and status for
    // status: one verb for freeing a lock, with or without asking first.
    if (names.size() != 1) {
      throw UsageError("break --grace frees one lock at a time: give it one NAME");
    }
    if (o.json) {
      throw UsageError("--json does not go with --grace: a graceful break says how it ended in one line");
    }
    return run_revoke(RevokeOptions{names.front(), o.grace}, g, stop);
  }
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options, stop);
  const std::vector<std::string> urls = locker.endpoint_names();
  std::string output;
  nlohmann::json all = nlohmann::json::array();
  std::vector<std::pair<std::string, std::string>> foreign;
  std::vector<std::string> free;
  const lock::Owner by = make_owner(getpid(), {});
  for (const auto& name : names) {
    const lock::Broken b = locker.break_lock(name, by);
    const auto& d = b.decision;
    switch (d.verdict) {
      case BreakVerdict::k_broken:
        output += line_for(name, d) + "\n";
        break;
      case BreakVerdict::k_foreign:
        foreign.emplace_back(name, d.foreign_type);
        break;
      default:
        free.push_back(escape_for_terminal(name));
        break;
    }
    all.push_back(to_json(name, b, urls));
  }
  const ExitCode status = !foreign.empty() ? ExitStatus::k_protocol
                          : !free.empty()  ? ExitStatus::k_no
                                           : ExitStatus::k_ok;
  if (!status.ok()) {
    log_warning("{}", not_broken_message(foreign, free));
  }
  if (o.json) {
    output = all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  if (!output.empty() && !write_stdout(output)) {
    log_warning("could not write to standard output; the locks were broken as asked");
    return ExitStatus::k_output;
  }
  return status;
}

}  // namespace redlock::cli
