#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace redlock {

// -qq/--silent: 0, -q: 1, default: 2, -v: 3. Set once by main() before
// anything logs. -q is flock -n's quiet: a busy lock is not news, but an
// error (what cron must mail) still gets its line.
enum class Verbosity { k_silent = 0, k_quiet = 1, k_normal = 2, k_verbose = 3 };
Verbosity& verbosity();

// How the lines on stderr are written: as text ("redlock: …", the
// default), or each as one JSON object (--log-format json) for log
// pipelines; and whether each also goes to syslog (--syslog: /dev/log, in
// syslog(3)'s format), with the priority of its level. Set by main() before
// anything logs; the text default costs nothing more than before.
//
// No sink ever waits: a line that stderr (a pipe or socket nobody reads, a
// stopped terminal) or syslog (a daemon whose queue is full) cannot take at
// once is dropped and counted, and the count said on the next line that
// gets through, or at the end (say_dropped_lines()). A log line never
// decides when a lock is released.
enum class LogFormat { k_text, k_json };
struct LogSinks {
  LogFormat format = LogFormat::k_text;
  bool syslog = false;
  int facility = 8;  // LOG_USER
};
void set_log_sinks(const LogSinks& sinks) noexcept;
[[nodiscard]] const LogSinks& log_sinks() noexcept;

// A line's level: its JSON "level" and its syslog priority.
enum class LogLevel { k_error, k_warning, k_notice, k_debug };

// The syslog facility named `name` (user, daemon, local0 … local7, …), or
// nullopt.
[[nodiscard]] std::optional<int> syslog_facility_named(std::string_view name);

// A field that every JSON line carries from now on (name, fence): what the
// command is about, where known. `number`: written as a JSON number. The
// text lines are unchanged.
void set_log_field(const std::string& key, const std::string& value, bool number = false) noexcept;
// The status redlock will exit with, once a line says it (a lost lock's
// 74, --max-runtime's 124, a stop's 128+N): every JSON line from now on
// carries it as `exit`, so that a log system sees the end in the line
// that says why.
void set_exit_field(int status) noexcept;

// Makes broken standard streams harmless, before anything else runs:
// SIGPIPE is ignored (a closed pipe is a failed write, not a death), and a
// closed descriptor 0, 1 or 2 is held by /dev/null opened the wrong way
// round, so that writes still fail as they would have, but no socket can
// take its number and receive log lines meant for a person.
void protect_standard_streams() noexcept;

// Whether SIGPIPE was ignored before protect_standard_streams() ignored it
// (redlock was started so): what CMD gets back.
[[nodiscard]] bool sigpipe_ignored_at_start() noexcept;

// Writes `text` to stderr, as much as it takes at once. Never throws,
// never waits and never reports: a full disk, a closed stderr or a reader
// that stopped reading must not change what redlock does, when, or the
// status it exits with. What could not be written is counted as a line
// dropped.
void write_stderr(std::string_view text) noexcept;

// The same, uncounted, for a signal handler (async-signal-safe): false,
// with errno (EAGAIN: no room now), if not all of `text` was written.
[[nodiscard]] bool write_stderr_at_once(std::string_view text) noexcept;

// Says how many lines stderr and syslog could not take at once, if any
// (syslog's on stderr, stderr's on syslog and stderr), once: the end of
// the command. Not under -qq.
void say_dropped_lines() noexcept;

// Writes `text` (output that was asked for) to stdout and flushes it.
// Returns false if it could not all be written.
[[nodiscard]] bool write_stdout(std::string_view text) noexcept;

// Registers a secret that redlock sends to Redis (a password): no line on
// stderr shows it, even where a server's error echoes it back.
void keep_secret(std::string_view secret) noexcept;

// A server's words (an error reply) with every secret kept reading "***":
// a server without AUTH echoes the password it was sent.
[[nodiscard]] std::string mask_secrets(std::string_view server_text);

// Secrets at least this long are masked in every line, wherever they come from.
inline constexpr size_t k_masked_anywhere = 6;

// `text` fit to be one line on stderr: each secret of k_masked_anywhere
// bytes or more reads "***", and control characters and bytes that are not
// UTF-8 are escaped, so that a server's words can neither start a second
// line nor drive the terminal.
[[nodiscard]] std::string one_line(std::string_view text);

// Writes "redlock: ", one_line(text) and a newline to stderr (or the JSON
// object of the line at `level`; and to syslog). Never throws.
void write_line(std::string_view text, LogLevel level = LogLevel::k_warning) noexcept;

// The same for a line already made fit by one_line() (`shown`).
void write_shown_line(std::string_view shown, LogLevel level) noexcept;

// The bytes a line would be written as on stderr ("redlock: …\n", or its
// JSON object), for a signal handler that may not format: made ahead.
[[nodiscard]] std::string line_as_written(std::string_view text, LogLevel level, std::optional<int> exit);

// The line that ends the command with exit status `status` (an error; a
// busy lock's line is a notice): its JSON carries "exit".
void write_exit_line(std::string_view text, int status, LogLevel level = LogLevel::k_error) noexcept;

// A line on stderr, prefixed "redlock: ", when the verbosity is at least
// `least`. Never throws: a line is not worth dying for (only std::bad_alloc
// can fail here).
template <typename... Args>
void log_at(Verbosity least, fmt::format_string<Args...> f, Args&&... args) noexcept {
  if (verbosity() >= least) {
    try {
      write_line(fmt::format(f, std::forward<Args>(args)...), least == Verbosity::k_quiet    ? LogLevel::k_warning
                                                              : least == Verbosity::k_normal ? LogLevel::k_notice
                                                                                             : LogLevel::k_debug);
    } catch (...) {
    }
  }
}

// A line on stderr unless -qq: what cron must mail.
template <typename... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) noexcept {
  log_at(Verbosity::k_quiet, f, std::forward<Args>(args)...);
}

// A line for what -q silences: the busy outcome and the waiting chatter.
template <typename... Args>
void log_notice(fmt::format_string<Args...> f, Args&&... args) noexcept {
  log_at(Verbosity::k_normal, f, std::forward<Args>(args)...);
}

// Warnings about what did not stop the command: a server of a Redlock that
// refuses redlock while the others make a quorum. A command that fails says
// so in one line, which already names such servers; so these lines are
// held back, said once the command has what it asked for (even under -q:
// the quorum then rests on the others; not under -qq) and dropped when it
// fails (shown with -v only). Any thread may call these.
void hold_warning(std::string line) noexcept;
// Writes the lines held back so far, each once.
void say_held_warnings() noexcept;
// Forgets the lines held back, writing them only with -v.
void drop_held_warnings() noexcept;

// A line on stderr only with -v.
template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) noexcept {
  log_at(Verbosity::k_verbose, f, std::forward<Args>(args)...);
}

}  // namespace redlock
