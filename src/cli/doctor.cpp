// doctor: audits the deployment before it is trusted (doctor/audit.hpp asks
// the servers, doctor/checks.hpp judges, cli/show/doctor_report.hpp writes
// the report): a line per check, ok, warn or fail, with what to do. A
// server that cannot be reached or refuses is a failed check, not an
// error: the report covers every server.

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/setup/servers.hpp"
#include "cli/show/doctor_report.hpp"
#include "doctor/audit.hpp"
#include "doctor/checks.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/output.hpp"
#include "util/text.hpp"

namespace redlock::cli {

ExitCode run_doctor(const DoctorOptions& o, const GlobalOptions& g, const Cancel& stop) {
  using doctor::Level;
  Resolved r = resolve(g);
  const auto facts = doctor::audit(r.endpoints, r.options, stop);
  const doctor::Expectations e{o.ttl, r.options.timeouts.command, r.options.min_replicas};
  const auto findings = doctor::diagnose(facts, e);
  // A terminal gets the report wrapped to its width; a pipe a line a check.
  if (!write_stdout(o.json ? doctor_json(findings) : doctor_text(findings, stdout_screen().columns))) {
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
