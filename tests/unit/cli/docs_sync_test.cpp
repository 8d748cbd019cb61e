// The man pages and the three shell completions must know every option the
// program accepts. These tests read the command-line definition itself
// (build_app) so they fail the moment an option is added without its docs.
// The manual is redlock(1), the overview, and a page per command or group
// of commands (redlock-exec(1), redlock-acquire(1) for acquire, renew and
// release, ...), each naming its commands in its NAME line; they also check
// that redlock(1) lists every page and stays short, and that every page
// fits 80 columns as man(1) shows it.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

#ifndef REDLOCK_SOURCE_DIR
#error "tests/CMakeLists.txt defines REDLOCK_SOURCE_DIR for this test"
#endif

namespace {

std::string read_source_file(const std::string& relative) {
  const std::string path = std::string(REDLOCK_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A man page (`page` is its file name in man/, such as "redlock-exec.1") as
// plain roff: the escaped hyphen-minus `\-` becomes `-`, and `\%` (no
// hyphenation here) goes.
std::string man_page_text(const std::string& page = "redlock.1") {
  std::string roff = read_source_file("man/" + page);
  std::string out;
  for (size_t i = 0; i < roff.size(); ++i) {
    if (roff[i] == '\\' && i + 1 < roff.size() && roff[i + 1] == '-') {
      out += '-';
      ++i;
    } else if (roff[i] == '\\' && i + 1 < roff.size() && roff[i + 1] == '%') {
      ++i;
    } else {
      out += roff[i];
    }
  }
  return out;
}

// The file names of every page in man/, sorted: "redlock-acquire.1", ...
std::vector<std::string> man_pages() {
  std::vector<std::string> pages;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(REDLOCK_SOURCE_DIR) + "/man")) {
    if (std::regex_match(entry.path().filename().string(), std::regex(R"([a-z.-]+\.[1-8])"))) {
      pages.push_back(entry.path().filename().string());
    }
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

// "redlock-exec.1" as a reference reads "redlock-exec (1)" in roff
// (`.BR redlock\-exec (1)`).
std::string reference(const std::string& page) {
  const size_t dot = page.rfind('.');
  return page.substr(0, dot) + " (" + page.substr(dot + 1) + ")";
}

// The text from the line that starts with `start` up to (not including) the
// next line that starts with `end_prefix`, or to the end; empty if no line
// starts with `start`. An `end_prefix` of "\n" ends at the next empty line.
std::string section(const std::string& text, const std::string& start, const std::string& end_prefix) {
  size_t from = 0;
  if (text.compare(0, start.size(), start) != 0) {
    from = text.find("\n" + start);
    if (from == std::string::npos) {
      return {};
    }
    ++from;
  }
  const size_t to = text.find("\n" + end_prefix, from + start.size());
  return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// The one line that starts with `start`, empty if there is none.
std::string line_starting(const std::string& text, const std::string& start) {
  std::string s = section(text, start, "");
  return s.substr(0, s.find('\n'));
}

// `word` occurs in `text` as a whole option word (not as part of a longer
// option such as --timeout inside --connect-timeout).
bool has_word(const std::string& text, const std::string& word) {
  const std::regex re("(^|[^A-Za-z0-9_-])" + std::regex_replace(word, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                      "($|[^A-Za-z0-9_-])");
  return std::regex_search(text, re);
}

// The tagged-paragraph headings (the line after each `.TP`) of a man page
// section: where an option is documented, as opposed to merely mentioned.
std::string man_item_headings(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  bool after_tp = false;
  while (std::getline(in, line)) {
    if (after_tp) {
      out += line + "\n";
    }
    after_tp = line == ".TP";
  }
  return out;
}

// The commands a page covers, from its NAME line: "redlock-acquire,
// redlock-renew, redlock-release - take, ..." covers acquire, renew and
// release; redlock(1) and the pages of sections 5 and 7 cover none.
std::vector<std::string> commands_of_page(const std::string& page) {
  if (page.size() < 2 || page.compare(page.size() - 2, 2, ".1") != 0) {
    return {};
  }
  std::string name = section(man_page_text(page), ".SH NAME", ".SH ");
  name = name.substr(name.find('\n') + 1);
  std::replace(name.begin(), name.end(), '\n', ' ');
  name = name.substr(0, name.find(" - "));
  std::vector<std::string> commands;
  const std::regex word(R"((^|[ ,])redlock-([a-z]+))");
  for (auto it = std::sregex_iterator(name.begin(), name.end(), word); it != std::sregex_iterator(); ++it) {
    commands.push_back((*it)[2]);
  }
  return commands;
}

// The page whose NAME line names `command`, or "" when none does.
std::string page_of(const std::string& command) {
  for (const auto& page : man_pages()) {
    const auto commands = commands_of_page(page);
    if (std::find(commands.begin(), commands.end(), command) != commands.end()) {
      return page;
    }
  }
  return {};
}

// The rows of the first table (.TS to .TE) in `text`, each split into its
// cells at `@` (the pages' tab(@)); the format lines are left out.
std::vector<std::vector<std::string>> table_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(section(text, ".TS", ".TE"));
  std::string line;
  bool format_done = false;
  std::getline(in, line);  // .TS
  while (std::getline(in, line)) {
    if (!format_done) {
      format_done = !line.empty() && line.back() == '.';
      continue;
    }
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, '@');) {
      cells.push_back(cell);
    }
    rows.push_back(cells);
  }
  return rows;
}

// A page as `MANWIDTH=80 man -l` shows it, one string a line: man-db runs
// groff with tbl and a line length of 78 ens at that width, and squeezes
// runs of empty lines into one. nullopt when groff cannot be run here
// (scripts/setup installs groff-base).
std::optional<std::vector<std::string>> rendered(const std::string& page) {
  const std::string command = "groff -t -man -Tutf8 -rLL=78n -rLT=78n -P-cbou '" + std::string(REDLOCK_SOURCE_DIR) +
                              "/man/" + page + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return std::nullopt;
  }
  std::string text;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    text.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!(line.empty() && !lines.empty() && lines.back().empty())) {
      lines.push_back(line);
    }
  }
  return lines;
}

// The characters of a line of UTF-8 (what a terminal's columns hold).
size_t characters(const std::string& line) {
  return static_cast<size_t>(
      std::count_if(line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// `word` appears in a zsh _arguments spec as an option being specified
// ('--ttl=[…]', '-c+[…]', {-q,--quiet}'[…]', '(- *)--version[…]'), not just
// mentioned in a description or an exclusion list.
bool zsh_specifies(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("(^|['{,)])" + word + R"([=+]?[\[,}])"));
}

// An older spelling of another subcommand's option (revoke is break
// --grace, overdue history --max-age): out of redlock --help's groups, so
// documented and completed once typed, but never offered.
bool older_spelling(const CLI::App& sub) {
  return sub.get_group().empty();
}

struct Cli {
  redlock::cli::AllOptions options;
  std::unique_ptr<CLI::App> app = redlock::cli::build_app(options);

  std::vector<CLI::App*> subcommands() const {
    return app->get_subcommands([](CLI::App*) { return true; });
  }
};

// Every non-positional option of `app`, as the words a user types:
// "--ttl", "-c", "-r", "--redis".
std::vector<std::string> option_words(const CLI::App& app) {
  std::vector<std::string> words;
  for (const CLI::Option* opt : app.get_options([](const CLI::Option* o) { return o->nonpositional(); })) {
    for (const auto& l : opt->get_lnames()) {
      words.push_back("--" + l);
    }
    for (const auto& s : opt->get_snames()) {
      words.push_back("-" + s);
    }
  }
  return words;
}

// The options of `app` that a completion offers: all but the hidden ones
// (the global --timeout, an old spelling kept only to say its new name).
std::vector<std::string> offered_option_words(const CLI::App& app) {
  std::vector<std::string> words;
  for (const CLI::Option* opt :
       app.get_options([](const CLI::Option* o) { return o->nonpositional() && !o->get_group().empty(); })) {
    for (const auto& l : opt->get_lnames()) {
      words.push_back("--" + l);
    }
    for (const auto& s : opt->get_snames()) {
      words.push_back("-" + s);
    }
  }
  return words;
}

// The options of `app` that take a value (so completions must skip it).
std::vector<std::string> value_option_words(const CLI::App& app) {
  std::vector<std::string> words;
  for (const CLI::Option* opt :
       app.get_options([](const CLI::Option* o) { return o->nonpositional() && o->get_items_expected_min() > 0; })) {
    for (const auto& l : opt->get_lnames()) {
      words.push_back("--" + l);
    }
    for (const auto& s : opt->get_snames()) {
      words.push_back("-" + s);
    }
  }
  return words;
}

// Fish declares options as `-l name` / `-s c`.
std::string fish_spelling(const std::string& word) {
  return word.rfind("--", 0) == 0 ? "-l " + word.substr(2) : "-s " + word.substr(1);
}

// The fish `complete` lines whose condition is `__redlock_using … sub …`.
std::string fish_lines_for(const std::string& fish, const std::string& sub) {
  const std::string marker = "-n '__redlock_using ";
  std::istringstream in(fish);
  std::string line, out;
  while (std::getline(in, line)) {
    const size_t at = line.find(marker);
    if (at == std::string::npos) {
      continue;
    }
    const size_t from = at + marker.size();
    const std::string condition = line.substr(from, line.find('\'', from) - from);
    if (has_word(condition, sub)) {
      out += line + "\n";
    }
  }
  return out;
}

TEST(DocsSync, TheCliHasTheSubcommandsAndOptionsTheseTestsWalk) {
  // Guards the walk itself: if build_app stopped exposing options this way,
  // every other test here would pass vacuously.
  Cli cli;
  EXPECT_EQ(cli.subcommands().size(), 13u);
  auto global = option_words(*cli.app);
  EXPECT_NE(std::find(global.begin(), global.end(), "--redis"), global.end());
  EXPECT_NE(std::find(global.begin(), global.end(), "--version"), global.end());
  for (CLI::App* sub : cli.subcommands()) {
    EXPECT_FALSE(option_words(*sub).empty()) << sub->get_name();
  }
}

TEST(DocsSync, ManPageDocumentsEveryGlobalOptionUnderGlobalOptions) {
  Cli cli;
  const std::string man = man_page_text();
  const std::string options = section(man, ".SH OPTIONS", ".SH ");
  ASSERT_FALSE(options.empty()) << "no OPTIONS section in man/redlock.1";
  const std::string global = man_item_headings(section(options, ".SS \"Global options\"", ".SS "));
  ASSERT_FALSE(global.empty()) << "no .SS \"Global options\" with .TP items in OPTIONS";
  for (const auto& word : option_words(*cli.app)) {
    EXPECT_TRUE(has_word(global, word)) << word << " is not documented under Global options in man/redlock.1";
  }
}

TEST(DocsSync, EveryCommandHasThePageItsNameLineNames) {
  Cli cli;
  std::map<std::string, std::string> page;
  for (const auto& p : man_pages()) {
    for (const auto& command : commands_of_page(p)) {
      EXPECT_TRUE(page.emplace(command, p).second) << command << " is named by both " << page[command] << " and " << p;
    }
  }
  for (CLI::App* sub : cli.subcommands()) {
    EXPECT_NE(page.count(sub->get_name()), 0u)
        << "no page in man/ names redlock-" << sub->get_name() << " in its NAME line";
    page.erase(sub->get_name());
  }
  for (const auto& [command, p] : page) {
    ADD_FAILURE() << p << " names redlock-" << command << ", but redlock has no such command";
  }
}

TEST(DocsSync, EveryCommandPageDocumentsEachOptionOfItsCommands) {
  Cli cli;
  for (CLI::App* sub : cli.subcommands()) {
    const std::string name = sub->get_name();
    const std::string page = page_of(name);
    ASSERT_FALSE(page.empty()) << "no page for " << name;
    const std::string man = man_page_text(page);
    const std::string options = section(man, ".SH OPTIONS", ".SH ");
    const std::string synopsis = section(man, ".SH SYNOPSIS", ".SH ");
    // A page of several commands has a subsection for each; a page of one
    // documents its options in OPTIONS itself.
    std::string own = section(options, ".SS \"" + name + " ", ".SS ");
    if (own.empty() && commands_of_page(page).size() == 1) {
      own = options;
    }
    own = man_item_headings(own);
    ASSERT_FALSE(own.empty()) << "no .SS \"" << name << " …\" subsection with .TP items in OPTIONS of man/" << page;
    // An older spelling keeps its options documented, out of the SYNOPSIS.
    const bool older = older_spelling(*sub);
    EXPECT_EQ(has_word(synopsis, name), !older)
        << name << (older ? " is an older spelling, yet in" : " is missing from") << " the SYNOPSIS of man/" << page;
    for (const auto& word : option_words(*sub)) {
      if (word == "--help" || word == "-h") {
        continue;  // documented once, with the global options
      }
      EXPECT_TRUE(has_word(own, word)) << name << " " << word << " is not documented in OPTIONS of man/" << page;
      EXPECT_TRUE(older || has_word(synopsis, word))
          << name << " " << word << " is missing from the SYNOPSIS of man/" << page;
    }
  }
}

TEST(DocsSync, RedlockOneListsEveryCommandWithItsPage) {
  Cli cli;
  const std::string man = man_page_text();
  const auto rows = table_rows(section(man, ".SH COMMANDS", ".SH "));
  ASSERT_FALSE(rows.empty()) << "no table in the COMMANDS section of man/redlock.1";
  // A row names its command, and its page unless the row above's page
  // covers it too.
  std::map<std::string, std::string> listed;
  std::string current;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 3u) << "a row of COMMANDS without three cells: " << row.at(0);
    current = row[1].empty() ? current : row[1];
    listed[row[0]] = current;
  }
  for (CLI::App* sub : cli.subcommands()) {
    const std::string name = sub->get_name();
    ASSERT_NE(listed.count(name), 0u) << name << " is not in the COMMANDS table of man/redlock.1";
    const std::string page = page_of(name);
    std::string cited = reference(page);  // as text, not roff: "redlock-exec(1)"
    cited.erase(cited.find(' '), 1);
    EXPECT_EQ(listed[name], cited) << "the COMMANDS table of man/redlock.1 sends " << name
                                   << " to another page than man/" << page;
    listed.erase(name);
  }
  listed.erase("help");
  for (const auto& [command, p] : listed) {
    ADD_FAILURE() << "the COMMANDS table of man/redlock.1 lists " << command << ", which redlock does not have";
  }
}

TEST(DocsSync, RedlockOneNamesEveryPageInSeeAlsoAndEveryPageNamesIt) {
  const std::string see_also = section(man_page_text(), ".SH SEE ALSO", ".SH ");
  ASSERT_FALSE(see_also.empty()) << "no SEE ALSO in man/redlock.1";
  const auto pages = man_pages();
  EXPECT_GE(pages.size(), 11u) << "the pages of man/ are not all found";
  for (const auto& page : pages) {
    if (page == "redlock.1") {
      continue;
    }
    EXPECT_NE(see_also.find(reference(page)), std::string::npos)
        << reference(page) << " is missing from the SEE ALSO of man/redlock.1";
    EXPECT_NE(section(man_page_text(page), ".SH SEE ALSO", ".SH ").find(".BR redlock (1)"), std::string::npos)
        << "man/" << page << " does not name redlock(1) in its SEE ALSO";
  }
}

TEST(DocsSync, TheConfigurationFileKeysAreGlobalOptions) {
  Cli cli;
  const auto global = option_words(*cli.app);
  const std::string settings = man_item_headings(section(man_page_text("redlock.conf.5"), ".SH SETTINGS", ".SH "));
  ASSERT_FALSE(settings.empty()) << "no SETTINGS with .TP items in man/redlock.conf.5";
  const std::regex key(R"([a-z][a-z-]+)");
  size_t keys = 0;
  for (auto it = std::sregex_iterator(settings.begin(), settings.end(), key); it != std::sregex_iterator(); ++it) {
    ++keys;
    EXPECT_NE(std::find(global.begin(), global.end(), "--" + it->str()), global.end())
        << "redlock.conf(5) names the key " << it->str() << ", which is no global option --" << it->str();
  }
  EXPECT_GE(keys, 14u);
}

TEST(DocsSync, EveryPageFitsEightyColumns) {
  for (const auto& page : man_pages()) {
    const auto lines = rendered(page);
    if (!lines) {
      GTEST_SKIP() << "groff cannot be run here (scripts/setup installs groff-base)";
    }
    EXPECT_GT(lines->size(), 20u) << "man/" << page << " renders to almost nothing";
    for (size_t i = 0; i < lines->size(); ++i) {
      EXPECT_LE(characters((*lines)[i]), 80u)
          << "man/" << page << ", rendered line " << i + 1 << " is wider than 80 columns: " << (*lines)[i];
    }
  }
}

TEST(DocsSync, RedlockOneIsShortWithItsExamplesEarly) {
  const auto lines = rendered("redlock.1");
  if (!lines) {
    GTEST_SKIP() << "groff cannot be run here (scripts/setup installs groff-base)";
  }
  EXPECT_LE(lines->size(), 600u) << "redlock(1) is the overview: at most 600 lines at 80 columns; move detail "
                                    "to the command's page";
  const auto examples = std::find(lines->begin(), lines->end(), "EXAMPLES");
  ASSERT_NE(examples, lines->end()) << "redlock(1) has no EXAMPLES";
  EXPECT_LT(examples - lines->begin() + 1, 300) << "redlock(1)'s EXAMPLES start after its first 300 lines";
}

TEST(DocsSync, BashCompletionOffersEveryOptionForItsSubcommand) {
  Cli cli;
  const std::string bash = read_source_file("completions/redlock.bash");
  const std::string global = line_starting(bash, "_redlock_global_opts=");
  ASSERT_FALSE(global.empty()) << "no _redlock_global_opts= line in completions/redlock.bash";
  for (const auto& word : offered_option_words(*cli.app)) {
    if (word == "--version") {
      continue;  // only before a subcommand: offered separately
    }
    EXPECT_TRUE(has_word(global, word)) << word << " is missing from _redlock_global_opts";
  }
  EXPECT_TRUE(has_word(bash, "--version"));
  for (CLI::App* sub : cli.subcommands()) {
    const std::string name = sub->get_name();
    const std::string own = section(bash, "        " + name + ")", "        ");
    ASSERT_FALSE(own.empty()) << "no `" << name << ")` case in _redlock_subcommand_opts";
    const bool older = older_spelling(*sub);
    EXPECT_EQ(has_word(line_starting(bash, "_redlock_subcommands="), name), !older) << name;
    EXPECT_EQ(has_word(line_starting(bash, "_redlock_older_subcommands="), name), older) << name;
    for (const auto& word : option_words(*sub)) {
      if (word == "--help" || word == "-h") {
        continue;  // one of the global options
      }
      EXPECT_TRUE(has_word(own, word)) << name << " " << word << " is missing from completions/redlock.bash";
    }
  }
}

TEST(DocsSync, BashAndFishSkipTheValueOfEveryOptionThatTakesOne) {
  Cli cli;
  const std::string bash_values = line_starting(read_source_file("completions/redlock.bash"), "_redlock_value_opts=");
  // The fish list is one `set -g` spread over continuation lines, up to an empty line.
  const std::string fish_set =
      section(read_source_file("completions/redlock.fish"), "set -g __redlock_value_opts", "\n");
  ASSERT_FALSE(bash_values.empty()) << "no _redlock_value_opts= line in completions/redlock.bash";
  ASSERT_FALSE(fish_set.empty()) << "no `set -g __redlock_value_opts` in completions/redlock.fish";
  const std::string fish_values = fish_set.substr(std::string("set -g ").size());
  std::vector<std::string> words = value_option_words(*cli.app);
  for (CLI::App* sub : cli.subcommands()) {
    auto more = value_option_words(*sub);
    words.insert(words.end(), more.begin(), more.end());
  }
  for (const auto& word : words) {
    EXPECT_TRUE(has_word(bash_values, word)) << word << " takes a value but is missing from _redlock_value_opts";
    EXPECT_TRUE(has_word(fish_values, word)) << word << " takes a value but is missing from __redlock_value_opts";
  }
  // And the other way round: a flag in these lists would swallow the next word.
  for (const auto& list : {bash_values, fish_values}) {
    std::smatch m;
    for (auto it = list.cbegin(); std::regex_search(it, list.cend(), m, std::regex(R"(\s(-[-a-z]+))"));
         it = m[0].second) {
      EXPECT_NE(std::find(words.begin(), words.end(), m[1].str()), words.end())
          << m[1] << " is listed as taking a value, but the program has no such option with a value";
    }
  }
}

TEST(DocsSync, ZshCompletionOffersEveryOptionForItsSubcommand) {
  Cli cli;
  const std::string zsh = read_source_file("completions/_redlock");
  const std::string global = section(zsh, "  local -a global_opts=(", "  )");
  ASSERT_FALSE(global.empty()) << "no global_opts array in completions/_redlock";
  for (const auto& word : offered_option_words(*cli.app)) {
    if (word == "--version") {
      EXPECT_TRUE(zsh_specifies(zsh, word));  // only before a subcommand: specified separately
      continue;
    }
    EXPECT_TRUE(zsh_specifies(global, word)) << word << " is missing from global_opts in completions/_redlock";
  }
  for (CLI::App* sub : cli.subcommands()) {
    const std::string name = sub->get_name();
    const std::string own = section(zsh, "        (" + name + ")", "          ;;");
    ASSERT_FALSE(own.empty()) << "no `(" << name << ")` case in completions/_redlock";
    EXPECT_EQ(has_word(section(zsh, "  local -a subcommands=(", "  )"), name), !older_spelling(*sub)) << name;
    for (const auto& word : option_words(*sub)) {
      if (word == "--help" || word == "-h") {
        continue;  // one of the global options
      }
      EXPECT_TRUE(zsh_specifies(own, word)) << name << " " << word << " is missing from completions/_redlock";
    }
  }
}

TEST(DocsSync, FishCompletionOffersEveryOptionForItsSubcommand) {
  Cli cli;
  const std::string fish = read_source_file("completions/redlock.fish");
  for (const auto& word : offered_option_words(*cli.app)) {
    EXPECT_NE(fish.find(fish_spelling(word) + " "), std::string::npos)
        << word << " (" << fish_spelling(word) << ") is missing from completions/redlock.fish";
  }
  for (CLI::App* sub : cli.subcommands()) {
    const std::string name = sub->get_name();
    EXPECT_EQ(fish.find("-a " + name + " ") != std::string::npos, !older_spelling(*sub))
        << "subcommand " << name << (older_spelling(*sub) ? " is an older spelling, yet offered" : " is not offered");
    const std::string own = fish_lines_for(fish, name);
    ASSERT_FALSE(own.empty()) << "no `__redlock_using " << name << "` lines in completions/redlock.fish";
    for (const auto& word : option_words(*sub)) {
      if (word == "--help" || word == "-h") {
        continue;  // one of the global options
      }
      EXPECT_NE(own.find(fish_spelling(word) + " "), std::string::npos)
          << name << " " << word << " is missing from completions/redlock.fish";
    }
  }
}

TEST(DocsSync, TheOlderSpellingsAreOutOfTheHelpsGroupsAndNamedInOneLineOfIt) {
  Cli cli;
  std::vector<std::string> older;
  for (CLI::App* sub : cli.subcommands()) {
    if (older_spelling(*sub)) {
      older.push_back(sub->get_name());
    }
  }
  EXPECT_EQ(older, (std::vector<std::string>{"revoke", "overdue"}));
  const std::string help = cli.app->help();
  for (const auto& name : older) {
    EXPECT_FALSE(std::regex_search(help, std::regex("\\n  " + name + " "))) << name << " is listed in:\n" << help;
  }
  EXPECT_NE(help.find("\nOlder spellings: revoke (break --grace), overdue (history --max-age)\n"), std::string::npos)
      << help;
  EXPECT_NE(cli.app->get_subcommand("revoke")->help().find("older spelling of break --grace"), std::string::npos);
  EXPECT_NE(cli.app->get_subcommand("overdue")->help().find("older spelling of history --max-age"), std::string::npos);
}

TEST(DocsSync, EverySubcommandHelpEndsWithAnExampleOfThatSubcommand) {
  Cli cli;
  for (CLI::App* sub : cli.subcommands()) {
    std::string help = sub->help();
    while (!help.empty() && (help.back() == '\n' || help.back() == ' ')) {
      help.pop_back();
    }
    const std::string last = help.substr(help.rfind('\n') + 1);
    EXPECT_NE(last.find("redlock " + sub->get_name() + " "), std::string::npos)
        << sub->get_name() << " --help ends with \"" << last << "\", not an example of it";
    EXPECT_NE(sub->get_footer().find("Example"), std::string::npos) << sub->get_name() << " has no Example: footer";
  }
}

}  // namespace
