// The command line's definition: every subcommand's options, each with its
// help and the parser of its value, and how the help is laid out. Reading
// argv with it is cli/line/command_line.cpp. These two are the files that include
// CLI11 (cli/line/options.hpp): each file that includes it costs seconds of
// compile and its own copies of CLI11's static objects, built at every
// start of redlock. The subcommands' files get their options as plain
// structs (cli/commands.hpp).

#include "cli/line/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/line/global_options.hpp"
#include "cli/line/option_values.hpp"
#include "cli/line/usage.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/number.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

// The words the quick reading reads, while it builds its subcommand (null
// otherwise: every option is built).
const std::vector<std::string_view>* g_quick_words = nullptr;

// Whether one of `flags` ("-w,--wait") could be named by one of `words`:
// "--wait" as itself or "--wait=..."; "-w" by any one-dash word with a 'w'
// in it (-w5s, -nw). More than CLI11 would read as the option, never less:
// an option argv names but that was not built would be CLI11's unknown
// option, and the whole command line would be read instead.
bool named_in(std::string_view flags, const std::vector<std::string_view>& words) {
  while (!flags.empty()) {
    const size_t comma = std::min(flags.find(','), flags.size());
    const std::string_view name = flags.substr(0, comma);
    flags.remove_prefix(std::min(comma + 1, flags.size()));
    for (const std::string_view w : words) {
      const bool long_name = name.size() > 2 && name[1] == '-';
      if (long_name ? (w.substr(0, name.size()) == name && (w.size() == name.size() || w[name.size()] == '='))
                    : (name.size() == 2 && w.size() > 1 && w[0] == '-' && w[1] != '-' &&
                       w.find(name[1], 1) != std::string_view::npos)) {
        return true;
      }
    }
  }
  return false;
}

// An option whose value `parse` turns into its typed value as the command
// line is read: a bad value is a UsageError in redlock's own words (exit 64),
// never CLI11's. Given twice, the last one counts, as with getopt.
// While the quick reading builds its subcommand, the options such an
// option needs are only those argv names (see QuickWords): one that none
// of argv's words could name is not built, and what it is given (its
// type's name, its group) goes to a stand-in.
CLI::Option* add_parsed_option(CLI::App& app, const std::string& flags,
                               const std::function<void(const std::string&)>& parse, const std::string& help) {
  if (g_quick_words != nullptr && !named_in(flags, *g_quick_words)) {
    static CLI::App unread_app;
    static CLI::Option* const unread = unread_app.add_option("--unread");
    return unread;
  }
  return app.add_option_function<std::string>(flags, parse, help)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// Options every subcommand accepts, before or after the subcommand's name
// (cli/line/global_options.cpp, which the quick reading reads without CLI11).
void add_global_options(CLI::App& app, GlobalOptions& g) {
  for (const GlobalOptionDef& def : global_option_defs()) {
    const auto apply = def.apply;
    CLI::Option* opt = nullptr;
    if (def.type_name == nullptr) {
      opt = app.add_flag_function(
          def.names,
          [&g, apply](std::int64_t times) {
            for (std::int64_t k = 0; k < times; ++k) {
              apply(g, "");
            }
          },
          def.help);
    } else if (def.repeats) {
      opt = app.add_option_function<std::vector<std::string>>(
                   def.names,
                   [&g, apply](const std::vector<std::string>& values) {
                     for (const std::string& v : values) {
                       apply(g, v);
                     }
                   },
                   def.help)
                ->allow_extra_args(false);  // one value each: `release -r URL NAME` must leave NAME alone
    } else {
      opt = add_parsed_option(
          app, def.names, [&g, apply](const std::string& v) { apply(g, v); }, def.help);
    }
    if (def.type_name != nullptr) {
      opt->type_name(def.type_name);
    }
    if (*def.help == '\0') {
      opt->group("");
    }
  }
}

// The rarer options of a subcommand: its --help lists their names only, on
// a few lines (HelpFormatter); its man page says what each does.
constexpr const char* k_more_options = "More options (see its man page)";

// How acquire and exec take a lock: the options they share.
void add_take_options(CLI::App& sub, TakeOptions& o, const char* ttl_help) {
  sub.add_option("NAME", o.names, "the lock's name; several names are taken as one lock, all or nothing")->required();
  add_parsed_option(
      sub, "--ttl", [&o](const std::string& v) { o.ttl = parse_ttl(v); }, ttl_help)
      ->type_name("D");
  add_parsed_option(
      sub, "-w,--wait,--timeout", [&o](const std::string& v) { o.wait = parse_wait(v, "--wait"); },
      "how long to wait for a held lock: 0 (one try, the default), 30s, inf (or forever); as flock -w")
      ->type_name("D");
  sub.add_flag("-n,--nonblock", o.nonblock, "one try, do not wait (the default; as flock -n)")->group(k_more_options);
  sub.add_option("--token", o.token, "re-enter the lock if this token holds it (default: $REDLOCK_TOKEN)")
      ->type_name("T")
      ->group(k_more_options);
  add_parsed_option(
      sub, "--limit", [&o](const std::string& v) { o.limit = parse_whole_number(v, "--limit", 1, 1'000'000); },
      "a counting semaphore: up to N holders at once (default 1, a plain lock)")
      ->type_name("N");
  add_parsed_option(
      sub, "-E,--conflict-exit-code",
      [&o](const std::string& v) {
        o.conflict_exit_code = ExitCode::passed_on(parse_whole_number(v, "--conflict-exit-code", 0, 255));
      },
      "exit status when the lock is busy (default 75)")
      ->type_name("N");
  sub.add_flag("-x,--exclusive", o.exclusive, "take the lock alone (the default; as flock -x)")->group(k_more_options);
  sub.add_flag("--unfair", o.unfair,
               "race for the lock when it frees instead of waiting in line (first come first served)")
      ->group(k_more_options);
  add_parsed_option(
      sub, "--jitter", [&o](const std::string& v) { o.jitter = parse_duration(v, "--jitter"); },
      "sleep a random time below D before the first try, so that a fleet's cron jobs do not always start in "
      "the same order")
      ->type_name("D")
      ->group(k_more_options);
  add_parsed_option(
      sub, "--max-waiters",
      [&o](const std::string& v) { o.max_waiters = parse_whole_number(v, "--max-waiters", 1, 1'000'000); },
      "busy at once, without joining the line, when N already wait in it (no pile-up of runs)")
      ->type_name("N")
      ->group(k_more_options);
  add_parsed_option(
      sub, "--stale-after", [&o](const std::string& v) { o.stale_after = parse_bound(v, "--stale-after"); },
      "when busy, say so even with -q if the holder has held the lock longer than D: it may be stuck")
      ->type_name("D")
      ->group(k_more_options);
  sub.add_option("--note", o.note,
                 "keep TEXT with the lock for status (the leader's address, a version; at most 256 bytes)")
      ->type_name("TEXT")
      ->group(k_more_options);
}

// A subcommand that acts on a lock held by a token (release, renew): its
// NAME and --token, and `example` as its help's footer.
CLI::App* add_token_subcommand(CLI::App& app, const char* verb, const char* description, const char* example,
                               std::vector<std::string>& names, std::string& token) {
  auto* sub = app.add_subcommand(verb, description);
  sub->add_option("NAME", names, "the lock's name (several: each, as one lock)")->required();
  sub->add_option("--token", token, "the holder's token (default: $REDLOCK_TOKEN)")->type_name("T");
  sub->footer(fmt::format("Example:\n  {}", example));
  return sub;
}

// acquire NAME: the options it shares with exec, and its own.
CLI::App* add_acquire(CLI::App& app, AcquireOptions& o) {
  auto* sub = app.add_subcommand("acquire", "take the lock and print its token");
  add_take_options(*sub, o.take, "how long the lock lives unless renewed (default 30s)");
  sub->add_flag("-s,--shared", o.shared,
                "take a reader's share of a readers/writer lock; renew and release it by its token");
  sub->add_flag("--json", o.json, "print token, fence, ttl_ms and validity_ms as JSON");
  add_parsed_option(
      *sub, "--while-pid",
      [&o](const std::string& v) { o.while_pid = parse_whole_number(v, "--while-pid", 1, 4'194'304); },
      "return at once and keep the lock while process PID lives ($$ in a script): renewed in the background, "
      "released when PID exits, PID sent SIGTERM if it is lost; release --token ends it")
      ->type_name("PID");
  sub->footer(
      "Examples:\n  tok=$(redlock acquire --ttl 60s --wait 10s migrate) || exit 1\n"
      "  tok=$(redlock acquire --while-pid $$ migrate) || exit 1");
  return sub;
}

// release NAME --token T.
CLI::App* add_release(CLI::App& app, ReleaseOptions& o) {
  auto* sub = add_token_subcommand(app, "release", "release the lock held by a token (one level of re-entry)",
                                   "redlock release --token \"$tok\" migrate", o.names, o.token);
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
                                   o.names, o.token);
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
  sub->add_option("NAME", o.names,
                  "locks to show, with their waiters; a GLOB ('deploy-*', with * ? or [...]) shows the held "
                  "locks it matches (default: every lock under the prefix)");
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
  add_parsed_option(
      *sub, "--sort", [&o](const std::string& v) { o.sort = parse_sort(v); },
      "order the locks by name, age (held longest first) or ttl (soonest to expire first)")
      ->type_name("KEY");
  sub->add_flag("--wide", o.wide, "on a terminal too: FENCE and COUNT, and lines as long as they need");
  // As ps -o: one list per -o (never the next word: `status -o name deploy`
  // names the lock deploy), and several -o add up.
  sub->add_option_function<std::vector<std::string>>(
         "-o,--columns", [&o](const std::vector<std::string>& lists) { o.columns = parse_columns(lists); },
         "the table's columns to show, in this order: a comma-separated LIST of NAME, STATE, HOST, PID, AGE, TTL, "
         "FENCE, COUNT, WAITING, COMMAND (any case), as ps -o")
      ->allow_extra_args(false)
      ->type_name("LIST");
  sub->add_flag("--scan", o.scan,
                "without NAME: find the locks with SCAN as well as in the index of held locks, to list those of "
                "redlock versions before 0.2 too (reads the whole keyspace)");
  sub->footer(
      "Example:\n  redlock status                 # every lock, as a table\n"
      "  redlock status deploy --json   # exit 0 when held, 1 when free\n"
      "  redlock status 'deploy-*' --sort age\n"
      "  redlock status -o name,host,pid,ttl\n"
      "  redlock status --watch         # redrawn every 2s; Ctrl-C ends it");
  return sub;
}

// break NAME..., and break NAME --grace D (a graceful break, once revoke).
CLI::App* add_break(CLI::App& app, BreakOptions& o) {
  auto* sub = app.add_subcommand(
      "break",
      "free a lock whoever holds it, and wake its waiters; with --grace, ask the holder to stop and give it back "
      "first (for operators)");
  sub->add_option("NAME", o.names, "the locks to break (one with --grace)")->required();
  sub->add_flag("--json", o.json, "print a JSON array of what was broken");
  add_parsed_option(
      *sub, "--grace", [&o](const std::string& v) { o.grace = parse_bound(v, "--grace"); },
      "ask the holder's exec to stop its command and give the lock back: SIGTERM, SIGKILL D later; break the "
      "holders that did not leave after D")
      ->type_name("D");
  sub->footer(
      "The holder finds out at its next renewal (exec ends with 74); until then it may still run.\n"
      "Exit status with --grace: 0 once the lock is given back (a holder that is not an exec is broken after the\n"
      "grace), 75 if it is still held after the grace, 1 if it was not held.\n"
      "Example:\n  redlock break deploy\n  redlock break nightly-report --grace 30s");
  return sub;
}

// exec NAME -- CMD: the options it shares with acquire, and what happens to CMD
// (--on-lost, --kill-after, -c). CMD itself is cut out of argv before CLI11
// reads it (prescan, below).
CLI::App* add_exec(CLI::App& app, ExecOptions& o) {
  auto* sub = app.add_subcommand("exec", "run a command while holding the lock, renewing it in the background");
  add_take_options(*sub, o.take, "the lock's time to live, renewed every ttl/3 (default 30s)");
  sub->add_option("CMD", o.command, "the command and its arguments, after --");
  sub->add_flag("-s,--shared", o.shared, "take a reader's share of a readers/writer lock (writers: no --shared)");
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
      "keep the lock until D after it was taken, even if the command ends sooner (cron)")
      ->type_name("D");
  add_parsed_option(
      *sub, "--max-runtime", [&o](const std::string& v) { o.max_runtime = parse_bound(v, "--max-runtime"); },
      "end the command after D (SIGTERM, then SIGKILL), release, and exit 124")
      ->type_name("D");
  add_parsed_option(
      *sub, "--warn-after", [&o](const std::string& v) { o.warn_after = parse_bound(v, "--warn-after"); },
      "say so on stderr, even with -q, when the command still runs after D; it goes on")
      ->type_name("D");
  add_parsed_option(
      *sub, "--skip-if-ok-within",
      [&o](const std::string& v) { o.skip_if_ok_within = parse_bound(v, "--skip-if-ok-within"); },
      "do not run (busy, 75) when the last ok run of NAME ended within D (cron)")
      ->type_name("D");
  add_parsed_option(
      *sub, "--on-busy", [&o](const std::string& v) { o.replace = parse_on_busy(v); },
      "when the lock is busy: fail (the default) or replace (ask the holder to give it back, as break --grace "
      "does, then wait for the lock)")
      ->type_name("POLICY")
      ->group(k_more_options);
  sub->add_flag("--no-history", o.no_history, "keep this run out of NAME's history (names unique per run)")
      ->group(k_more_options);
  sub->add_option("-c", o.shell_command, "run STRING with $SHELL -c instead of CMD")->type_name("STRING");
  sub->footer(
      "The rest of a script under the lock, at its top:\n"
      "  [ -n \"$REDLOCK_NAME\" ] || exec redlock exec --ttl 30s NAME -- \"$0\" \"$@\"\n"
      "Example:\n  redlock exec --ttl 2m --wait 30s deploy -- ./deploy.sh \"$ENV\"");
  return sub;
}

// The help of --max-age, history's and its older spelling overdue's.
constexpr const char* k_max_age_help = "how long ago the last ok run may have ended";

// history NAME, and history NAME --max-age D (once overdue): the run ledger.
CLI::App* add_history(CLI::App& app, HistoryOptions& o) {
  auto* sub = app.add_subcommand(
      "history",
      "show the last runs of a name across hosts, newest first; with --max-age, exit 1 when the last ok run ended "
      "longer ago");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      *sub, "--limit", [&o](const std::string& v) { o.limit = parse_whole_number(v, "--limit", 1, 1000); },
      "show at most N runs (default 20)")
      ->type_name("N");
  add_parsed_option(
      *sub, "--max-age", [&o](const std::string& v) { o.max_age = parse_bound(v, "--max-age"); },
      std::string(k_max_age_help) + ": say whether it did instead of showing the runs (a dead man's switch)")
      ->type_name("D");
  sub->add_flag("--json", o.json, "print a JSON array of runs (with --max-age: the decision)");
  sub->footer(
      "Exit status: 0 with runs to show, 1 with none; with --max-age, 0 when the last ok run ended within it,\n"
      "1 when longer ago or never.\n"
      "Example:\n  redlock history nightly-report --limit 5\n  redlock history nightly-backup --max-age 26h || alert");
  return sub;
}

// overdue NAME --max-age D: the older spelling of history --max-age.
CLI::App* add_overdue(CLI::App& app, OverdueOptions& o) {
  auto* sub = app.add_subcommand(
      "overdue", "older spelling of history --max-age: exit 1 when the last ok run of a name ended longer ago");
  sub->add_option("NAME", o.name, "the lock's name")->required();
  add_parsed_option(
      *sub, "--max-age", [&o](const std::string& v) { o.max_age = parse_bound(v, "--max-age"); },
      std::string(k_max_age_help) + " (required)")
      ->type_name("D");
  sub->add_flag("--json", o.json, "print the decision as JSON");
  sub->footer("Example:\n  redlock overdue nightly-backup --max-age 26h || alert");
  return sub;
}

// revoke NAME: the older spelling of break --grace.
CLI::App* add_revoke(CLI::App& app, RevokeOptions& o) {
  auto* sub = app.add_subcommand(
      "revoke", "older spelling of break --grace: ask the holder to stop its command and give the lock back");
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

// redlock's help: wrapped to 80 columns; a subcommand's shows its own
// options, and one line that says where the global ones are (it accepts
// them after its name as well).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return wrap_help(CLI::Formatter::make_help(app, std::move(name), mode), get_column_width());
  }

  std::string make_footer(const CLI::App* app) const override {
    if (app->get_parent() == nullptr) {
      return CLI::Formatter::make_footer(app);
    }
    return "Global options (-r URL, --prefix, -q, -v, ...): see redlock --help\n" + CLI::Formatter::make_footer(app);
  }

  // The rarer options by name only, one line that wrap_help wraps.
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
    if (group != k_more_options) {
      return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
    }
    std::string line;
    for (const CLI::Option* opt : opts) {
      line +=
          fmt::format("{}{}{}", line.empty() ? "" : ", ", opt->get_name(false, true),
                      opt->get_type_size_max() > 0 && !opt->get_type_name().empty() ? " " + opt->get_type_name() : "");
    }
    return fmt::format("{}:\n  {}\n", group, line);
  }
};

}  // namespace

std::unique_ptr<CLI::App> top_level(AllOptions& o, bool with_global_options) {
  auto app =
      std::make_unique<CLI::App>("redlock: distributed locks on Redis for scripts, cron jobs and operators", "redlock");
  app->formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which inherit it
  app->set_version_flag("--version", std::function<std::string()>(version_text));
  app->require_subcommand(1);
  app->fallthrough();
  // Given twice, an option's last value counts (as with getopt), so a
  // wrapper's --ttl can be overridden by adding another.
  app->option_defaults()->take_last();
  if (with_global_options) {
    add_global_options(*app, o.global);
  }
  app->footer(
      "Examples:\n"
      "  redlock exec --ttl 2m nightly-report -- /opt/report.sh\n"
      "  tok=$(redlock acquire --ttl 60s migrate)\n"
      "  redlock release --token \"$tok\" migrate\n"
      "  redlock status\n"
      "Older spellings: revoke (break --grace), overdue (history --max-age)\n"
      "See redlock(1) for exit statuses and safety notes.\n"
      "Exit: 0 ok, 1 no, 64 usage, 69 no Redis, 74 lost, 75 busy, 76 error, 77 refused");
  return app;
}

QuickWords::QuickWords(const std::vector<std::string_view>& words) {
  g_quick_words = &words;
}

QuickWords::~QuickWords() {
  g_quick_words = nullptr;
}

// Each subcommand with its options, for the table of subcommands (cli/app.cpp).
CLI::App* add_acquire(CLI::App& app, AllOptions& o) {
  return add_acquire(app, o.acquire);
}
CLI::App* add_release(CLI::App& app, AllOptions& o) {
  return add_release(app, o.release);
}
CLI::App* add_renew(CLI::App& app, AllOptions& o) {
  return add_renew(app, o.renew);
}
CLI::App* add_status(CLI::App& app, AllOptions& o) {
  return add_status(app, o.status);
}
CLI::App* add_break(CLI::App& app, AllOptions& o) {
  return add_break(app, o.brk);
}
CLI::App* add_exec(CLI::App& app, AllOptions& o) {
  return add_exec(app, o.exec);
}
CLI::App* add_history(CLI::App& app, AllOptions& o) {
  return add_history(app, o.history);
}
CLI::App* add_overdue(CLI::App& app, AllOptions& o) {
  return add_overdue(app, o.overdue);
}
CLI::App* add_revoke(CLI::App& app, AllOptions& o) {
  return add_revoke(app, o.revoke);
}
CLI::App* add_suspend(CLI::App& app, AllOptions& o) {
  return add_suspend(app, o.suspend);
}
CLI::App* add_resume(CLI::App& app, AllOptions& o) {
  return add_resume(app, o.resume);
}
CLI::App* add_doctor(CLI::App& app, AllOptions& o) {
  return add_doctor(app, o.doctor);
}
CLI::App* add_events(CLI::App& app, AllOptions& o) {
  return add_events(app, o.events);
}

// The whole command line: redlock's own options and footer, then each
// subcommand's.
std::unique_ptr<CLI::App> build_app(AllOptions& o) {
  auto app = top_level(o);
  for (const auto& s : subcommand_defs()) {
    s.add(*app, o)->group(s.group);
  }
  return app;
}

}  // namespace redlock::cli
