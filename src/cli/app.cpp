#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <openssl/crypto.h>

#include <CLI/CLI.hpp>
#include <cstring>

#include "cli/commands.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

std::string version_text() {
  return fmt::format("redlock {}\nhiredis {}.{}.{}\n{}", REDLOCK_VERSION, HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH,
                     OpenSSL_version(OPENSSL_VERSION));
}

std::unique_ptr<CLI::App> build_app(AllOptions& o) {
  auto app =
      std::make_unique<CLI::App>("redlock: distributed locks on Redis for scripts, cron jobs and operators", "redlock");
  app->set_version_flag("--version", version_text());
  app->require_subcommand(1);
  app->fallthrough();
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
  add_exec(*app, o.exec);
  return app;
}

int main(int argc, char** argv) {
  AllOptions o;
  auto app = build_app(o);
  // What the parser cannot tell us when it fails: -q (so that even a usage
  // error stays silent), whether CMD came after "--", and the first word
  // that is not an option (an unknown subcommand, if it is not a known one).
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      o.exec.saw_double_dash = true;
      break;
    }
    quiet = quiet || std::strcmp(argv[i], "-q") == 0 || std::strcmp(argv[i], "--quiet") == 0;
  }
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      return app->exit(e);  // --help, --version
    }
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    if (app->get_subcommands().empty()) {
      const auto* bad = dynamic_cast<const CLI::RequiredError*>(&e);
      for (const auto& word : app->remaining()) {
        if (bad && !word.empty() && word[0] != '-') {
          what = fmt::format("unknown subcommand '{}' (use acquire, release, renew, status or exec)",
                             escape_for_terminal(word));
          break;
        }
      }
    }
    if (!quiet) {
      fmt::print(stderr, "redlock: {} (see redlock --help)\n", what);
    }
    return to_int(ExitStatus::k_usage);
  }
  verbosity() = o.global.quiet ? Verbosity::k_quiet : o.global.verbose ? Verbosity::k_verbose : Verbosity::k_normal;
  try {
    if (app->got_subcommand("acquire")) {
      return run_acquire(o.acquire, o.global);
    }
    if (app->got_subcommand("release")) {
      return run_release(o.release, o.global);
    }
    if (app->got_subcommand("renew")) {
      return run_renew(o.renew, o.global);
    }
    if (app->got_subcommand("status")) {
      return run_status(o.status, o.global);
    }
    if (app->got_subcommand("exec")) {
      return run_exec(o.exec, o.global);
    }
    throw UsageError("no subcommand given (acquire, release, renew, status, exec)");
  } catch (const Error& e) {
    log_warning("{}", e.what());
    return to_int(e.status());
  } catch (const std::exception& e) {
    log_warning("internal error: {}", e.what());
    return to_int(ExitStatus::k_protocol);
  }
}

}  // namespace redlock::cli
