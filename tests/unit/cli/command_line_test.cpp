// The quick reading of argv (the global options taken out without CLI11,
// only the named subcommand built) against the whole command line: for any
// command line, the same options and the same subcommand.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/line/global_options.hpp"

namespace redlock::cli {
namespace {

struct Argv {
  explicit Argv(const std::vector<std::string>& given) : words(given) {
    words.insert(words.begin(), "redlock");
    for (std::string& w : words) {
      ptrs.push_back(w.data());
    }
    ptrs.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> words;
  std::vector<char*> ptrs;
};

std::string describe(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    out += "'" + w + "' ";
  }
  return out;
}

void expect_same_globals(const GlobalOptions& a, const GlobalOptions& b, const std::string& line) {
  EXPECT_EQ(a.redis, b.redis) << line;
  EXPECT_EQ(a.prefix, b.prefix) << line;
  EXPECT_EQ(a.connect_timeout, b.connect_timeout) << line;
  EXPECT_EQ(a.timeout, b.timeout) << line;
  EXPECT_EQ(a.legacy_timeout, b.legacy_timeout) << line;
  EXPECT_EQ(a.tls_ca, b.tls_ca) << line;
  EXPECT_EQ(a.tls_cert, b.tls_cert) << line;
  EXPECT_EQ(a.tls_key, b.tls_key) << line;
  EXPECT_EQ(a.tls_server_name, b.tls_server_name) << line;
  EXPECT_EQ(a.insecure, b.insecure) << line;
  EXPECT_EQ(a.password_file, b.password_file) << line;
  EXPECT_EQ(a.min_replicas, b.min_replicas) << line;
  EXPECT_EQ(a.quiet, b.quiet) << line;
  EXPECT_EQ(a.silent, b.silent) << line;
  EXPECT_EQ(a.verbose, b.verbose) << line;
  EXPECT_EQ(a.log_format, b.log_format) << line;
  EXPECT_EQ(a.syslog, b.syslog) << line;
  EXPECT_EQ(a.syslog_facility, b.syslog_facility) << line;
}

void expect_same_take(const TakeOptions& a, const TakeOptions& b, const std::string& line) {
  EXPECT_EQ(a.names, b.names) << line;
  EXPECT_EQ(a.ttl, b.ttl) << line;
  EXPECT_EQ(a.wait, b.wait) << line;
  EXPECT_EQ(a.nonblock, b.nonblock) << line;
  EXPECT_EQ(a.token, b.token) << line;
  EXPECT_EQ(a.limit, b.limit) << line;
  EXPECT_EQ(a.note, b.note) << line;
  EXPECT_EQ(a.conflict_exit_code, b.conflict_exit_code) << line;
  EXPECT_EQ(a.jitter, b.jitter) << line;
}

void expect_same_options(const AllOptions& quick, const AllOptions& whole, const std::string& line) {
  expect_same_globals(quick.global, whole.global, line);
  expect_same_take(quick.acquire.take, whole.acquire.take, line);
  expect_same_take(quick.exec.take, whole.exec.take, line);
  EXPECT_EQ(quick.exec.command, whole.exec.command) << line;
  EXPECT_EQ(quick.exec.saw_double_dash, whole.exec.saw_double_dash) << line;
  EXPECT_EQ(quick.exec.dashes_hint, whole.exec.dashes_hint) << line;
  EXPECT_EQ(quick.exec.shell_command, whole.exec.shell_command) << line;
  EXPECT_EQ(quick.exec.max_runtime, whole.exec.max_runtime) << line;
  EXPECT_EQ(quick.exec.on_lost, whole.exec.on_lost) << line;
  EXPECT_EQ(quick.exec.kill_after, whole.exec.kill_after) << line;
  EXPECT_EQ(quick.release.names, whole.release.names) << line;
  EXPECT_EQ(quick.release.token, whole.release.token) << line;
  EXPECT_EQ(quick.renew.names, whole.renew.names) << line;
  EXPECT_EQ(quick.renew.token, whole.renew.token) << line;
  EXPECT_EQ(quick.renew.ttl, whole.renew.ttl) << line;
  EXPECT_EQ(quick.status.names, whole.status.names) << line;
  EXPECT_EQ(quick.status.json, whole.status.json) << line;
}

// `words` read by read_command_line (quick) and read_whole_command_line.
struct BothReadings {
  explicit BothReadings(const std::vector<std::string>& words) {
    Argv q(words);
    Argv w(words);
    a = read_command_line(quick, q.argc(), q.argv());
    b = read_whole_command_line(whole, w.argc(), w.argv());
  }
  AllOptions quick;
  AllOptions whole;
  CommandLine a;
  CommandLine b;
};

// Reads `words` both ways and checks that they agree, on a command line
// that must be valid.
void expect_same_reading(const std::vector<std::string>& words) {
  const std::string line = describe(words);
  const BothReadings r(words);
  ASSERT_FALSE(r.a.exit_now) << line;
  ASSERT_FALSE(r.b.exit_now) << line;
  EXPECT_EQ(r.a.subcommand, r.b.subcommand) << line;
  expect_same_options(r.quick, r.whole, line);
}

const std::vector<std::vector<std::string>> k_lines = {
    {"acquire", "x"},
    {"-r", "redis://a:1", "-r", "redis://b:2", "-r", "redis://c:3", "acquire", "x"},
    {"acquire", "-r", "redis://a:1", "x", "-r", "redis://b:2"},
    {"--redis=redis://a:1", "acquire", "--redis", "redis://b:2", "x"},
    {"--prefix", "p:", "acquire", "--ttl", "5s", "x"},
    {"acquire", "--prefix=p:", "x", "--prefix", "q:"},
    {"--prefix=", "p:", "acquire", "x"},
    {"acquire", "--note=", "-q", "x"},
    {"-q", "acquire", "x"},
    {"-q", "-q", "acquire", "x"},
    {"-qq", "acquire", "x"},
    {"acquire", "-q", "x", "-v", "--quiet"},
    {"--silent", "exec", "x", "--", "true"},
    {"--timeout", "5s", "acquire", "x"},
    {"acquire", "--timeout", "5s", "x"},
    {"--timeout", "5s", "exec", "--wait", "1s", "x", "--", "true"},
    {"exec", "--ttl", "5s", "job", "--", "sh", "-c", "echo -r x -q"},
    {"exec", "job", "--", "-q", "--redis", "u"},
    {"exec", "-c", "echo hi", "job"},
    {"exec", "-r", "redis://a:1", "job", "-v", "--", "true"},
    {"release", "--token", "-q", "x"},
    {"release", "--token=-r", "x", "y"},
    {"acquire", "--note", "-r z", "x"},
    {"acquire", "-w5s", "-nx", "x"},
    {"--redis-timeout", "250ms", "--connect-timeout", "2s", "release", "--token", "T", "x"},
    {"--tls-ca", "ca.pem", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-server-name", "n", "--insecure",
     "acquire", "x"},
    {"--password-file", "/dev/null", "--min-replicas", "1", "--log-format", "json", "--syslog", "--syslog-facility",
     "local0", "acquire", "x"},
    {"renew", "--ttl", "10s", "--token", "T", "x", "-r", "redis://a:1"},
    {"acquire", "--", "-x"},
    {"acquire", "status"},
    {"release", "--token", "T", "release", "exec"},
    {"status", "--json", "a*", "-r", "redis://a:1"},
    {"-rredis://a:1", "acquire", "x"},
    {"--insecure=true", "acquire", "x"},
    {"history", "job", "--prefix", "p:"},
    {"break", "x", "-q"},
};

TEST(CommandLine, TheQuickReadingAgreesWithTheWholeCommandLine) {
  for (const auto& words : k_lines) {
    expect_same_reading(words);
  }
}

// Standard error sent to /dev/null while it lives, even when an assertion
// returns early.
struct StderrToNull {
  StderrToNull() : saved(dup(2)) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 2);
      close(null);
    }
  }
  ~StderrToNull() {
    if (saved >= 0) {
      dup2(saved, 2);
      close(saved);
    }
  }
  StderrToNull(const StderrToNull&) = delete;
  StderrToNull& operator=(const StderrToNull&) = delete;
  int saved;
};

// Random command lines from words that mix global options, subcommands'
// own options of the same names, values that look like options and "--":
// whatever the whole command line makes of one (options, or a usage
// error), read_command_line makes the same.
TEST(CommandLine, RandomCommandLinesAreReadAsTheWholeCommandLineReadsThem) {
  // clang-format off
  const std::vector<std::string> vocabulary = {
      "-r", "redis://a:1", "--redis=redis://b:2", "--prefix", "--prefix=", "p:", "-q", "-qq", "-v",
      "--silent", "--timeout", "5s", "acquire", "exec", "release", "x", "y", "--", "--ttl", "--ttl=3s", "-w",
      "-w2s", "--token", "T", "-n", "-nq", "--note", "--insecure", "--redis-timeout", "1s", "true", "-c",
      "--wait", "status", "--json", "--bogus", "-x", "--min-replicas", "2", "--limit", "-E", "--max-runtime",
      "--on-lost", "kill", "-nw", "--ttl=", "-E3"};
  // clang-format on
  std::mt19937 random(20261205);
  const StderrToNull quiet;  // the usage errors' lines
  int valid = 0;
  const std::vector<std::string> subcommands = {"acquire", "exec", "release", "status"};
  const auto any = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  for (int n = 0; n < 1000; ++n) {
    // Words, a subcommand, words, and most often a name last.
    std::vector<std::string> words;
    for (size_t k = random() % 3; k > 0; --k) {
      words.push_back(any(vocabulary));
    }
    words.push_back(any(subcommands));
    for (size_t k = random() % 5; k > 0; --k) {
      words.push_back(any(vocabulary));
    }
    if (random() % 4 != 0) {
      words.emplace_back("x");
    }
    const std::string line = describe(words);
    const BothReadings r(words);
    ASSERT_EQ(r.a.exit_now, r.b.exit_now) << line;
    ASSERT_EQ(r.a.subcommand, r.b.subcommand) << line;
    if (r.b.exit_now) {
      continue;
    }
    ++valid;
    expect_same_options(r.quick, r.whole, line);
  }
  EXPECT_GT(valid, 100);  // enough of them are command lines at all
}

// take_global_options itself: the common lines are read without CLI11, and
// what it cannot read the same way is left to the whole command line.
std::optional<std::vector<std::string>> taken(const std::vector<std::string>& words, GlobalOptions& g) {
  Argv a(words);
  const SubcommandWords sub{
      .found = [](std::string_view name) { return name == "acquire" || name == "exec"; },
      .option =
          [](std::string_view name) {
            if (name == "--ttl" || name == "--timeout" || name == "-w") {
              return OwnOption::k_value;
            }
            return name == "-n" ? OwnOption::k_flag : OwnOption::k_none;
          },
  };
  const auto kept = take_global_options(g, a.argc(), a.argv(), sub);
  if (!kept) {
    return std::nullopt;
  }
  return std::vector<std::string>(kept->begin() + 1, kept->end());
}

TEST(CommandLine, GlobalOptionsAreTakenOutOfArgv) {
  GlobalOptions g;
  EXPECT_EQ(taken({"-r", "u1", "--prefix", "p:", "acquire", "--ttl", "5s", "-q", "x", "--redis=u2", "-v"}, g),
            (std::vector<std::string>{"acquire", "--ttl", "5s", "x"}));
  EXPECT_EQ(g.redis, (std::vector<std::string>{"u1", "u2"}));
  EXPECT_EQ(g.prefix, "p:");
  EXPECT_EQ(g.quiet, 1);
  EXPECT_TRUE(g.verbose);

  // Before the subcommand --timeout is the global one; after acquire's name, acquire's own.
  GlobalOptions t;
  EXPECT_EQ(taken({"--timeout", "3s", "acquire", "--timeout", "4s", "x"}, t),
            (std::vector<std::string>{"acquire", "--timeout", "4s", "x"}));
  EXPECT_EQ(t.legacy_timeout, "3s");

  // An own option's value stays with it, whatever it looks like; so does
  // everything from "--" on.
  GlobalOptions v;
  EXPECT_EQ(taken({"exec", "-w", "-q", "x", "--", "-r", "u"}, v),
            (std::vector<std::string>{"exec", "-w", "-q", "x", "--", "-r", "u"}));
  EXPECT_EQ(v.quiet, 0);
  EXPECT_TRUE(v.redis.empty());
}

TEST(CommandLine, WhatOnlyTheWholeCommandLineReadsIsLeftToIt) {
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"-qq", "acquire", "x"},                 // joined flags
           {"-rredis://a", "acquire", "x"},         // joined value
           {"--insecure=false", "acquire", "x"},    // a flag's value
           {"--ttl", "5s", "acquire", "x"},         // no global option
           {"acquire", "--bogus", "x"},             // no option at all
           {"--redis-timeout", "soon", "acquire"},  // a value that does not parse
           {"acquire", "x", "--prefix"},            // a value missing
           {"--prefix", "--", "acquire", "x"},      // "--" is no value
           {"release", "x"},                        // a subcommand turned down
           {"-q"},                                  // no subcommand
       }) {
    GlobalOptions g;
    EXPECT_FALSE(taken(words, g)) << describe(words);
  }
}

TEST(CommandLine, EveryGlobalOptionIsInTheWholeCommandLine) {
  AllOptions o;
  const auto app = build_app(o);
  for (const GlobalOptionDef& def : global_option_defs()) {
    const std::string names = def.names;
    const std::string first = names.substr(0, names.find(','));
    const CLI::Option* opt = app->get_option_no_throw(first);
    ASSERT_NE(opt, nullptr) << first;
    EXPECT_EQ(opt->get_expected_min() == 0, def.type_name == nullptr) << first;
    EXPECT_EQ(opt->get_group().empty(), *def.help == '\0') << first;
  }
}

}  // namespace
}  // namespace redlock::cli
