#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "util/exit_status.hpp"

namespace redlock::cli {

CLI::App* add_exec(CLI::App& app, ExecOptions& o) {
  auto* sub = app.add_subcommand("exec", "run a command while holding the lock, renewing it in the background");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  sub->add_option("CMD", o.command, "the command and its arguments, after --");
  sub->add_option("--ttl", o.ttl, "the lock's time to live, renewed every ttl/3 (default 30s)")->type_name("D");
  sub->add_option("--wait", o.wait, "how long to wait for a held lock: 0 (one try, the default), 30s, inf")
      ->type_name("D");
  sub->add_option("--token", o.token, "re-enter the lock if this token holds it (default: $REDLOCK_TOKEN)")
      ->type_name("T");
  sub->add_option("--on-lost", o.on_lost, "when the lock is lost: term (SIGTERM, then SIGKILL), kill, ignore")
      ->type_name("POLICY");
  sub->add_option("--kill-after", o.kill_after, "SIGKILL this long after SIGTERM (default 5s, at most ttl/3)")
      ->type_name("D");
  sub->add_option("--conflict-exit-code", o.conflict_exit_code, "exit status when the lock is busy (default 75)")
      ->type_name("N");
  sub->add_option("-c", o.shell_command, "run STRING with $SHELL -c instead of CMD")->type_name("STRING");
  sub->footer("Example:\n  redlock exec --ttl 2m --wait 30s deploy -- ./deploy.sh \"$ENV\"");
  return sub;
}

int run_exec(const ExecOptions&, const GlobalOptions&) { throw UsageError("exec: not built yet"); }

}  // namespace redlock::cli
