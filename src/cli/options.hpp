#pragma once

// The command line's definition (cli/options.cpp) as reading argv
// (cli/command_line.cpp) needs it. Only these two files include CLI11.

#include <memory>
#include <span>

#include "cli/commands.hpp"

namespace CLI {
class App;
}

namespace redlock::cli {

// redlock's own options, help layout and footer, without the subcommands.
[[nodiscard]] std::unique_ptr<CLI::App> top_level(AllOptions& o);

// A subcommand: its name, and how to add it (with its options) to the app.
struct SubcommandDef {
  const char* name;
  Subcommand id;
  CLI::App* (*add)(CLI::App&, AllOptions&);
};

// Every subcommand, in the order --help lists them.
[[nodiscard]] std::span<const SubcommandDef> subcommand_defs();

}  // namespace redlock::cli
