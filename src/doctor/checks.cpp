#include "doctor/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

#include "lock/quorum.hpp"
#include "util/text.hpp"

namespace redlock::doctor {

namespace {

constexpr const char* k_where_to_point = "check --redis, $REDLOCK_URL or the configuration file";

// A value of `fields`, or "" when it is not there.
std::string field(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

// A whole number in `text`, or nullopt.
std::optional<long long> number(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  return *end == '\0' ? std::optional(n) : std::nullopt;
}

std::string micros(std::chrono::microseconds d) {
  if (d < std::chrono::milliseconds(10)) {
    return fmt::format("{:.2f}ms", static_cast<double>(d.count()) / 1000);
  }
  return format_duration(std::chrono::duration_cast<Millis>(d));
}

struct Report {
  std::vector<Finding>& out;
  const std::string& server;

  void add(const char* check, Level level, std::string detail, std::string advice = "") const {
    out.push_back({check, level, server, std::move(detail), std::move(advice)});
  }
};

// Why CONFIG said nothing: "refused: <its error>", or "not answered".
std::string config_why(const ServerFacts& s) {
  return s.config_error.empty() ? "not answered" : fmt::format("refused: {}", s.config_error);
}

// Why INFO said nothing of a field: "refused: <its error>", or "not in INFO".
std::string info_why(const ServerFacts& s) {
  return s.info_error.empty() ? "not in INFO" : fmt::format("refused: {}", s.info_error);
}

// What could not be read from CONFIG (nor INFO), as a warning of `check`.
void config_unread(const Report& r, const char* check, const ServerFacts& s, const char* what) {
  const std::string info = s.info_error.empty() ? "" : fmt::format("; {}", s.info_error);
  r.add(check, Level::k_warn, fmt::format("could not read {}: unknown ({}{})", what, config_why(s), info),
        fmt::format("CONFIG{} may be renamed or refused on managed Redis: check {} in its console",
                    s.info_error.empty() ? "" : " and INFO", what));
}

// What could not be read from INFO, as a warning of `check`: `what` is
// unknown, and `where` says what to check in the service's console.
void info_unread(const Report& r, const char* check, const ServerFacts& s, const char* what, const char* where) {
  r.add(check, Level::k_warn, fmt::format("could not read {}: unknown ({})", what, info_why(s)),
        fmt::format("INFO may be renamed or refused on managed Redis: {}", where));
}

// major * 100 + minor of "7.0.15", or nullopt.
std::optional<int> version_number(const std::string& version) {
  const size_t dot = version.find('.');
  const auto major = number(version.substr(0, dot));
  if (!major || dot == std::string::npos) {
    return std::nullopt;
  }
  const size_t dot2 = version.find('.', dot + 1);
  const auto minor = number(version.substr(dot + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot - 1));
  return minor ? std::optional(static_cast<int>(*major * 100 + *minor)) : std::nullopt;
}

void check_version(const Report& r, const ServerFacts& s) {
  const std::string version = field(s.info, "redis_version");
  const auto n = version_number(version);
  if (!n) {
    info_unread(r, "version", s, "the Redis version",
                "check the version in its console: redlock needs Redis 5.0 or later, 7.0 for every check");
  } else if (*n < 500) {
    r.add("version", Level::k_fail, fmt::format("Redis {}: the run ledger needs streams (Redis 5.0)", version),
          "upgrade to Redis 7");
  } else if (*n < 700) {
    r.add("version", Level::k_warn,
          fmt::format("Redis {}: an acquire cannot check that the user may also release the lock (Redis 7.0)", version),
          "upgrade to Redis 7");
  } else {
    r.add("version", Level::k_ok, fmt::format("Redis {}", version));
  }
}

void check_rights(const Report& r, const ServerFacts& s) {
  if (!s.refused) {
    r.add("acl", Level::k_warn, fmt::format("could not check the user's rights: {}", s.rights_error),
          "compare the user's ACL with the one in redlock(1), SAFETY");
    return;
  }
  const std::string user = s.user.empty() ? "the default user" : fmt::format("user '{}'", s.user);
  if (s.refused->empty()) {
    r.add("acl", Level::k_ok, fmt::format("{} may run every command redlock needs under the prefix", user));
    return;
  }
  // What each need costs when it is refused, worst first.
  struct Need {
    const char* name;
    Level level;
    const char* consequence;
  };
  const Need needs[] = {
      {"lock", Level::k_fail, "no lock can be taken (77)"},
      {"ledger", Level::k_fail, "exec is refused (77) unless it runs with --no-history"},
      {"index", Level::k_warn, "status finds the locks with SCAN instead of the index of held locks"},
      {"scan", Level::k_warn, "status --scan cannot list locks"},
  };
  for (const auto& need : needs) {
    std::vector<std::string> what;
    for (const auto& refusal : *s.refused) {
      if (refusal.need == need.name) {
        what.push_back(refusal.what);
      }
    }
    if (!what.empty()) {
      r.add("acl", need.level, fmt::format("{} may not run {}: {}", user, spoken_list(what, 4), need.consequence),
            "grant the ACL in redlock(1), SAFETY, with this prefix");
    }
  }
}

void check_eviction(const Report& r, const ServerFacts& s) {
  std::string limit = field(s.config, "maxmemory");
  std::string policy = field(s.config, "maxmemory-policy");
  if (limit.empty() || policy.empty()) {
    // Where CONFIG is refused, INFO memory says the same.
    limit = field(s.info, "maxmemory");
    policy = field(s.info, "maxmemory_policy");
  }
  if (limit.empty() || policy.empty()) {
    config_unread(r, "eviction", s, "maxmemory-policy");
  } else if (policy == "noeviction") {
    r.add("eviction", Level::k_ok, "maxmemory-policy noeviction: no lock is evicted");
  } else if (limit == "0") {
    r.add("eviction", Level::k_ok,
          fmt::format("no maxmemory limit (maxmemory-policy {} would evict locks once one is set)", policy));
  } else {
    r.add("eviction", Level::k_fail,
          fmt::format("maxmemory {} with maxmemory-policy {}: a held lock can be evicted", limit, policy),
          "set maxmemory-policy noeviction");
  }
}

void check_persistence(const Report& r, const ServerFacts& s, const Expectations& e) {
  const std::string aof = field(s.config, "appendonly");
  const std::string fsync = field(s.config, "appendfsync");
  const auto save = s.config.find("save");
  const std::string advice = fmt::format(
      "set appendonly yes and appendfsync always, or keep a restarted server out for longer than the longest "
      "TTL ({} here)",
      format_duration(e.ttl));
  if (aof.empty() || (aof == "yes" && fsync.empty()) || (aof != "yes" && save == s.config.end())) {
    // Where CONFIG is refused, INFO persistence still says whether the
    // append-only file is on, though not how often it is synced.
    const std::string aof_enabled = field(s.info, "aof_enabled");
    if (aof_enabled == "1") {
      r.add("persistence", Level::k_warn, fmt::format("appendonly yes (INFO); appendfsync unknown ({})", config_why(s)),
            "check in the service's console that appendfsync is always: with everysec a crash forgets the locks "
            "of the last second");
    } else if (aof_enabled == "0") {
      r.add("persistence", Level::k_warn,
            fmt::format("appendonly no (INFO): a restart forgets the locks taken since the last snapshot, if any; "
                        "save unknown ({})",
                        config_why(s)),
            advice + "; check the snapshot schedule in the service's console");
    } else {
      config_unread(r, "persistence", s, "appendonly and appendfsync");
    }
    return;
  }
  if (aof == "yes" && fsync == "always") {
    r.add("persistence", Level::k_ok, "appendonly yes, appendfsync always: a restart keeps every lock");
  } else if (aof == "yes") {
    r.add("persistence", Level::k_warn,
          fmt::format("appendfsync {}: a crash forgets the locks of the last {}", fsync,
                      fsync == "everysec" ? "second" : "30 seconds or so"),
          advice);
  } else if (!save->second.empty()) {
    r.add("persistence", Level::k_warn,
          fmt::format("snapshots only (save {}): a restart forgets the locks taken since the last one", save->second),
          advice);
  } else {
    r.add("persistence", Level::k_warn, "no persistence: a restart forgets every lock", advice);
  }
}

void check_replicas(const Report& r, const ServerFacts& s, const Expectations& e) {
  const std::string role = field(s.info, "role");
  if (role.empty()) {
    info_unread(r, "replicas", s, "the replication role", "check in its console that this is the master");
    return;
  }
  if (role != "master") {
    r.add("replicas", Level::k_fail,
          fmt::format("a replica of {}:{}: it refuses writes", field(s.info, "master_host"),
                      field(s.info, "master_port")),
          "give the master's URL, or redis+sentinel:// to follow failovers");
    return;
  }
  const long long replicas = number(field(s.info, "connected_slaves")).value_or(0);
  const auto to_write = number(field(s.config, "min-replicas-to-write"));
  if (e.min_replicas > replicas) {
    r.add("replicas", Level::k_fail,
          fmt::format("--min-replicas {} with {} replica{} connected: every acquire fails", e.min_replicas, replicas,
                      replicas == 1 ? "" : "s"),
          "lower --min-replicas, or connect the replicas");
  } else if (to_write && *to_write > replicas) {
    r.add("replicas", Level::k_fail,
          fmt::format("min-replicas-to-write {} with {} replica{} connected: the server refuses writes", *to_write,
                      replicas, replicas == 1 ? "" : "s"),
          "connect the replicas, or lower min-replicas-to-write");
  } else if (replicas == 0) {
    r.add("replicas", Level::k_ok, "a master with no replicas");
  } else if (e.min_replicas == 0 && s.sentinel) {
    r.add("replicas", Level::k_warn,
          fmt::format("{} replica{}, and acquire does not wait for them: a failover can lose a lock just taken",
                      replicas, replicas == 1 ? "" : "s"),
          "add --min-replicas 1");
  } else {
    r.add("replicas", Level::k_ok,
          fmt::format("a master with {} replica{}{}", replicas, replicas == 1 ? "" : "s",
                      e.min_replicas > 0 ? fmt::format(", {} confirmed by WAIT", e.min_replicas)
                                         : " (replication is asynchronous: --min-replicas narrows the gap)"));
  }
}

void check_sentinel(const Report& r, const ServerFacts& s, const Expectations& e) {
  if (!s.sentinel) {
    return;
  }
  if (!s.down_after) {
    r.add("sentinel", Level::k_warn, fmt::format("could not read down-after-milliseconds: {}", s.sentinel_error),
          "check with SENTINEL MASTER that it is at least the TTL");
  } else if (*s.down_after < e.ttl && e.min_replicas == 0) {
    r.add("sentinel", Level::k_warn,
          fmt::format("down-after-milliseconds {} is shorter than the TTL ({}): a failover within a lock's TTL "
                      "can hand it to a second holder",
                      format_duration(*s.down_after), format_duration(e.ttl)),
          "set down-after-milliseconds to at least the TTL, or use --min-replicas 1");
  } else {
    r.add("sentinel", Level::k_ok,
          fmt::format("down-after-milliseconds {}, TTL {}", format_duration(*s.down_after), format_duration(e.ttl)));
  }
}

void check_cluster(const Report& r, const ServerFacts& s) {
  if (field(s.info, "cluster_enabled") != "1") {
    return;
  }
  const auto assigned = number(field(s.cluster, "cluster_slots_assigned"));
  const std::string state = field(s.cluster, "cluster_state");
  if (!assigned || state.empty()) {
    r.add("cluster", Level::k_warn, "a Cluster node whose CLUSTER INFO could not be read",
          "check the slot coverage with redis-cli --cluster check");
  } else if (*assigned < 16384) {
    r.add("cluster", Level::k_fail,
          fmt::format("only {} of 16384 slots are assigned: locks whose names hash to the others fail", *assigned),
          "assign every slot (redis-cli --cluster fix)");
  } else if (state != "ok") {
    r.add("cluster", Level::k_fail, fmt::format("cluster_state {}", state),
          "repair the Cluster (redis-cli --cluster check)");
  } else {
    r.add("cluster", Level::k_ok, "every one of the 16384 slots is assigned, cluster_state ok");
  }
}

// An exec that holds a lock keeps two connections to every server (its
// renewals, and a subscription that hears a revoke at once), a waiter in
// line three (its tries, its own channel and the lock's). A server out of client slots refuses the next execs and
// waiters, and everyone else who shares it.
void check_clients(const Report& r, const ServerFacts& s) {
  const auto connected = number(field(s.info, "connected_clients"));
  auto most = number(field(s.config, "maxclients"));
  if (!most) {
    most = number(field(s.info, "maxclients"));  // INFO clients, where CONFIG is refused (Redis 6.2)
  }
  if (!connected) {
    info_unread(r, "clients", s, "connected_clients", "check in its console that maxclients leaves room");
    return;
  }
  if (!most || *most <= 0) {
    config_unread(r, "clients", s, "maxclients");
    return;
  }
  const std::string seen = fmt::format("{} of maxclients {} connected", *connected, *most);
  const std::string advice =
      "raise maxclients (and redis-server's open-files limit), or spread the locks over more servers: an exec "
      "that holds a lock keeps two connections, a waiter three";
  if (*connected * 10 >= *most * 9) {
    r.add("clients", Level::k_fail, fmt::format("{}: the next execs and waiters will soon be refused", seen), advice);
  } else if (*connected * 4 >= *most * 3) {
    r.add("clients", Level::k_warn, fmt::format("{}: three quarters of the slots are taken", seen), advice);
  } else {
    r.add("clients", Level::k_ok,
          fmt::format("{}: room for {} more (an exec that holds a lock keeps two, a waiter three)", seen,
                      *most - *connected));
  }
}

void check_clock(const Report& r, const ServerFacts& s) {
  if (!s.clock_offset) {
    r.add("clock", Level::k_warn, "could not read the server's clock (TIME)",
          "check that its clock is synchronised (NTP)");
    return;
  }
  const Millis off = *s.clock_offset;
  const Millis tolerance = std::max(Millis(1000), std::chrono::duration_cast<Millis>(s.rtt.value_or(Millis(0))));
  if (std::chrono::abs(off) > tolerance) {
    r.add("clock", Level::k_warn,
          fmt::format("the server's clock is {} {} this host's", format_duration(std::chrono::abs(off)),
                      off.count() > 0 ? "ahead of" : "behind"),
          "synchronise the clocks (NTP): ages, history and --skip-if-ok-within read the servers' clocks");
  } else {
    r.add("clock", Level::k_ok, fmt::format("within {} of this host's", format_duration(std::chrono::abs(off))));
  }
}

void check_round_trip(const Report& r, const ServerFacts& s, const Expectations& e) {
  if (!s.rtt) {
    return;
  }
  const auto rtt = *s.rtt;
  if (rtt * 3 >= e.ttl) {
    r.add("rtt", Level::k_fail,
          fmt::format("a round trip takes {}, a third of the TTL ({}) or more: renewals cannot keep up", micros(rtt),
                      format_duration(e.ttl)),
          "use a longer --ttl or a closer server");
  } else if (rtt * 10 >= e.ttl || rtt * 2 >= e.timeout) {
    r.add("rtt", Level::k_warn,
          fmt::format("a round trip takes {}: a large part of the TTL ({}) or of --redis-timeout ({})", micros(rtt),
                      format_duration(e.ttl), format_duration(e.timeout)),
          "use a longer --ttl and --redis-timeout, or a closer server");
  } else {
    r.add("rtt", Level::k_ok, fmt::format("a round trip takes {} (TTL {})", micros(rtt), format_duration(e.ttl)));
  }
}

// The checks of one server; none past reach or auth when it failed those.
void check_server(std::vector<Finding>& out, const ServerFacts& s, const Expectations& e) {
  const Report r{out, s.server};
  if (s.failure && s.failure->status == ExitStatus::k_refused) {
    r.add("auth", Level::k_fail, s.failure->message,
          "check the password (--password-file, $REDLOCK_PASSWORD), the user, or the TLS files");
    return;
  }
  if (s.failure) {
    r.add("reach", Level::k_fail, s.failure->message, k_where_to_point);
    return;
  }
  r.add("reach", Level::k_ok, s.rtt ? fmt::format("answered in {}", micros(*s.rtt)) : "answered");
  r.add("auth", Level::k_ok,
        s.user.empty() ? "connected as the default user" : fmt::format("connected as user '{}'", s.user));
  check_version(r, s);
  check_rights(r, s);
  check_eviction(r, s);
  check_persistence(r, s, e);
  check_clients(r, s);
  check_replicas(r, s, e);
  check_sentinel(r, s, e);
  check_cluster(r, s);
  check_clock(r, s);
  check_round_trip(r, s, e);
}

// Several servers: a majority must answer (`up` of them did), and an odd
// number spares as many as one more would. `n` and `up` count servers, not
// URLs: `urls` more than `n` name a server twice (an alias), which the
// independence check names.
void check_quorum(const Report& r, size_t n, size_t up, size_t urls) {
  const size_t need = lock::majority(n);
  const std::string counted =
      urls > n ? fmt::format(" (the {} URLs name {} distinct server{})", urls, n, n == 1 ? "" : "s") : "";
  if (up < need) {
    r.add("quorum", Level::k_fail,
          fmt::format("{} of {} servers answered{}, fewer than a majority ({}): every acquire fails", up, n, counted,
                      need),
          "bring the servers back, or " + std::string(k_where_to_point));
  } else if (n % 2 == 0) {
    r.add("quorum", Level::k_warn,
          fmt::format("{} servers{}: a majority is {}, so {} may fail, as with {} server{}", n, counted, need, n - need,
                      n - 1, n - 1 == 1 ? "" : "s"),
          "use an odd number of servers (3 or 5)");
  } else {
    std::string detail =
        fmt::format("{} of {} servers answered{}; a majority is {}, so {} may fail", up, n, counted, need, n - need);
    // Some are down already: say what is left to spare, not only the design's margin.
    if (up < n) {
      const size_t spare = up - need;
      detail += spare == 0 ? ": no other may now" : fmt::format(": {} more may now", spare);
    }
    r.add("quorum", Level::k_ok, detail);
  }
}

// Whether `h` names a machine's loopback.
bool loopback(std::string_view h) {
  return h == "localhost" || h == "::1" || h.substr(0, 4) == "127.";
}

// Whether `s` is reached at `host`:`port`, an address that `teller` gave:
// its URL's port, or the port its INFO says it listens on (a URL through a
// forwarded port names another). The same host name in any case, or the
// loopback in any words, and the loopback only where `teller` was reached
// through it too: 127.0.0.1 on another machine is that machine.
bool listens_at(const ServerFacts& s, std::string_view host, const std::string& port, const ServerFacts& teller) {
  const auto p = number(port);
  if (s.host.empty() || !p || (*p != s.port && p != number(field(s.info, "tcp_port")))) {
    return false;
  }
  if (loopback(host) || loopback(s.host)) {
    return loopback(host) && loopback(s.host) && loopback(teller.host);
  }
  return host.size() == s.host.size() && std::equal(host.begin(), host.end(), s.host.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Whether `replica` replicates from `master`, by their addresses. A replica
// takes its master's master_replid only once in step with it: while it
// syncs, or while its link is down, it has an id of its own, and only the
// address it names (or the master's list of its replicas) tells.
bool replicates(const ServerFacts& replica, const ServerFacts& master) {
  if (field(replica.info, "role") == "slave" &&
      listens_at(master, field(replica.info, "master_host"), field(replica.info, "master_port"), replica)) {
    return true;
  }
  // The master's own list: slave0:ip=10.0.0.2,port=6379,state=online,...
  for (const auto& [key, value] : master.info) {
    if (key.size() <= 5 || key.compare(0, 5, "slave") != 0 || !std::isdigit(static_cast<unsigned char>(key[5]))) {
      continue;
    }
    std::map<std::string, std::string> f;
    size_t at = 0;
    while (at <= value.size()) {
      const size_t end = std::min(value.find(',', at), value.size());
      const std::string item = value.substr(at, end - at);
      const size_t eq = item.find('=');
      if (eq != std::string::npos) {
        f[item.substr(0, eq)] = item.substr(eq + 1);
      }
      at = end + 1;
    }
    if (listens_at(replica, field(f, "ip"), field(f, "port"), master)) {
      return true;
    }
  }
  return false;
}

// Several servers: a majority must answer, and they must be independent
// masters (not one server twice, not a master and its replica).
void check_set(std::vector<Finding>& out, const std::vector<ServerFacts>& servers) {
  const size_t n = servers.size();
  const Report r{out, ""};
  std::vector<const ServerFacts*> up;
  for (const auto& s : servers) {
    if (!s.failure) {
      up.push_back(&s);
    }
  }
  // An alias of a server that answered (the same run_id) is that server.
  std::set<std::string> seen;
  size_t aliases = 0;
  for (const auto* s : up) {
    const std::string run_id = field(s->info, "run_id");
    if (!run_id.empty() && !seen.insert(run_id).second) {
      ++aliases;
    }
  }
  check_quorum(r, n - aliases, up.size() - aliases, n);
  bool compared = true;
  std::vector<std::string> problems;
  for (size_t i = 0; i < up.size(); ++i) {
    for (size_t j = i + 1; j < up.size(); ++j) {
      const auto& a = *up[i];
      const auto& b = *up[j];
      const std::string run_a = field(a.info, "run_id");
      const std::string repl_a = field(a.info, "master_replid");
      if (run_a.empty() || repl_a.empty() || field(b.info, "run_id").empty()) {
        compared = false;
      } else if (run_a == field(b.info, "run_id")) {
        problems.push_back(fmt::format("{} and {} are one server (run_id {})", a.server, b.server, run_a));
      } else if (repl_a == field(b.info, "master_replid") || replicates(b, a) || replicates(a, b)) {
        problems.push_back(
            fmt::format("{} and {} are one replication group (a master and its replica)", a.server, b.server));
      }
    }
  }
  if (!problems.empty()) {
    for (auto& p : problems) {
      r.add("independence", Level::k_fail, fmt::format("{}: not independent Redlock masters", p),
            "give each independent master once, with no replication between them");
    }
  } else if (!compared) {
    r.add("independence", Level::k_warn, "could not compare the servers' run_id and replication (INFO)",
          "make sure they are independent masters, with no replication between them");
  } else {
    r.add("independence", Level::k_ok, fmt::format("{} independent masters", up.size()));
  }
}

}  // namespace

std::map<std::string, std::string> parse_info(std::string_view text) {
  std::map<std::string, std::string> fields;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    const size_t colon = line.find(':');
    if (line.empty() || line.front() == '#' || colon == std::string_view::npos) {
      continue;
    }
    fields.emplace(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
  }
  return fields;
}

std::optional<bool> evicts_locks(const ServerFacts& s) {
  const std::string limit = field(s.config, "maxmemory");
  const std::string policy = field(s.config, "maxmemory-policy");
  if (limit.empty() || policy.empty()) {
    return std::nullopt;
  }
  return limit != "0" && policy != "noeviction";
}

std::optional<bool> restart_forgets_locks(const ServerFacts& s) {
  const std::string aof = field(s.config, "appendonly");
  const std::string fsync = field(s.config, "appendfsync");
  if (aof.empty() || (aof == "yes" && fsync.empty())) {
    return std::nullopt;
  }
  return !(aof == "yes" && fsync == "always");
}

std::vector<Finding> diagnose(const std::vector<ServerFacts>& servers, const Expectations& e) {
  std::vector<Finding> out;
  for (const auto& s : servers) {
    check_server(out, s, e);
  }
  if (servers.size() > 1) {
    check_set(out, servers);
  }
  return out;
}

Level worst(const std::vector<Finding>& findings) {
  Level w = Level::k_ok;
  for (const auto& f : findings) {
    w = std::max(w, f.level);
  }
  return w;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::k_ok:
      return "ok";
    case Level::k_warn:
      return "warn";
    case Level::k_fail:
      return "fail";
  }
  return "fail";
}

}  // namespace redlock::doctor
