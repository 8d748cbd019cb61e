#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <openssl/opensslv.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

#include "cli/commands.hpp"
#include "redis/fanout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/signals.hpp"
#include "util/text.hpp"

namespace redlock::cli {

std::string version_text() {
  // OpenSSL is loaded only for rediss:// (see redis/openssl.hpp): the
  // version it was built against, without loading it here.
  return fmt::format("redlock {}\nhiredis {}.{}.{}\n{} (libssl.so.{}, loaded for rediss://)", REDLOCK_VERSION,
                     HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH, OPENSSL_VERSION_TEXT, OPENSSL_VERSION_MAJOR);
}

std::unique_ptr<CLI::App> build_app(AllOptions& o) {
  auto app =
      std::make_unique<CLI::App>("redlock: distributed locks on Redis for scripts, cron jobs and operators", "redlock");
  app->set_version_flag("--version", version_text());
  app->require_subcommand(1);
  app->fallthrough();
  // Given twice, an option's last value counts (as with getopt), so a
  // wrapper's --ttl can be overridden by adding another.
  app->option_defaults()->take_last();
  add_global_options(*app, o.global);
  app->footer(
      "Examples:\n"
      "  redlock exec --ttl 2m nightly-report -- /opt/report.sh\n"
      "  tok=$(redlock acquire --ttl 60s migrate) && redlock release --token \"$tok\" migrate\n"
      "  redlock status\n"
      "See redlock(1) for exit statuses and safety notes.");
  add_acquire(*app, o.acquire);
  add_release(*app, o.release);
  add_renew(*app, o.renew);
  add_status(*app, o.status);
  add_break(*app, o.brk);
  add_exec(*app, o.exec);
  return app;
}

namespace {

// The subcommand argv names: its first word that is neither an option nor
// the value of a global option ("-r URL exec" is exec), or "".
std::string subcommand_in(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word == "--") {
      break;
    }
    if (word.size() > 1 && word[0] == '-') {
      const CLI::Option* opt = app.get_option_no_throw(std::string(word));
      if (opt && opt->get_type_size_min() > 0) {
        ++i;  // its value, even if that looks like a subcommand
      }
      continue;
    }
    return std::string(word);
  }
  return "";
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// A parse error echoes what it could not place, and that may be a secret:
// a URL's password, the word after --password, PASSWORD=…. Each argument
// that redact_arguments() changes is replaced by its redacted form wherever
// the message shows it whole.
std::string without_secrets(std::string text, int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::vector<std::string> redacted = redact_arguments(args);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& secret = args[i];
    if (redacted[i] == secret || secret.empty()) {
      continue;
    }
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
      size_t end = at + secret.size();
      if ((at > 0 && is_word_char(text[at - 1])) || (end < text.size() && is_word_char(text[end]))) {
        at = end;
        continue;
      }
      text.replace(at, secret.size(), redacted[i]);
      at += redacted[i].size();
    }
  }
  return redact_url_passwords(text);
}

// The stop signal (SIGINT, SIGTERM or SIGHUP) waiting to be handled, or 0.
int pending_stop() {
  sigset_t set;
  if (sigpending(&set) != 0) {
    return 0;
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (sigismember(&set, sig) == 1) {
      return sig;
    }
  }
  return 0;
}

ExitCode run_subcommand(CLI::App& app, const AllOptions& o) {
  const std::pair<const char*, std::function<ExitCode()>> runs[] = {
      {"acquire", [&] { return run_acquire(o.acquire, o.global); }},
      {"release", [&] { return run_release(o.release, o.global); }},
      {"renew", [&] { return run_renew(o.renew, o.global); }},
      {"status", [&] { return run_status(o.status, o.global); }},
      {"break", [&] { return run_break(o.brk, o.global); }},
      {"exec", [&] { return run_exec(o.exec, o.global); }},
  };
  for (const auto& [name, run] : runs) {
    if (app.got_subcommand(name)) {
      return run();
    }
  }
  throw UsageError("no subcommand given (acquire, release, renew, status, break, exec)");
}

}  // namespace

namespace {

// How much quieter one word of argv asks redlock to be: -q and --quiet 1,
// -qq 2, --silent 2.
int quiet_level(std::string_view word) {
  if (word == "--silent") {
    return 2;
  }
  if (word == "--quiet") {
    return 1;
  }
  const bool q_only = word.size() > 1 && word[0] == '-' && word.find_first_not_of('q', 1) == std::string_view::npos;
  return q_only ? static_cast<int>(word.size() - 1) : 0;
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

}  // namespace

namespace {

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

// --help or --version: prints it; 0, or 74 if standard output failed.
int print_requested(CLI::App& app, const CLI::ParseError& e) {
  (void)app.exit(e);
  std::cout.flush();
  if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    write_stderr("redlock: could not write to standard output\n");
    return to_int(ExitStatus::k_output);
  }
  return 0;
}

// A usage error: one line (unless --silent) without secrets, and 64.
int report_usage_error(CLI::App& app, const CLI::ParseError& e, bool silent, int argc, char** argv) {
  std::string what = e.what();
  std::replace(what.begin(), what.end(), '\n', ' ');
  if (app.get_subcommands().empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    for (const auto& word : app.remaining()) {
      if (!word.empty() && word[0] != '-') {
        what = fmt::format("unknown subcommand '{}' (use acquire, release, renew, status, break or exec)", word);
        break;
      }
    }
  }
  what = escape_for_terminal(without_secrets(what, argc, argv));
  if (!silent) {
    write_stderr(fmt::format("redlock: {} (see redlock --help)\n", what));
  }
  return to_int(ExitStatus::k_usage);
}

// Parses redlock's own words; the exit status when that ends the call
// (--help, --version, a usage error).
std::optional<int> parse(CLI::App& app, AllOptions& o, const Prescan& p, int argc, char** argv) {
  try {
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
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code() == 0 ? print_requested(app, e) : report_usage_error(app, e, p.silent, argc, argv);
  } catch (const UsageError& e) {
    // A value that does not parse (--ttl, --limit, --on-lost...): its own words.
    if (!p.silent) {
      write_stderr(fmt::format("redlock: {}\n", e.what()));
    }
    return to_int(ExitStatus::k_usage);
  }
  return std::nullopt;
}

void set_verbosity(const GlobalOptions& g) {
  verbosity() = g.silent || g.quiet >= 2 ? Verbosity::k_silent
                : g.quiet == 1           ? Verbosity::k_quiet
                : g.verbose              ? Verbosity::k_verbose
                                         : Verbosity::k_normal;
}

// Runs the parsed subcommand: every error becomes one line and its status.
// The one place where an ExitCode becomes a number.
int run(CLI::App& app, const AllOptions& o) {
  // From here on the stop signals are blocked (before any thread or child
  // exists) and cancel every round trip in flight: SIGINT, SIGTERM or SIGHUP
  // while redlock waits for Redis ends it at once, with 128+N. What was just
  // sent still reaches the server, followed by the release of anything it
  // would grant.
  SignalFd stops({SIGINT, SIGTERM, SIGHUP});
  redis::set_stop_fd(stops.fd());
  ExitCode status = ExitStatus::k_ok;
  std::string failure;
  try {
    status = run_subcommand(app, o);
  } catch (const Error& e) {
    failure = e.what();
    status = e.status();
  } catch (const std::exception& e) {
    failure = fmt::format("internal error: {}", e.what());
    status = ExitStatus::k_protocol;
  }
  // A stop signal still pending cut a round trip short, or came before the
  // subcommand could finish: it ends the command. Only an acquire that
  // succeeded keeps its 0: it printed a token, and the caller holds the lock.
  const int sig = pending_stop();
  if (sig != 0 && (!status.ok() || !app.got_subcommand("acquire"))) {
    log_warning("interrupted by SIG{}", sigabbrev_np(sig));
    if (!failure.empty()) {
      log_debug("{}", failure);
    }
    return ExitCode::for_signal(sig).value();
  }
  if (!failure.empty()) {
    log_warning("{}", failure);
  }
  return status.value();
}

int parse_and_run(int argc, char** argv) {
  AllOptions o;
  auto app = build_app(o);
  std::optional<std::vector<char*>> help = help_words(*app, argc, argv);
  if (help) {
    argc = static_cast<int>(help->size()) - 1;
    argv = help->data();
  }
  const Prescan p = prescan(*app, o.exec, argc, argv);
  if (const std::optional<int> ended = parse(*app, o, p, argc, argv)) {
    return *ended;
  }
  set_verbosity(o.global);
  return run(*app, o);
}

}  // namespace

int main(int argc, char** argv) noexcept {
  try {
    return parse_and_run(argc, argv);
  } catch (const std::exception& e) {
    // What run() does not turn into a status itself: building the command
    // line, blocking the stop signals, or no memory left to say more.
    write_stderr("redlock: internal error: ");
    write_stderr(e.what());
    write_stderr("\n");
  } catch (...) {
    write_stderr("redlock: internal error\n");
  }
  return to_int(ExitStatus::k_protocol);
}

}  // namespace redlock::cli
