#pragma once

// The options every subcommand accepts (--redis, --quiet, ...): one table,
// from which cli/line/options.cpp builds CLI11's options, and which the
// quick reading of argv (cli/line/command_line.cpp) reads without CLI11.
// Built with CLI11, the seventeen of them were a quarter of an acquire's
// instructions: CLI11 checks each new option against every one before it.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"

namespace redlock::cli {

struct GlobalOptionDef {
  const char* names;      // as CLI11 takes them: "-r,--redis"
  const char* type_name;  // its value's name in --help; nullptr for a flag
  const char* help;       // "" hides it from --help
  bool repeats;           // every occurrence counts (-r, -q), not only the last
  // One occurrence (a flag's value is ""): throws a UsageError for a value
  // that does not parse.
  void (*apply)(GlobalOptions&, const std::string& value);
};

// Every global option, in the order --help lists them.
[[nodiscard]] std::span<const GlobalOptionDef> global_option_defs();

// What a word that starts with '-' is to the subcommand being read.
enum class OwnOption { k_none, k_flag, k_value };

// The subcommand as the quick reading meets it: `found` is called with its
// name (its first word that is neither an option nor an option's value)
// and says whether it is one the reading can go on with; `option` then
// says what an option's name ("--ttl", "-w") is to it.
struct SubcommandWords {
  std::function<bool(std::string_view name)> found;
  std::function<OwnOption(std::string_view name)> option;
};

// argv with its global options taken out and applied to `g`: argv[0] and
// every other word, in order, up to `argc`. A subcommand's own option of
// the same name wins after the subcommand's name, as in CLI11 with
// fallthrough. Nothing (and `g` to be thrown away) for what only the whole
// command line reads the same way: a word before the subcommand that is no
// global option, a global option joined to others (-qv) or to its value
// (-rURL), a flag given a value, a missing value, a value that does not
// parse, a subcommand `sub.found` turns down. Words from "--" on are kept
// as they are.
[[nodiscard]] std::optional<std::vector<char*>> take_global_options(GlobalOptions& g, int argc, char** argv,
                                                                    const SubcommandWords& sub);

}  // namespace redlock::cli
