// The command line: every subcommand's options, each with its help and the
// parser of its value, and the reading of argv. This is the one file that
// includes CLI11: each file that includes it costs seconds of compile, and
// every one has its own copies of CLI11's static objects, built at every
// start of redlock. The subcommands' files get their options as plain
// structs (cli/commands.hpp).

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

#include "cli/commands.hpp"
#include "cli/option_values.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/number.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// An option whose value `parse` turns into its typed value as the command
// line is read: a bad value is a UsageError in redlock's own words (exit 64),
// never CLI11's. Given twice, the last one counts, as with getopt.
CLI::Option* add_parsed_option(CLI::App& app, const std::string& flags,
                               const std::function<void(const std::string&)>& parse, const std::string& help) {
  return app.add_option_function<std::string>(flags, parse, help)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// Options every subcommand accepts, before or after the subcommand's name.
void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_option("-r,--redis", g.redis,
                 "Redis URL; repeat for the Redlock algorithm over N masters "
                 "(default: $REDLOCK_URL, else redis://127.0.0.1:6379)")
      ->allow_extra_args(false)  // one URL per -r: `release -r URL NAME` must leave NAME alone
      ->type_name("URL");
  app.add_option("--prefix", g.prefix, "key prefix (default: $REDLOCK_PREFIX, else redlock:)")->type_name("STR");
  add_parsed_option(
      app, "--connect-timeout",
      [&g](const std::string& v) { g.connect_timeout = parse_timeout(v, "--connect-timeout"); },
      "per-connection timeout (default 1s)")
      ->type_name("D");
  add_parsed_option(
      app, "--timeout", [&g](const std::string& v) { g.timeout = parse_timeout(v, "--timeout"); },
      "per-command round-trip timeout (default 1s)")
      ->type_name("D");
  app.add_option("--tls-ca", g.tls_ca, "CA certificates for rediss:// (default: system store)")->type_name("FILE");
  app.add_option("--tls-cert", g.tls_cert, "client certificate for rediss://")->type_name("FILE");
  app.add_option("--tls-key", g.tls_key, "client key for rediss://")->type_name("FILE");
  app.add_option("--tls-server-name", g.tls_server_name, "name to verify the server certificate against")
      ->type_name("NAME");
  app.add_flag("--insecure", g.insecure, "do not verify TLS certificates (says so on stderr)");
  app.add_option("--password-file", g.password_file,
                 "read the Redis password from FILE (default: $REDLOCK_PASSWORD_FILE)")
      ->type_name("FILE");
  add_parsed_option(
      app, "--min-replicas",
      [&g](const std::string& v) { g.min_replicas = parse_whole_number(v, "--min-replicas", 0, 1'000'000); },
      "after acquire/renew, WAIT for N replicas or treat the lock as not held")
      ->type_name("N");
  app.add_flag("-q,--quiet", g.quiet,
               "say nothing when the lock is busy and nothing while waiting; errors still get their line "
               "(-qq: nothing at all)");
  app.add_flag("--silent", g.silent, "print nothing on stderr, not even errors (same as -qq)");
  app.add_flag("-v,--verbose", g.verbose, "say more on stderr");
  add_parsed_option(
      app, "--log-format", [&g](const std::string& v) { g.log_format = parse_log_format(v, "--log-format"); },
      "text (the default) or json: each line on stderr one JSON object (default: $REDLOCK_LOG_FORMAT)")
      ->type_name("F");
  app.add_flag("--syslog", g.syslog, "send each line on stderr to syslog(3) too (default: $REDLOCK_SYSLOG)");
  add_parsed_option(
      app, "--syslog-facility",
      [&g](const std::string& v) { g.syslog_facility = parse_syslog_facility(v, "--syslog-facility"); },
      "the syslog facility, implies --syslog (default user)")
      ->type_name("F");
}

// How acquire and exec take a lock: the options they share.
void add_take_options(CLI::App& sub, TakeOptions& o, const char* ttl_help) {
  sub.add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      sub, "--ttl", [&o](const std::string& v) { o.ttl = parse_ttl(v); }, ttl_help)
      ->type_name("D");
  add_parsed_option(
      sub, "--wait", [&o](const std::string& v) { o.wait = parse_wait(v, "--wait"); },
      "how long to wait for a held lock: 0 (one try, the default), 30s, inf")
      ->type_name("D");
  sub.add_option("--token", o.token, "re-enter the lock if this token holds it (default: $REDLOCK_TOKEN)")
      ->type_name("T");
  add_parsed_option(
      sub, "--limit", [&o](const std::string& v) { o.limit = parse_whole_number(v, "--limit", 1, 1'000'000); },
      "a counting semaphore: up to N holders at once (default 1, a plain lock)")
      ->type_name("N");
  add_parsed_option(
      sub, "--conflict-exit-code",
      [&o](const std::string& v) {
        o.conflict_exit_code = ExitCode::passed_on(parse_whole_number(v, "--conflict-exit-code", 0, 255));
      },
      "exit status when the lock is busy (default 75)")
      ->type_name("N");
  sub.add_flag("--unfair", o.unfair,
               "race for the lock when it frees instead of waiting in line (first come first served)");
  add_parsed_option(
      sub, "--jitter", [&o](const std::string& v) { o.jitter = parse_duration(v, "--jitter"); },
      "sleep a random time below D before the first try, so that a fleet's cron jobs do not always start in "
      "the same order")
      ->type_name("D");
  add_parsed_option(
      sub, "--max-waiters",
      [&o](const std::string& v) { o.max_waiters = parse_whole_number(v, "--max-waiters", 1, 1'000'000); },
      "busy at once, without joining the line, when N already wait in it (no pile-up of runs)")
      ->type_name("N");
  add_parsed_option(
      sub, "--stale-after", [&o](const std::string& v) { o.stale_after = parse_bound(v, "--stale-after"); },
      "when busy, say so even with -q if the holder has held the lock longer than D: it may be stuck")
      ->type_name("D");
  sub.add_option("--note", o.note,
                 "keep TEXT with the lock for status (the leader's address, a version; at most 256 bytes)")
      ->type_name("TEXT");
}

// A subcommand that acts on a lock held by a token (release, renew): its
// NAME and --token, and `example` as its help's footer.
CLI::App* add_token_subcommand(CLI::App& app, const char* verb, const char* description, const char* example,
                               std::string& name, std::string& token) {
  auto* sub = app.add_subcommand(verb, description);
  sub->add_option("NAME", name, "the lock's name")->required();
  sub->add_option("--token", token, "the holder's token (default: $REDLOCK_TOKEN)")->type_name("T");
  sub->footer(fmt::format("Example:\n  {}", example));
  return sub;
}

// acquire NAME: the options it shares with exec, and its own.
CLI::App* add_acquire(CLI::App& app, AcquireOptions& o) {
  auto* sub = app.add_subcommand("acquire", "take the lock and print its token");
  add_take_options(*sub, o.take, "how long the lock lives unless renewed (default 30s)");
  sub->add_flag("--shared", o.shared,
                "take a reader's share of a readers/writer lock; renew and release it by its token");
  sub->add_flag("--json", o.json, "print token, fence, ttl_ms and validity_ms as JSON");
  sub->footer("Example:\n  tok=$(redlock acquire --ttl 60s --wait 10s migrate) || exit 1");
  return sub;
}

// release NAME --token T.
CLI::App* add_release(CLI::App& app, ReleaseOptions& o) {
  auto* sub = add_token_subcommand(app, "release", "release the lock held by a token (one level of re-entry)",
                                   "redlock release --token \"$tok\" migrate", o.name, o.token);
  add_parsed_option(
      *sub, "--hold-at-least", [&o](const std::string& v) { o.hold_at_least = parse_duration(v, "--hold-at-least"); },
      "keep the lock until D after it was taken (nobody's token can release or renew it meanwhile)")
      ->type_name("D");
  return sub;
}

// renew NAME --token T --ttl D.
CLI::App* add_renew(CLI::App& app, RenewOptions& o) {
  auto* sub = add_token_subcommand(app, "renew", "extend the lock held by a token",
                                   "redlock renew --token \"$tok\" --ttl 60s migrate || echo 'lost the lock' >&2",
                                   o.name, o.token);
  add_parsed_option(
      *sub, "--ttl", [&o](const std::string& v) { o.ttl = parse_ttl(v); },
      "the new time to live, from now (default 30s)")
      ->type_name("D");
  sub->add_flag("--json", o.json, "print ttl_ms and validity_ms as JSON");
  return sub;
}

// status [NAME...]: how it shows the locks.
CLI::App* add_status(CLI::App& app, StatusOptions& o) {
  auto* sub = app.add_subcommand("status", "show who holds which lock, for how long, and who waits");
  sub->add_option("NAME", o.names, "locks to show, with their waiters (default: every lock under the prefix)");
  sub->add_flag("--json", o.json, "print a JSON array instead of a table (as --format json)");
  add_parsed_option(
      *sub, "--format", [&o](const std::string& v) { o.format = parse_format(v); },
      "table (the default), json, or prometheus (metrics, for a textfile collector)")
      ->type_name("F");
  sub->add_flag("--watch", o.watch, "show it again every --interval until interrupted, like watch(1)");
  add_parsed_option(
      *sub, "--interval", [&o](const std::string& v) { o.interval = parse_interval(v); },
      "how often --watch shows it (default 2s)")
      ->type_name("D");
  sub->add_flag("--scan", o.scan,
                "without NAME: find the locks with SCAN as well as in the index of held locks, to list those of "
                "redlock versions before 0.2 too (reads the whole keyspace)");
  sub->footer(
      "Example:\n  redlock status                 # every lock, as a table\n"
      "  redlock status deploy --json   # exit 0 when held, 1 when free\n"
      "  redlock status --watch         # redrawn every 2s; Ctrl-C ends it");
  return sub;
}

// break NAME...
CLI::App* add_break(CLI::App& app, BreakOptions& o) {
  auto* sub = app.add_subcommand("break", "free a lock whoever holds it, and wake its waiters (for operators)");
  sub->add_option("NAME", o.names, "the locks to break")->required();
  sub->add_flag("--json", o.json, "print a JSON array of what was broken");
  sub->footer(
      "The holder finds out at its next renewal (exec ends with 74); until then it may still run.\n"
      "Example:\n  redlock break deploy");
  return sub;
}

// exec NAME -- CMD: the options it shares with acquire, and what happens to CMD
// (--on-lost, --kill-after, -c). CMD itself is cut out of argv before CLI11
// reads it (prescan, below).
CLI::App* add_exec(CLI::App& app, ExecOptions& o) {
  auto* sub = app.add_subcommand("exec", "run a command while holding the lock, renewing it in the background");
  add_take_options(*sub, o.take, "the lock's time to live, renewed every ttl/3 (default 30s)");
  sub->add_option("CMD", o.command, "the command and its arguments, after --");
  sub->add_flag("--shared", o.shared, "take a reader's share of a readers/writer lock (writers: no --shared)");
  add_parsed_option(
      *sub, "--on-lost", [&o](const std::string& v) { o.on_lost = parse_on_lost(v); },
      "when the lock is lost: term (SIGTERM, then SIGKILL), kill, ignore")
      ->type_name("POLICY");
  add_parsed_option(
      *sub, "--kill-after", [&o](const std::string& v) { o.kill_after = parse_duration(v, "--kill-after"); },
      "SIGKILL this long after SIGTERM (default 5s, at most ttl/3)")
      ->type_name("D");
  add_parsed_option(
      *sub, "--hold-at-least", [&o](const std::string& v) { o.hold_at_least = parse_duration(v, "--hold-at-least"); },
      "keep the lock until D after it was taken, even if the command ends sooner (cron: one run per schedule)")
      ->type_name("D");
  add_parsed_option(
      *sub, "--max-runtime", [&o](const std::string& v) { o.max_runtime = parse_bound(v, "--max-runtime"); },
      "end the command when it has run for D (SIGTERM, SIGKILL after --kill-after), release, and exit 124")
      ->type_name("D");
  add_parsed_option(
      *sub, "--warn-after", [&o](const std::string& v) { o.warn_after = parse_bound(v, "--warn-after"); },
      "say so on stderr, even with -q, when the command still runs after D; it goes on")
      ->type_name("D");
  add_parsed_option(
      *sub, "--skip-if-ok-within",
      [&o](const std::string& v) { o.skip_if_ok_within = parse_bound(v, "--skip-if-ok-within"); },
      "do not run (busy, 75) when the last ok run of NAME, on any host, ended within D (cron: once per period)")
      ->type_name("D");
  add_parsed_option(
      *sub, "--on-busy", [&o](const std::string& v) { o.replace = parse_on_busy(v); },
      "when the lock is busy: fail (the default) or replace (revoke the holder, then wait for the lock)")
      ->type_name("POLICY");
  sub->add_flag("--no-history", o.no_history, "keep this run out of NAME's history (names unique per run)");
  sub->add_option("-c", o.shell_command, "run STRING with $SHELL -c instead of CMD")->type_name("STRING");
  sub->footer("Example:\n  redlock exec --ttl 2m --wait 30s deploy -- ./deploy.sh \"$ENV\"");
  return sub;
}

// history NAME and overdue NAME --max-age D: the run ledger.
CLI::App* add_history(CLI::App& app, HistoryOptions& o) {
  auto* sub = app.add_subcommand("history", "show the last runs of a name across hosts, newest first");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      *sub, "--limit", [&o](const std::string& v) { o.limit = parse_whole_number(v, "--limit", 1, 1000); },
      "show at most N runs (default 20)")
      ->type_name("N");
  sub->add_flag("--json", o.json, "print a JSON array of runs");
  sub->footer("Exit status: 0 with runs to show, 1 with none.\nExample:\n  redlock history nightly-report --limit 5");
  return sub;
}

CLI::App* add_overdue(CLI::App& app, OverdueOptions& o) {
  auto* sub = app.add_subcommand("overdue", "exit 1 when the last ok run of a name ended longer ago than --max-age");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      *sub, "--max-age", [&o](const std::string& v) { o.max_age = parse_bound(v, "--max-age"); },
      "how long ago the last ok run may have ended (required)")
      ->type_name("D");
  sub->add_flag("--json", o.json, "print the decision as JSON");
  sub->footer("Example:\n  redlock overdue nightly-backup --max-age 26h || alert");
  return sub;
}

// revoke NAME: a graceful break.
CLI::App* add_revoke(CLI::App& app, RevokeOptions& o) {
  auto* sub = app.add_subcommand(
      "revoke", "ask the holder to stop its command and give the lock back (a graceful break, for operators)");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      *sub, "--grace", [&o](const std::string& v) { o.grace = parse_bound(v, "--grace"); },
      "SIGKILL the holder's command D after SIGTERM, and wait that long (default: its own --kill-after; "
      "revoke waits 10s)")
      ->type_name("D");
  sub->footer(
      "Exit status: 0 once the lock is given back (a holder that is not an exec is broken after the grace),\n"
      "75 if it is still held after the grace (redlock break is the next step), 1 if it was not held.\n"
      "Example:\n  redlock revoke nightly-report --grace 30s");
  return sub;
}

// suspend NAME and resume NAME: an operator's hold on new runs.
CLI::App* add_suspend(CLI::App& app, SuspendOptions& o) {
  auto* sub = app.add_subcommand(
      "suspend", "make new acquires and execs of a name busy (75) until resumed; a running holder goes on");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      *sub, "--for", [&o](const std::string& v) { o.lapse_after = parse_bound(v, "--for"); },
      "lift the suspension by itself after D (default: until redlock resume)")
      ->type_name("D");
  sub->add_option("--reason", o.reason, "why, shown to every run it stops and by status (at most 256 bytes)")
      ->type_name("TEXT");
  sub->footer("Example:\n  redlock suspend nightly-report --for 2h --reason 'database maintenance'");
  return sub;
}

CLI::App* add_resume(CLI::App& app, ResumeOptions& o) {
  auto* sub = app.add_subcommand("resume", "lift a suspension: acquires and execs of the name run again");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  sub->footer("Example:\n  redlock resume nightly-report");
  return sub;
}

// doctor: audits the deployment.
CLI::App* add_doctor(CLI::App& app, DoctorOptions& o) {
  auto* sub = app.add_subcommand(
      "doctor", "check the servers before trusting them: reach, rights, eviction, persistence, replicas, clocks");
  add_parsed_option(
      *sub, "--ttl", [&o](const std::string& v) { o.ttl = parse_ttl(v); },
      "the TTL your jobs use, to judge round trips and Sentinel's timing against (default 30s)")
      ->type_name("D");
  sub->add_flag("--json", o.json, "print the checks as a JSON array");
  sub->footer(
      "Exit status: 0 when no check failed, 1 when one did.\nExample:\n  redlock doctor --ttl 2m   # the TTL the jobs "
      "use");
  return sub;
}

// events [NAME...]: a stream of what happens to locks.
CLI::App* add_events(CLI::App& app, EventsOptions& o) {
  auto* sub = app.add_subcommand("events", "follow what happens to locks, one line each, until interrupted");
  sub->add_option("NAME", o.names, "locks to follow (default: every lock under the prefix)");
  sub->add_flag("--json", o.json, "print one JSON object a line");
  sub->footer(
      "Exit status: 0 when ended by SIGINT or SIGTERM.\n"
      "Example:\n  redlock events --json leader   # a standby follows the leader's lock");
  return sub;
}

}  // namespace

namespace {

// redlock's own options and footer, without the subcommands.
std::unique_ptr<CLI::App> top_level(AllOptions& o) {
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
  return app;
}

// Each subcommand, in the order --help lists them.
struct SubcommandDef {
  const char* name;
  Subcommand id;
  CLI::App* (*add)(CLI::App&, AllOptions&);
};
constexpr SubcommandDef k_subcommands[] = {
    {"acquire", Subcommand::k_acquire, [](CLI::App& app, AllOptions& o) { return add_acquire(app, o.acquire); }},
    {"release", Subcommand::k_release, [](CLI::App& app, AllOptions& o) { return add_release(app, o.release); }},
    {"renew", Subcommand::k_renew, [](CLI::App& app, AllOptions& o) { return add_renew(app, o.renew); }},
    {"status", Subcommand::k_status, [](CLI::App& app, AllOptions& o) { return add_status(app, o.status); }},
    {"break", Subcommand::k_break, [](CLI::App& app, AllOptions& o) { return add_break(app, o.brk); }},
    {"exec", Subcommand::k_exec, [](CLI::App& app, AllOptions& o) { return add_exec(app, o.exec); }},
    {"history", Subcommand::k_history, [](CLI::App& app, AllOptions& o) { return add_history(app, o.history); }},
    {"overdue", Subcommand::k_overdue, [](CLI::App& app, AllOptions& o) { return add_overdue(app, o.overdue); }},
    {"revoke", Subcommand::k_revoke, [](CLI::App& app, AllOptions& o) { return add_revoke(app, o.revoke); }},
    {"suspend", Subcommand::k_suspend, [](CLI::App& app, AllOptions& o) { return add_suspend(app, o.suspend); }},
    {"resume", Subcommand::k_resume, [](CLI::App& app, AllOptions& o) { return add_resume(app, o.resume); }},
    {"doctor", Subcommand::k_doctor, [](CLI::App& app, AllOptions& o) { return add_doctor(app, o.doctor); }},
    {"events", Subcommand::k_events, [](CLI::App& app, AllOptions& o) { return add_events(app, o.events); }},
};

}  // namespace

// The whole command line: redlock's own options and footer, then each
// subcommand's.
std::unique_ptr<CLI::App> build_app(AllOptions& o) {
  auto app = top_level(o);
  for (const auto& s : k_subcommands) {
    (void)s.add(*app, o);
  }
  return app;
}

// Reading argv: what CLI11 cannot be left to do (exec's CMD, `redlock help`,
// silence and secrets in its error messages), and its errors as exit 64.
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
    write_line("could not write to standard output");
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
    write_exit_line(fmt::format("{} (see redlock --help)", what), to_int(ExitStatus::k_usage));
  }
  return to_int(ExitStatus::k_usage);
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
}

// Parses redlock's own words; the exit status when that ends the call
// (--help, --version, a usage error).
std::optional<int> parse(CLI::App& app, AllOptions& o, const Prescan& p, int argc, char** argv) {
  try {
    parse_own_words(app, o, p, argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code() == 0 ? print_requested(app, e) : report_usage_error(app, e, p.silent, argc, argv);
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
  for (const auto& s : k_subcommands) {
    if (app.got_subcommand(s.name)) {
      return s.id;
    }
  }
  return std::nullopt;
}

// The common case, at a fraction of the cost: argv names a subcommand, and
// only that one is built in full (the others are bare names, so that CLI11
// tells the words apart as it would with all of them) and parsed, printing
// nothing. Anything else (`help`, --help, --version, any error, another
// subcommand among the words) returns nothing, and the whole command line
// is then built and read from the start: what it prints is always the whole
// command line's.
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
  auto app = top_level(o);
  const std::string wanted = subcommand_in(*app, argc, argv);
  const SubcommandDef* def = nullptr;
  for (const auto& s : k_subcommands) {
    def = wanted == s.name ? &s : def;
  }
  if (def == nullptr) {
    return std::nullopt;
  }
  for (const auto& s : k_subcommands) {
    if (&s == def) {
      (void)s.add(*app, o);
    } else {
      (void)app->add_subcommand(s.name);
    }
  }
  const Prescan p = prescan(*app, o.exec, argc, argv);
  try {
    parse_own_words(*app, o, p, argc, argv);
  } catch (const std::exception&) {
    return std::nullopt;  // said by the whole command line
  }
  if (app->get_subcommands().size() != 1 || !app->got_subcommand(def->name)) {
    return std::nullopt;
  }
  return CommandLine{std::nullopt, subcommand_of(*app)};
}

}  // namespace

CommandLine read_command_line(AllOptions& o, int argc, char** argv) {
  if (std::optional<CommandLine> quick = read_quickly(o, argc, argv)) {
    return *quick;
  }
  o = AllOptions{};  // whatever the quick reading filled in
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
