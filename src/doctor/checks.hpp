#pragma once

// What `redlock doctor` concludes about a deployment, as pure functions of
// what each server said (doctor/audit.cpp gathers it): reach, authentication,
// the ACL rights the scripts need, the eviction policy, persistence,
// replicas, whether several servers are independent masters, Sentinel's
// timing, Cluster slot coverage, clocks, round trips and versions. No I/O:
// tests/unit/doctor/checks_test.cpp covers it table-driven with no server.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/failure.hpp"
#include "util/duration.hpp"

namespace redlock::doctor {

enum class Level { k_ok, k_warn, k_fail };

// One line of the report: a check, its verdict, the server it is about
// ("" for the set of servers as a whole), what was found and what to do.
struct Finding {
  std::string check;
  Level level = Level::k_ok;
  std::string server;
  std::string detail;
  std::string advice;  // empty when there is nothing to do
};

// A command the scripts need that the user may not run, by what needs it:
// "lock" (taking, renewing, releasing, waiting), "ledger" (exec's run
// history), "index" (status's list of held locks), "scan" (status --scan).
struct Refusal {
  std::string need;
  std::string what;  // "HSET redlock:{doctor}" or "PUBLISH redlock:{doctor}:released"
};

// What one server told the audit, as plain values. A field that could not be
// read is empty, with the reason beside it where there is one.
struct ServerFacts {
  std::string server;                            // its URL, without a password
  std::string user;                              // the ACL user ("" for the default one)
  std::string host;                              // the host its URL names ("" for a socket or Sentinel)
  int port = 0;                                  // the port its URL names (0 with no host)
  bool sentinel = false;                         // reached through redis+sentinel://
  std::optional<redis::Failure> failure;         // could not connect, or refused
  std::optional<std::chrono::microseconds> rtt;  // the shortest of a few round trips
  std::optional<Millis> clock_offset;            // server TIME less this host's clock, mid round trip
  std::map<std::string, std::string> info;       // INFO fields (redis_version, run_id, role, ...)
  std::string info_error;                        // why INFO could not be read ("" if it was)
  std::map<std::string, std::string> config;     // CONFIG GET values that could be read
  std::string config_error;                      // why CONFIG GET could not be read ("" if it was)
  std::optional<std::vector<Refusal>> refused;   // nullopt: the rights could not be checked
  std::string rights_error;                      // why not
  std::map<std::string, std::string> cluster;    // CLUSTER INFO fields, on a Cluster node
  std::optional<Millis> down_after;              // Sentinel's down-after-milliseconds for the master
  std::string sentinel_error;                    // why it could not be read
};

// What the deployment is used with.
struct Expectations {
  Millis ttl{30'000};    // the TTL the jobs use
  Millis timeout{1000};  // --redis-timeout
  int min_replicas = 0;  // --min-replicas
};

// The fields of an INFO reply ("key:value" lines; '#' sections skipped).
[[nodiscard]] std::map<std::string, std::string> parse_info(std::string_view text);

// Every finding about `servers`, server by server in their order, then those
// about the set (independence, quorum).
[[nodiscard]] std::vector<Finding> diagnose(const std::vector<ServerFacts>& servers, const Expectations& e);

// Whether a held lock can be evicted: a maxmemory limit with any policy but
// noeviction. nullopt when CONFIG could not be read.
[[nodiscard]] std::optional<bool> evicts_locks(const ServerFacts& s);

// Whether a restart or a crash can forget held locks: anything short of
// appendonly yes with appendfsync always. nullopt when CONFIG could not be read.
[[nodiscard]] std::optional<bool> restart_forgets_locks(const ServerFacts& s);

// The worst level among `findings` (ok when there are none).
[[nodiscard]] Level worst(const std::vector<Finding>& findings);

// "ok", "warn" or "fail".
[[nodiscard]] std::string_view level_name(Level level);

}  // namespace redlock::doctor
