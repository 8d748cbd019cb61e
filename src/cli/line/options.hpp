#pragma once

// The command line's definition (cli/line/options.cpp) as reading argv
// (cli/line/command_line.cpp) and the table of subcommands (cli/app.cpp)
// need it. Only the two files of cli/line/ named here include CLI11.

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"

namespace CLI {
class App;
}

namespace redlock::cli {

// redlock's own options, help layout and footer, without the subcommands;
// without the global options too for the quick reading, which takes them
// out of argv itself (cli/line/global_options.hpp).
[[nodiscard]] std::unique_ptr<CLI::App> top_level(AllOptions& o, bool with_global_options = true);

// While one lives, a subcommand built for the quick reading gets only the
// options with a parsed value that `words` (argv's, before "--") could
// name: CLI11 spends thousands of instructions on each option it builds,
// and exec has thirty. The rest are never needed: an option argv names
// is always built (cli/line/options.cpp, named_in()).
class QuickWords {
 public:
  explicit QuickWords(const std::vector<std::string_view>& words);
  ~QuickWords();
  QuickWords(const QuickWords&) = delete;
  QuickWords& operator=(const QuickWords&) = delete;
};

// A subcommand: its name, how to add it (with its options) to the app, and
// how to run it with the options parsed.
struct SubcommandDef {
  const char* name;
  const char* group;  // what a person does with it: redlock --help lists the subcommands by it
  Subcommand id;
  CLI::App* (*add)(CLI::App&, AllOptions&);
  ExitCode (*run)(const AllOptions&, const Cancel&);
};

// Every subcommand, in the order --help lists them (by group, exec first): the one table of them
// (cli/app.cpp).
[[nodiscard]] std::span<const SubcommandDef> subcommand_defs();

// Each subcommand's options added to `app` (cli/line/options.cpp).
CLI::App* add_acquire(CLI::App& app, AllOptions& o);
CLI::App* add_release(CLI::App& app, AllOptions& o);
CLI::App* add_renew(CLI::App& app, AllOptions& o);
CLI::App* add_status(CLI::App& app, AllOptions& o);
CLI::App* add_break(CLI::App& app, AllOptions& o);
CLI::App* add_exec(CLI::App& app, AllOptions& o);
CLI::App* add_history(CLI::App& app, AllOptions& o);
CLI::App* add_overdue(CLI::App& app, AllOptions& o);
CLI::App* add_revoke(CLI::App& app, AllOptions& o);
CLI::App* add_suspend(CLI::App& app, AllOptions& o);
CLI::App* add_resume(CLI::App& app, AllOptions& o);
CLI::App* add_doctor(CLI::App& app, AllOptions& o);
CLI::App* add_events(CLI::App& app, AllOptions& o);

}  // namespace redlock::cli
