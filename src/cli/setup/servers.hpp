#pragma once

// Which servers, and how to reach them: endpoints from --redis, $REDLOCK_URL
// or the default; passwords; TLS; the key prefix and timeouts. All read and
// checked before any network traffic.

#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "lock/locker.hpp"

namespace redlock::cli {

// Everything the lock core needs, validated (no network traffic yet):
// endpoints from --redis / $REDLOCK_URL / the configuration file
// (cli/setup/config_file.hpp) / the default, the password from the URL,
// --password-file, $REDLOCK_PASSWORD, $REDLOCK_PASSWORD_FILE or the file's
// password-file, prefix, timeouts and TLS: flags, then the environment,
// then the file. A stop signal while a file named there is read (a FIFO
// nobody writes to) ends redlock at once with 128+N.
struct Resolved {
  std::vector<redis::Endpoint> endpoints;
  std::string servers_from;  // where they were named: "--redis", "$REDLOCK_URL", "FILE:LINE", the default
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

// Endpoints for people and for CMD's $REDLOCK_URL: comma-separated, no passwords.
[[nodiscard]] std::string display_endpoints(const std::vector<redis::Endpoint>& endpoints);

}  // namespace redlock::cli
