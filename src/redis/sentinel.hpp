#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/failure.hpp"
#include "redis/reply.hpp"
#include "util/cancel.hpp"
#include "util/exit_status.hpp"

namespace redlock::redis {

// The sentinels of one redis+sentinel:// endpoint, kept beside the
// connection as redis-plus-plus keeps its Sentinel: which server is the
// master now. A Connection to such an endpoint asks them before it
// connects, has the server they name confirm with ROLE that it is the
// master, and can ask them again whether they have failed over since.
class Sentinel {
 public:
  using Address = std::pair<std::string, int>;  // host, port

  // `endpoint` names the sentinels, the master and the sentinels' password;
  // each sentinel gets a share of `timeouts`.
  Sentinel(Endpoint endpoint, Timeouts timeouts);

  // Starts a new connect: no server is known not to be the master.
  void begin_connect() { m_not_master.clear(); }
  // The master to connect to, named by the first sentinel that answers
  // (starting with the one that answered last) with a server not found to
  // be a replica since begin_connect(); else nullopt with `failure` naming
  // every sentinel's reason and the most specific status. Blocking: each
  // sentinel in turn, each with its own short timeout; `cancel` cuts it short.
  [[nodiscard]] std::optional<Address> find_master(const Cancel& cancel, Failure& failure);

  enum class Role { k_master, k_replica, k_failed };
  // What the reply to ROLE from the server find_master() named says:
  // k_master (also when the user may not ask it: READONLY answers and the
  // sentinels still catch a replica), k_replica (the sentinel's answer was
  // stale: find_master() passes over that server until the next connect),
  // or k_failed with `failure`.
  [[nodiscard]] Role confirm(const Reply& role, Failure& failure);

  // True when the sentinels now name another master than the one found
  // last (they failed over since), which is then forgotten. False when it is
  // the same, when none answers, or before a master was found. Blocking,
  // as find_master().
  [[nodiscard]] bool failed_over(const Cancel& cancel);

  // The master found last ("host:port"), empty before one is found.
  [[nodiscard]] std::string master_address() const;
  [[nodiscard]] bool has_master() const { return m_master.has_value(); }

 private:
  // The first sentinel's answer (see find_master()), or nullopt with every
  // sentinel's reason in `reasons` and the most specific status in `status`.
  std::optional<Address> ask(const Cancel& cancel, std::string& reasons, ExitStatus& status);

  Endpoint m_endpoint;
  Timeouts m_timeouts;
  std::optional<Address> m_master;    // the master found last
  std::vector<Address> m_not_master;  // servers found to be replicas during this connect
  size_t m_first = 0;                 // the sentinel to ask first: the one that answered last
};

}  // namespace redlock::redis
