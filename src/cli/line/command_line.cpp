// Reading argv with the command line cli/line/options.cpp defines: what CLI11
// cannot be left to do (exec's CMD, `redlock help`, silence and secrets in
// its error messages, the nearest word to a mistyped one), and its errors
// as redlock's own lines and exit 64. The words themselves (wrapping, the
// nearest word, the missing `--`) are cli/line/usage.cpp, which needs no CLI11.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <span>
#include <vector>

#include "cli/commands.hpp"
#include "cli/line/global_options.hpp"
#include "cli/line/option_values.hpp"
#include "cli/line/options.hpp"
#include "cli/line/usage.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

// The quick reading's command line, once read: kept, never taken apart.
// Its options are read, the process ends with the call, and tearing down
// what CLI11 built (an exec's thirty options) cost a fifth of building it.
// Held here, it stays reachable to the end: LeakSanitizer has nothing to
// report. Not in the anonymous namespace, where a variable that is only
// written may be optimised away, and with it what keeps the App reachable.
CLI::App* g_quick_app = nullptr;

namespace {

// Whether the option takes the next word as its value (a flag, such as
// -q, has a type but expects no value).
bool takes_value(const CLI::Option& opt) {
  return opt.get_type_size_min() > 0 && opt.get_expected_min() > 0;
}

// Where the subcommand is in argv: its first word that is neither an option
// nor the value of a global option ("-r URL exec" is exec), or argc.
int subcommand_at(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word == "--") {
      break;
    }
    if (word.size() > 1 && word[0] == '-') {
      const CLI::Option* opt = app.get_option_no_throw(std::string(word));
      if (opt && takes_value(*opt)) {
        ++i;  // its value, even if that looks like a subcommand
      }
      continue;
    }
    return i;
  }
  return argc;
}

// The subcommand argv names, or "".
std::string subcommand_in(CLI::App& app, int argc, char** argv) {
  const int at = subcommand_at(app, argc, argv);
  return at < argc ? std::string(argv[at]) : std::string();
}

// The subcommand called `name` if the command line gave it, or null (the
// quick reading defines only the one it gives: got_subcommand() would
// throw for the others).
const CLI::App* parsed_subcommand(const CLI::App& app, std::string_view name) {
  for (const CLI::App* sub : app.get_subcommands()) {
    if (sub->get_name() == name) {
      return sub;
    }
  }
  return nullptr;
}

// The subcommand of `app` called `name`, or null.
CLI::App* subcommand_named(CLI::App& app, const std::string& name) {
  const std::vector<CLI::App*> found = app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == name; });
  return found.empty() ? nullptr : found.front();
}

// The option `word` names in `sub` or, as a global option, in `app`.
const CLI::Option* option_named(CLI::App& app, CLI::App* sub, std::string_view word) {
  const std::string name(word.substr(0, std::min(word.find('='), word.size())));
  const CLI::Option* opt = sub != nullptr ? sub->get_option_no_throw(name) : nullptr;
  if (opt == nullptr && name.size() > 2 && name[1] != '-') {
    opt = sub != nullptr ? sub->get_option_no_throw(name.substr(0, 2)) : nullptr;  // -cSTRING
  }
  return opt != nullptr ? opt : app.get_option_no_throw(name);
}

// exec's command given without `--` (`exec job tar -czf x.tgz dir`): the
// command line to suggest, with `--` before the command, which begins at
// the first word after NAME that is neither one of redlock's options nor
// its value; the words are argv's, whole. "" when the subcommand is not
// exec, or nothing follows NAME.
std::string missing_dashes(CLI::App& app, int argc, char** argv) {
  const int exec_at = subcommand_at(app, argc, argv);
  if (exec_at >= argc || std::strcmp(argv[exec_at], "exec") != 0) {
    return "";
  }
  if (std::find_if(argv + exec_at, argv + argc, [](const char* w) { return std::strcmp(w, "--") == 0; }) !=
      argv + argc) {
    return "";
  }
  CLI::App* exec = subcommand_named(app, "exec");
  bool named = false;
  for (int i = exec_at + 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    const bool option = word.size() > 1 && word[0] == '-';
    const CLI::Option* opt = option ? option_named(app, exec, word) : nullptr;
    if (opt != nullptr) {
      const bool inline_value = word.find('=') != std::string_view::npos || (word[1] != '-' && word.size() > 2);
      if (takes_value(*opt) && !inline_value) {
        ++i;
      }
      continue;
    }
    if (named) {
      return with_dashes(std::vector<std::string>(argv + 1, argv + argc), static_cast<size_t>(i - 1));
    }
    named = !option;
  }
  return "";
}

// `redlock help [SUBCOMMAND]` is `redlock [SUBCOMMAND] --help` (as in git and
// cargo); returns the words to parse instead, or nothing. `help NOSUCH`
// becomes `NOSUCH`, which fails as the unknown subcommand it is.
std::optional<std::vector<char*>> help_words(CLI::App& app, int argc, char** argv) {
  static char help_flag[] = "--help";
  if (argc < 2 || std::strcmp(argv[1], "help") != 0 || argc > 3) {
    return std::nullopt;
  }
  std::vector<char*> words{argv[0]};
  if (argc == 3) {
    words.push_back(argv[2]);
  }
  const bool known =
      argc == 2 || !app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[2]; }).empty();
  if (known) {
    words.push_back(help_flag);
  }
  words.push_back(nullptr);
  return words;
}

// What the parser cannot tell us when it fails, read from argv first: -qq or
// --silent (so that even a usage error stays silent; -q alone never hides
// one), whether CMD came after "--", and where redlock's own words end.
struct Prescan {
  bool silent = false;
  int own_argc = 0;  // exec's CMD after "--" is cut off before CLI11 sees it
};

Prescan prescan(CLI::App& app, ExecOptions& exec, int argc, char** argv) {
  int quiet = 0;
  Prescan p;
  p.own_argc = argc;
  exec.dashes_hint = missing_dashes(app, argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      exec.saw_double_dash = true;
      // exec's CMD is everything after the first "--", byte for byte. CLI11
      // never sees it: it would apply its bracket syntax ("[1,2]" becomes
      // "1" "2", "[0-9]" becomes "0-9"). A "--" is never an option's value
      // here ("-c --" is -c without one). Other subcommands keep "--" for
      // what it usually means: the names after it are not options.
      if (subcommand_in(app, i, argv) == "exec") {
        p.own_argc = i;
        exec.command.assign(argv + i + 1, argv + argc);
      }
      break;
    }
    quiet += quiet_level(argv[i]);
  }
  p.silent = quiet >= 2;
  return p;
}

// 0 once standard output took what was printed, else 74 and a line that says so.
int stdout_status() {
  std::cout.flush();
  if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    write_line("could not write to standard output");
    return to_int(ExitStatus::k_output);
  }
  return 0;
}

// --help or --version: prints it; 0, or 74 if standard output failed.
int print_requested(CLI::App& app, const CLI::ParseError& e) {
  (void)app.exit(e);
  return stdout_status();
}

// Every name of every option of `app` (and, for a subcommand, the global
// ones), spelt as on a command line.
std::vector<std::string> option_names(CLI::App& app, CLI::App* sub) {
  std::vector<std::string> names;
  for (CLI::App* a : {sub, &app}) {
    if (a == nullptr) {
      continue;
    }
    for (const CLI::Option* opt : a->get_options()) {
      if (opt->get_group().empty()) {
        continue;  // hidden: an old spelling, never suggested
      }
      for (const auto& l : opt->get_lnames()) {
        names.push_back("--" + l);
      }
      for (const auto& s : opt->get_snames()) {
        names.push_back("-" + s);
      }
    }
  }
  return names;
}

// What `typed`, an option neither `sub` nor the global ones know, was
// probably meant as, in parentheses after a blank: flock's own spelling,
// else the nearest option; "" when nothing is near.
std::string meant_option(CLI::App& app, CLI::App* sub, const std::string& typed) {
  if (std::optional<std::string> flock = flock_word(typed, sub != nullptr ? sub->get_name() : "")) {
    return fmt::format(" ({})", *flock);
  }
  const std::optional<std::string> near = nearest_word(typed, option_names(app, sub));
  return near ? fmt::format(" (did you mean {}?)", *near) : "";
}

// The subcommands' names, comma-separated (not the older spellings).
std::string subcommand_list() {
  std::vector<std::string> names;
  for (const SubcommandDef& d : subcommand_defs()) {
    if (*d.group != '\0') {
      names.emplace_back(d.name);
    }
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// What CLI11 could not place, said in redlock's words: an option it does
// not know (with the nearest it does), a word too many, or CLI11's own
// line, lower-cased (as parse_error_text says it).
std::string cli11_error_text(CLI::App& app, CLI::App* sub, const CLI::ParseError& e, const Prescan& p, char** argv) {
  const std::string where = sub != nullptr ? " for " + sub->get_name() : "";
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    for (int i = 1; i < p.own_argc; ++i) {
      const std::string_view word = argv[i];
      if (word == "--") {
        break;
      }
      if (word.size() < 2 || word[0] != '-' || option_named(app, sub, word) != nullptr || quiet_level(word) > 0) {
        continue;
      }
      const std::string typed(word.substr(0, std::min(word.find('='), word.size())));
      return fmt::format("unknown option '{}'{}{}", typed, where, meant_option(app, sub, typed));
    }
    std::vector<std::string> extras = sub != nullptr ? sub->remaining() : app.remaining();
    if (extras.empty()) {
      extras = app.remaining();
    }
    if (!extras.empty()) {
      return fmt::format("unexpected argument '{}'{}", extras.front(), where);
    }
  }
  std::string what = e.what();
  std::replace(what.begin(), what.end(), '\n', ' ');
  // "--ttl: 1 required D missing": an option at the end of the line.
  const size_t colon = what.find(": ");
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && colon != std::string::npos &&
      what.compare(0, 1, "-") == 0) {
    return fmt::format("{} needs a value{}", what.substr(0, colon), where);
  }
  // CLI11 starts a sentence with a capital; a NAME stays as it is.
  if (what.size() > 1 && std::islower(static_cast<unsigned char>(what[1]))) {
    what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  }
  return what;
}

// The usage error's line, without "redlock: ": cli11_error_text's, and a
// missing subcommand with the list of them.
std::string parse_error_text(CLI::App& app, CLI::App* sub, const CLI::ParseError& e, const Prescan& p, char** argv) {
  std::string what = cli11_error_text(app, sub, e, p, argv);
  if (what == "A subcommand is required") {
    return fmt::format("a subcommand is required: {}", subcommand_list());
  }
  return what;
}

// Whether `word`, before the subcommand, is a global option: its long or
// short name (with a glued value), or a cluster of its short flags (-qv).
bool global_word(CLI::App& app, std::string_view word) {
  const std::string name(word.substr(0, std::min(word.find('='), word.size())));
  if (app.get_option_no_throw(name) != nullptr || quiet_level(word) > 0) {
    return true;
  }
  if (word.size() < 3 || word[1] == '-') {
    return false;
  }
  for (size_t i = 1; i < word.size(); ++i) {
    const CLI::Option* opt = app.get_option_no_throw(std::string{'-', word[i]});
    if (opt == nullptr) {
      return false;
    }
    if (takes_value(*opt)) {
      return true;  // the rest of the word is its value
    }
  }
  return true;
}

// An option before the subcommand that is not a global one: a subcommand's
// own given too early (`redlock --ttl 5s acquire x`) or a typo. Said as
// such, with the subcommand named later in argv (`sub` is set to it);
// otherwise its value would be taken for an unknown subcommand. Nothing
// when every word before the subcommand is global.
std::optional<std::string> early_option(CLI::App& app, const Prescan& p, char** argv, CLI::App*& sub) {
  const int at = subcommand_at(app, p.own_argc, argv);
  for (int i = 1; i < at; ++i) {
    const std::string_view word = argv[i];
    if (word.size() < 2 || word[0] != '-' || global_word(app, word)) {
      continue;
    }
    for (int j = i + 1; j < p.own_argc && sub == nullptr && std::strcmp(argv[j], "--") != 0; ++j) {
      sub = subcommand_named(app, argv[j]);
    }
    const std::string typed(word.substr(0, std::min(word.find('='), word.size())));
    if (sub != nullptr && sub->get_option_no_throw(typed) != nullptr) {
      return fmt::format("{} is an option of {}, not a global one: put it after {}", typed, sub->get_name(),
                         sub->get_name());
    }
    return fmt::format("unknown option '{}'{}{}", typed, sub != nullptr ? " for " + sub->get_name() : "",
                       meant_option(app, sub, typed));
  }
  return std::nullopt;
}

// A usage error: one line (unless --silent) without secrets that says what
// was wrong, what was probably meant, and where the help is; and 64.
int report_usage_error(CLI::App& app, const CLI::ParseError& e, const Prescan& p, const ExecOptions& exec, int argc,
                       char** argv) {
  const std::string named = subcommand_in(app, p.own_argc, argv);
  CLI::App* sub = named.empty() ? nullptr : subcommand_named(app, named);
  std::string what;
  CLI::App* named_later = nullptr;
  if (std::optional<std::string> early = early_option(app, p, argv, named_later)) {
    what = std::move(*early);
    sub = named_later;
  } else if (!named.empty() && sub == nullptr) {
    // A typo may be of an older spelling; the list names only today's.
    std::vector<std::string> names;
    std::vector<std::string> current;
    for (const auto& s : subcommand_defs()) {
      names.emplace_back(s.name);
      if (*s.group != '\0') {
        current.emplace_back(s.name);
      }
    }
    std::string listed;
    for (size_t i = 0; i < current.size(); ++i) {
      listed += (i == 0 ? "" : i + 1 == current.size() ? " or " : ", ") + current[i];
    }
    const std::optional<std::string> near = nearest_word(named, names);
    what = near ? fmt::format("unknown subcommand '{}' (did you mean {}?)", named, *near)
                : fmt::format("unknown subcommand '{}' (use {})", named, listed);
  } else if (!exec.dashes_hint.empty()) {
    what = "put -- before the command: " + exec.dashes_hint;
  } else {
    what = parse_error_text(app, sub, e, p, argv);
  }
  what = escape_for_terminal(without_secrets(what, std::vector<std::string>(argv + 1, argv + argc)));
  if (!p.silent) {
    write_exit_line(fmt::format("{}; see redlock {}--help", what, sub != nullptr ? sub->get_name() + " " : ""),
                    to_int(ExitStatus::k_usage));
  }
  return to_int(ExitStatus::k_usage);
}

// --timeout given before the subcommand (or after one that has no
// --timeout of its own): on acquire and exec it is flock's wait, as the
// subcommand's own --timeout is; anywhere else it was the round-trip
// timeout before 0.2, and is refused with its new name rather than read
// in a new sense.
void apply_legacy_timeout(CLI::App& app, AllOptions& o) {
  if (o.global.legacy_timeout.empty()) {
    return;
  }
  for (auto [name, take] : {std::pair{"acquire", &o.acquire.take}, std::pair{"exec", &o.exec.take}}) {
    if (const CLI::App* sub = parsed_subcommand(app, name)) {
      if (sub->count("--wait") == 0) {
        take->wait = parse_wait(o.global.legacy_timeout, "--timeout");
      }
      return;
    }
  }
  throw UsageError(
      "--timeout is now --redis-timeout (the round trip to Redis); on acquire and exec, --timeout is how long "
      "to wait for the lock, as in flock(1)");
}

// CLI11 reads redlock's own words (exec's CMD, cut off by prescan(), is
// put back after). Throws what CLI11 throws, and a UsageError for a value
// that does not parse.
void parse_own_words(CLI::App& app, AllOptions& o, const Prescan& p, int argc, char** argv) {
  std::vector<std::string> after_dashes = std::move(o.exec.command);
  o.exec.command.clear();
  app.parse(p.own_argc, argv);
  if (p.own_argc < argc) {
    if (!o.exec.command.empty()) {
      // exec a b -- cmd: CLI11 took b for CMD.
      throw CLI::ParseError(
          fmt::format("unexpected '{}' before --: exec takes one NAME, then -- CMD [ARG...]", o.exec.command.front()),
          CLI::ExitCodes::ExtrasError);
    }
    o.exec.command = std::move(after_dashes);
  }
  apply_legacy_timeout(app, o);
}

// Parses redlock's own words; the exit status when that ends the call
// (--help, --version, a usage error).
std::optional<int> parse(CLI::App& app, AllOptions& o, const Prescan& p, int argc, char** argv) {
  try {
    parse_own_words(app, o, p, argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code() == 0 ? print_requested(app, e) : report_usage_error(app, e, p, o.exec, argc, argv);
  } catch (const UsageError& e) {
    // A value that does not parse (--ttl, --limit, --on-lost...): its own words.
    if (!p.silent) {
      write_exit_line(e.what(), to_int(ExitStatus::k_usage));
    }
    return to_int(ExitStatus::k_usage);
  }
  return std::nullopt;
}

// The subcommand the parsed command line names (none if none was given).
std::optional<Subcommand> subcommand_of(const CLI::App& app) {
  for (const auto& s : subcommand_defs()) {
    if (parsed_subcommand(app, s.name) != nullptr) {
      return s.id;
    }
  }
  return std::nullopt;
}

// The common case, at a fraction of the cost: argv names a subcommand, and
// only that one is built and parsed, printing nothing. The others are not
// built at all: with require_subcommand(1), CLI11 takes any word after the
// subcommand as the subcommand's own, as the whole command line does (a
// bare App each, with its help flag, was a sixth of an acquire's CPU). The
// global options are taken out of argv first, without CLI11
// (cli/line/global_options.hpp). Anything else (`help`, --help, --version,
// any error, a spelling only CLI11 reads) returns nothing, and the whole
// command line is then built and read from the start: what it prints is
// always the whole command line's.
std::optional<CommandLine> read_quickly(AllOptions& o, int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "help") == 0) {
    return std::nullopt;
  }
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string_view word = argv[i];
    if (word == "--version" || word == "--help" || word == "-h") {
      return std::nullopt;  // printed from the whole command line
    }
  }
  auto app = top_level(o, false);
  const SubcommandDef* def = nullptr;
  CLI::App* sub = nullptr;
  const SubcommandWords words{
      .found =
          [&](std::string_view name) {
            for (const auto& s : subcommand_defs()) {
              def = name == s.name ? &s : def;
            }
            sub = def != nullptr ? def->add(*app, o) : nullptr;
            return sub != nullptr;
          },
      .option =
          [&](std::string_view name) {
            const CLI::Option* opt = sub->get_option_no_throw(std::string(name));
            return opt == nullptr ? OwnOption::k_none : takes_value(*opt) ? OwnOption::k_value : OwnOption::k_flag;
          },
  };
  std::vector<std::string_view> read_words(argv + 1, argv + argc);
  read_words.erase(std::find(read_words.begin(), read_words.end(), "--"), read_words.end());
  const QuickWords only_these(read_words);
  std::optional<std::vector<char*>> own = take_global_options(o.global, argc, argv, words);
  if (!own) {
    return std::nullopt;
  }
  own->push_back(nullptr);
  const int own_argc = static_cast<int>(own->size()) - 1;
  const Prescan p = prescan(*app, o.exec, own_argc, own->data());
  if (!o.exec.dashes_hint.empty()) {
    return std::nullopt;  // exec's command without "--": the hint quotes argv whole
  }
  try {
    parse_own_words(*app, o, p, own_argc, own->data());
  } catch (const std::exception&) {
    return std::nullopt;  // said by the whole command line
  }
  if (app->get_subcommands().size() != 1 || parsed_subcommand(*app, def->name) == nullptr) {
    return std::nullopt;
  }
  const CommandLine line{std::nullopt, subcommand_of(*app)};
  delete g_quick_app;           // (a process reads its command line once; the tests, many)
  g_quick_app = app.release();  // never taken apart (see g_quick_app)
  return line;
}

}  // namespace

CommandLine read_command_line(AllOptions& o, int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    // What CLI11's version flag prints, without building the command line.
    std::cout << version_text() << '\n';
    return {stdout_status(), std::nullopt};
  }
  if (std::optional<CommandLine> quick = read_quickly(o, argc, argv)) {
    return *quick;
  }
  o = AllOptions{};  // whatever the quick reading filled in
  return read_whole_command_line(o, argc, argv);
}

CommandLine read_whole_command_line(AllOptions& o, int argc, char** argv) {
  auto app = build_app(o);
  std::optional<std::vector<char*>> help = help_words(*app, argc, argv);
  if (help) {
    argc = static_cast<int>(help->size()) - 1;
    argv = help->data();
  }
  const Prescan p = prescan(*app, o.exec, argc, argv);
  if (const std::optional<int> ended = parse(*app, o, p, argc, argv)) {
    return {ended, std::nullopt};
  }
  return {std::nullopt, subcommand_of(*app)};
}

}  // namespace redlock::cli
