#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "util/exit_status.hpp"

namespace redlock::cli {

CLI::App* add_exec(CLI::App& app, ExecOptions& o) {
  auto* sub = app.add_subcommand("exec", "run a command while holding the lock");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  sub->add_option("CMD", o.command, "the command and its arguments, after --");
  return sub;
}

int run_exec(const ExecOptions&, const GlobalOptions&) { throw UsageError("exec: not built yet"); }

}  // namespace redlock::cli
