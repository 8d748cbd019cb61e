#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/policy.hpp"
#include "util/cancel.hpp"
#include "util/duration.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace CLI {
class App;
}

namespace redlock::cli {

// One options struct and one run_X() per subcommand; each run_X validates
// everything before the first network traffic and returns the exit status.
// `stop` (the stop signals) cuts every wait for Redis short.
// The options themselves (flags, help, how a value is read) are defined in
// cli/line/options.cpp, the one file that knows CLI11.

// Options every subcommand accepts, before or after the subcommand's name
// (each subcommand's options are defined in cli/line/options.cpp).
struct GlobalOptions {
  std::vector<std::string> redis;  // --redis, repeatable
  std::optional<std::string> prefix;
  // Unset: the configuration file's, else 1s (cli/setup/servers.cpp).
  std::optional<Millis> connect_timeout;
  std::optional<Millis> timeout;  // --redis-timeout
  std::string legacy_timeout;     // --timeout before the subcommand (the round-trip timeout before 0.2)
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  bool insecure = false;
  std::string password_file;
  std::optional<int> min_replicas;  // unset: the configuration file's, else 0
  int quiet = 0;                    // -q: once silences busy and waiting; twice (-qq) everything
  bool silent = false;              // --silent: -qq
  bool verbose = false;
  // How stderr's lines are written (--log-format, else $REDLOCK_LOG_FORMAT),
  // and whether they go to syslog too (--syslog, --syslog-facility, else
  // $REDLOCK_SYSLOG): read by cli::main before the subcommand runs.
  std::optional<LogFormat> log_format;
  bool syslog = false;
  std::optional<int> syslog_facility;
};

// How acquire and exec take a lock: the options they share.
struct TakeOptions {
  std::vector<std::string> names;  // one or more: several are taken as one lock
  Millis ttl{30'000};
  std::optional<Millis> wait = Millis(0);  // nullopt: forever
  bool nonblock = false;                   // -n: one try, whatever --wait says
  bool exclusive = false;                  // -x: the default, said out loud (refused with --shared, --limit)
  std::string token;
  int limit = 1;
  ExitCode conflict_exit_code = ExitStatus::k_busy;
  bool unfair = false;
  Millis jitter{0};                   // a random delay below this before the first try (0: none)
  int max_waiters = 0;                // busy at once when this many wait in line (0: no bound)
  std::optional<Millis> stale_after;  // a busy line even under -q when the holder has held it longer
  std::string note;                   // --note: kept with the lock for status
};

struct AcquireOptions {
  TakeOptions take;
  bool shared = false;
  bool json = false;
  std::optional<long long> while_pid;  // --while-pid: a keeper renews the lock while this process lives
};
ExitCode run_acquire(const AcquireOptions& o, const GlobalOptions& g, const Cancel& stop);

struct ReleaseOptions {
  std::vector<std::string> names;
  std::string token;
  Millis hold_at_least{0};  // 0: none
};
ExitCode run_release(const ReleaseOptions& o, const GlobalOptions& g, const Cancel& stop);

struct RenewOptions {
  std::vector<std::string> names;
  std::string token;
  Millis ttl{30'000};
  bool json = false;
};
ExitCode run_renew(const RenewOptions& o, const GlobalOptions& g, const Cancel& stop);

enum class StatusFormat { k_table, k_json, k_prometheus };
enum class StatusSort { k_name, k_age, k_ttl };
// The columns of status's table, in their default order.
enum class StatusColumn { k_name, k_state, k_host, k_pid, k_age, k_ttl, k_fence, k_count, k_waiting, k_command };
// Their names, as the table's header spells them (in StatusColumn's order).
inline constexpr std::array<std::string_view, 10> k_status_columns = {"NAME", "STATE", "HOST",  "PID",     "AGE",
                                                                      "TTL",  "FENCE", "COUNT", "WAITING", "COMMAND"};
struct StatusOptions {
  std::vector<std::string> names;  // names, and globs (with * ? or [) matched against held locks' names
  bool json = false;
  std::optional<StatusFormat> format;  // --format (none: table, or json with --json)
  bool watch = false;                  // redraw every `interval` until a stop signal
  std::optional<Millis> interval;      // --watch's period (none: 2s)
  bool scan = false;                   // list by SCAN too, not only from the index of held locks
  bool wide = false;                   // on a terminal: every column, lines unclipped
  std::optional<StatusSort> sort;      // none: names in the order given, then the rest by name
  std::vector<StatusColumn> columns;   // -o: the table's columns, in this order (none: the default ones)
};
ExitCode run_status(const StatusOptions& o, const GlobalOptions& g, const Cancel& stop);

struct BreakOptions {
  std::vector<std::string> names;
  bool json = false;
  // --grace: break gracefully, as revoke did: ask the holder's exec to stop
  // and give the lock back, and break it after this if it did not (one name).
  std::optional<Millis> grace;
};
ExitCode run_break(const BreakOptions& o, const GlobalOptions& g, const Cancel& stop);

struct ExecOptions {
  TakeOptions take;
  bool shared = false;
  exec::OnLost on_lost = exec::OnLost::k_term;
  Millis kill_after{5000};
  Millis hold_at_least{0};                  // 0: none
  std::optional<Millis> max_runtime;        // CMD is ended (124) when it runs this long
  std::optional<Millis> warn_after;         // one line on stderr when CMD still runs at this
  std::optional<Millis> skip_if_ok_within;  // busy when the last ok run ended within it
  bool no_history = false;                  // keep this run out of the run ledger
  bool replace = false;                     // --on-busy replace: revoke the holder, then wait
  std::string shell_command;                // -c STRING
  std::vector<std::string> command;         // after --
  bool saw_double_dash = false;             // set by the caller from argv
  std::string dashes_hint;                  // argv with -- before CMD, when CMD came without it
};
ExitCode run_exec(const ExecOptions& o, const GlobalOptions& g, const Cancel& stop);

struct HistoryOptions {
  std::string name;
  std::optional<long long> limit;  // none: 20
  bool json = false;
  // --max-age: whether the last ok run ended within it, as overdue said
  // (0 fresh, 1 overdue or never), instead of the runs.
  std::optional<Millis> max_age;
};
ExitCode run_history(const HistoryOptions& o, const GlobalOptions& g, const Cancel& stop);

// overdue NAME --max-age D: the older spelling of history --max-age.
struct OverdueOptions {
  std::string name;
  std::optional<Millis> max_age;  // required
  bool json = false;
};
ExitCode run_overdue(const OverdueOptions& o, const GlobalOptions& g, const Cancel& stop);

struct SuspendOptions {
  std::string name;
  std::optional<Millis> lapse_after;  // --for: lapses by itself after this
  std::string reason;
};
ExitCode run_suspend(const SuspendOptions& o, const GlobalOptions& g, const Cancel& stop);

// revoke NAME [--grace D]: the older spelling of break --grace.
struct RevokeOptions {
  std::string name;
  std::optional<Millis> grace;  // --grace: how long the holder has (default: its own --kill-after)
};
ExitCode run_revoke(const RevokeOptions& o, const GlobalOptions& g, const Cancel& stop);

struct ResumeOptions {
  std::string name;
};
ExitCode run_resume(const ResumeOptions& o, const GlobalOptions& g, const Cancel& stop);
struct DoctorOptions {
  Millis ttl{30'000};  // the TTL the jobs use, for the round-trip and Sentinel checks
  bool json = false;
};
ExitCode run_doctor(const DoctorOptions& o, const GlobalOptions& g, const Cancel& stop);
struct EventsOptions {
  std::vector<std::string> names;  // none: every lock under the prefix
  bool json = false;
};
ExitCode run_events(const EventsOptions& o, const GlobalOptions& g, const Cancel& stop);

// Every subcommand's options, as the command line fills them.
struct AllOptions {
  GlobalOptions global;
  AcquireOptions acquire;
  ReleaseOptions release;
  RenewOptions renew;
  StatusOptions status;
  BreakOptions brk;
  ExecOptions exec;
  HistoryOptions history;
  OverdueOptions overdue;
  SuspendOptions suspend;
  ResumeOptions resume;
  RevokeOptions revoke;
  DoctorOptions doctor;
  EventsOptions events;
};

// The whole command-line definition (also read by the tests that keep the
// man page and completions in step with it).
[[nodiscard]] std::unique_ptr<CLI::App> build_app(AllOptions& o);

enum class Subcommand {
  k_acquire,
  k_release,
  k_renew,
  k_status,
  k_break,
  k_exec,
  k_history,
  k_overdue,
  k_revoke,
  k_suspend,
  k_resume,
  k_doctor,
  k_events
};

// What reading argv decided: the subcommand to run with the options it
// filled in, or an exit status when reading it ended the call (--help and
// --version print and give 0, or 74 if standard output fails; a usage
// error prints one line, unless -qq or --silent, and gives 64).
struct CommandLine {
  std::optional<int> exit_now;
  std::optional<Subcommand> subcommand;  // none: none was given
};
[[nodiscard]] CommandLine read_command_line(AllOptions& o, int argc, char** argv);
// The same with the whole command line built, as --help and a usage error
// build it: what read_command_line's quick reading must always agree with.
[[nodiscard]] CommandLine read_whole_command_line(AllOptions& o, int argc, char** argv);

// Parses argv, runs the subcommand, and turns every error into one line on
// stderr and an exit status; nothing escapes it.
int main(int argc, char** argv) noexcept;

// The text of --version: redlock's, hiredis's and OpenSSL's versions.
[[nodiscard]] std::string version_text();

}  // namespace redlock::cli
