#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lock/locker.hpp"
#include "util/duration.hpp"
#include "util/fd.hpp"
#include "util/signals.hpp"

namespace CLI {
class App;
}

namespace redlock::cli {

// Options every subcommand accepts, before or after the subcommand's name.
struct GlobalOptions {
  std::vector<std::string> redis;  // --redis, repeatable
  std::optional<std::string> prefix;
  std::string connect_timeout = "1s";
  std::string timeout = "1s";
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  bool insecure = false;
  std::string password_file;
  int min_replicas = 0;
  bool quiet = false;
  bool verbose = false;
};

void add_global_options(CLI::App& app, GlobalOptions& g);

// Everything the lock core needs, validated (no network traffic yet):
// endpoints from --redis / $REDLOCK_URL / the default, the password from the
// URL, --password-file or $REDLOCK_PASSWORD, prefix and timeouts.
struct Resolved {
  std::vector<redis::Endpoint> endpoints;
  lock::Options options;
};
[[nodiscard]] Resolved resolve(const GlobalOptions& g);

// Endpoints for people and for CMD's $REDLOCK_URL: comma-separated, no passwords.
[[nodiscard]] std::string display_endpoints(const std::vector<redis::Endpoint>& endpoints);

// Validates --ttl (must be at least 10ms).
[[nodiscard]] Millis parse_ttl(const std::string& text);

// The token from --token, else $REDLOCK_TOKEN; empty if neither.
[[nodiscard]] std::string token_from(const std::string& flag);

// The kind of hold --limit N and --shared ask for (validated).
[[nodiscard]] lock::Claim make_claim(int limit, bool shared);

// --conflict-exit-code must be 0..255.
void validate_exit_code(int code, const char* option);

// This host's name, for the lock's metadata.
[[nodiscard]] std::string host_name();

// The command line of process `pid` from /proc, joined by spaces (empty if unreadable).
[[nodiscard]] std::string process_command(long long pid);

// The message and status for a busy lock (75, or --conflict-exit-code).
[[nodiscard]] int report_busy(const std::string& name, const lock::Busy& busy, std::optional<Millis> waited,
                              int conflict_exit_code);

}  // namespace redlock::cli
