#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis {

// One Redis server as named by a URL. Parsing is strict: anything malformed
// is a UsageError before any connection is tried.
struct Endpoint {
  enum class Kind { k_tcp, k_unix, k_sentinel };
  Kind kind = Kind::k_tcp;
  bool tls = false;  // rediss://
  std::string host;  // without brackets for IPv6
  int port = 6379;
  std::string path;  // unix socket path
  long long db = 0;
  std::string user;  // empty: the default user
  std::optional<std::string> password;
  // redis+sentinel://: the sentinels to ask, and the master's name there.
  std::vector<std::pair<std::string, int>> sentinels;
  std::string master;
  // The sentinels' own password (?sentinel_password=, or
  // $REDLOCK_SENTINEL_PASSWORD), for sentinels with requirepass.
  std::optional<std::string> sentinel_password;

  // The URL without credentials: safe for any output.
  [[nodiscard]] std::string display() const;
};

// Parses redis://[[user]:password@]host[:port][/db], rediss://…,
// unix:///path[?db=N] and
// redis+sentinel://host[:port][,host[:port]…]/master[/db][?sentinel_password=P].
// Throws UsageError.
[[nodiscard]] Endpoint parse_endpoint(std::string_view url);

// Parses a comma-separated list of URLs (as in $REDLOCK_URL). A comma
// separates URLs only where a scheme follows it, so a sentinel URL's own
// comma-separated hosts stay together.
[[nodiscard]] std::vector<Endpoint> parse_endpoint_list(std::string_view urls);

// Throws UsageError when two endpoints name one server in the same words:
// the same scheme, host (in any case), port and database; the same socket
// path and database; or the same sentinels, master and database. No name is
// looked up, so this runs before any network traffic; aliases (localhost
// and 127.0.0.1) are found once connected.
void refuse_repeated(const std::vector<Endpoint>& endpoints);

}  // namespace redlock::redis
