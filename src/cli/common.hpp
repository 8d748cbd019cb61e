#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lock/locker.hpp"
#include "util/duration.hpp"
#include "util/exit_status.hpp"
#include "util/fd.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

// Options every subcommand accepts, before or after the subcommand's name
// (each subcommand's options are defined in cli/options.cpp).
struct GlobalOptions {
  std::vector<std::string> redis;  // --redis, repeatable
  std::optional<std::string> prefix;
  Millis connect_timeout{1000};
  Millis timeout{1000};
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  bool insecure = false;
  std::string password_file;
  int min_replicas = 0;
  int quiet = 0;        // -q: once silences busy and waiting; twice (-qq) everything
  bool silent = false;  // --silent: -qq
  bool verbose = false;
};

// Everything the lock core needs, validated (no network traffic yet):
// endpoints from --redis / $REDLOCK_URL / the default, the password from the
// URL, --password-file, $REDLOCK_PASSWORD or $REDLOCK_PASSWORD_FILE, prefix,
// timeouts and TLS. A stop signal while a file named there is read (a FIFO
// nobody writes to) ends redlock at once with 128+N.
struct Resolved {
  std::vector<redis::Endpoint> endpoints;
  lock::Options options;
  // What a nested redlock (under exec) needs to authenticate as this one
  // did, never inside $REDLOCK_URL: variables to set in CMD's environment,
  // variables to take out of it (the caller's own, which would make it
  // choose differently), and why it cannot (empty when it can).
  std::vector<std::pair<std::string, std::string>> credentials_env;
  std::vector<std::string> credentials_unset;
  std::string credentials_warning;
};
[[nodiscard]] Resolved resolve(const GlobalOptions& g);

// The lock names given to status or break, each checked (64 for a bad one),
// once each in the order first given: a name given twice is one lock.
[[nodiscard]] std::vector<std::string> named_locks(const std::vector<std::string>& names);

// Endpoints for people and for CMD's $REDLOCK_URL: comma-separated, no passwords.
[[nodiscard]] std::string display_endpoints(const std::vector<redis::Endpoint>& endpoints);

// The token from --token, else $REDLOCK_TOKEN; empty if neither. A token
// that cannot be one (spaces, control characters, too long) is a UsageError.
[[nodiscard]] std::string token_from(const std::string& flag);

// The token for release/renew: required, from --token or $REDLOCK_TOKEN
// (a UsageError naming `verb` when neither is given).
[[nodiscard]] std::string required_token(const std::string& flag, const char* verb);

// How acquire and exec take a lock: the options they share.
struct TakeOptions {
  std::string name;
  Millis ttl{30'000};
  std::optional<Millis> wait = Millis(0);  // nullopt: forever
  std::string token;
  int limit = 1;
  ExitCode conflict_exit_code = ExitStatus::k_busy;
  bool unfair = false;
};

// TakeOptions validated (UsageError otherwise), with --shared from exec.
struct Take {
  std::string name;
  Millis ttl{0};
  std::optional<Millis> wait;  // nullopt: forever
  lock::Claim claim;
  std::string reenter;  // --token or $REDLOCK_TOKEN
  ExitCode conflict_exit_code = ExitStatus::k_busy;
  bool fair = true;  // wait in line (not --unfair)
};
[[nodiscard]] Take parse_take(const TakeOptions& o, bool shared);

// What take_lock did when it took nothing (it said why on stderr).
struct Conflict {
  ExitCode status;  // 75, or --conflict-exit-code
};
struct Stopped {
  int signal = 0;  // the stop signal that came while waiting or while the acquire was in flight
};
using TakeOutcome = std::variant<lock::Acquired, Conflict, Stopped>;

// The status to exit with when `outcome` holds no lock: a conflict's, or
// 128+N for stop signal N.
[[nodiscard]] ExitCode status_without_lock(const TakeOutcome& outcome);

// Takes the lock, waiting as --wait allows: what was acquired, a conflict
// (busy), or the stop signal that ended the wait or the acquire (then what
// was acquired is released: nothing stays taken). SIGCHLD is not a stop.
[[nodiscard]] TakeOutcome take_lock(lock::Locker& locker, const Take& take, const lock::Owner& owner,
                                    SignalFd& signals);

// --hold-at-least D (0: none) for a lock taken as `claim`: only a plain
// lock has a minimum hold (a UsageError otherwise).
void check_hold_at_least(Millis hold, const lock::Claim& claim);

// Who holds the lock, for `status`: this host, `pid`, and its command line
// `argv` as recorded_command() stores it (no secrets, valid UTF-8, cut at
// 1024 bytes between characters).
[[nodiscard]] lock::Owner make_owner(long long pid, const std::vector<std::string>& argv);

// The arguments of process `pid` from /proc (empty if unreadable).
[[nodiscard]] std::vector<std::string> process_argv(long long pid);

}  // namespace redlock::cli
