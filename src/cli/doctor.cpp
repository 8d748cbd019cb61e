// doctor: audits the deployment before it is trusted (doctor/audit.hpp asks
// the servers, doctor/checks.hpp judges): one line per check, ok, warn or
// fail, with what to do. A server that cannot be reached or refuses is a
// failed check, not an error: the report covers every server.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "doctor/audit.hpp"
#include "doctor/checks.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

using doctor::Finding;
using doctor::Level;

// One line per finding: its level and check in columns, then the server,
// what was found and what to do.
std::string doctor_text(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    std::string line = fmt::format("{:<5} {:<13} ", doctor::level_name(f.level), f.check);
    if (!f.server.empty()) {
      line += f.server + ": ";
    }
    line += f.detail;
    if (!f.advice.empty()) {
      line += "; " + f.advice;
    }
    out += escape_for_terminal(line) + "\n";
  }
  return out;
}

// doctor --json: an array of {check, level, server, detail, advice}
// (documented in redlock(1), JSON OUTPUT).
std::string doctor_json(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    out.push_back({{"check", f.check},
                   {"level", std::string(doctor::level_name(f.level))},
                   {"server", f.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.server)},
                   {"detail", f.detail},
                   {"advice", f.advice.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.advice)}});
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

ExitCode run_doctor(const DoctorOptions& o, const GlobalOptions& g, const Cancel& stop) {
  Resolved r = resolve(g);
  const auto facts = doctor::audit(r.endpoints, r.options, stop);
  const doctor::Expectations e{o.ttl, r.options.timeouts.command, r.options.min_replicas};
  const auto findings = doctor::diagnose(facts, e);
  if (!write_stdout(o.json ? doctor_json(findings) : doctor_text(findings))) {
    log_warning("could not write the report to standard output");
    return ExitStatus::k_output;
  }
  std::vector<std::string> failed;
  for (const auto& f : findings) {
    if (f.level == Level::k_fail && (failed.empty() || failed.back() != f.check)) {
      failed.push_back(f.check);
    }
  }
  if (failed.empty()) {
    return ExitStatus::k_ok;
  }
  log_warning("{} check{} failed ({}): see the report for what to do", failed.size(), failed.size() == 1 ? "" : "s",
              spoken_list(failed));
  return ExitStatus::k_no;
}

}  // namespace redlock::cli
