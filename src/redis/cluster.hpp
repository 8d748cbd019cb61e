#pragma once

#include <optional>
#include <string>
#include <vector>

#include "redis/connection.hpp"
#include "redis/endpoint.hpp"

namespace redlock::redis {

// A Redis Cluster's redirection: "MOVED <slot> <host>:<port>" (the slot
// lives there now) or "ASK <slot> <host>:<port>" (the slot is moving there:
// send ASKING and this one command to it).
struct Redirect {
  enum class Kind { k_moved, k_ask };
  Kind kind = Kind::k_moved;
  std::string host;
  int port = 0;
};
[[nodiscard]] std::optional<Redirect> redirect_of(const std::string& error);

// `from` pointed at another node: same credentials and TLS, that address.
[[nodiscard]] Endpoint redirected(const Endpoint& from, const Redirect& to);

// The numeric address of the peer of a connected socket ("127.0.0.1:7001",
// "[::1]:7001", or a Unix socket's path); "" if `fd` is not connected.
[[nodiscard]] std::string peer_address(int fd);

// What a node says of its cluster (CLUSTER NODES): every node's ID, and
// where its masters are (with `conn`'s credentials). Nothing when `conn` is
// not a cluster node, or its user may not ask. Throws like call().
struct ClusterView {
  std::vector<std::string> node_ids;  // sorted
  std::vector<Endpoint> masters;
};
[[nodiscard]] std::optional<ClusterView> cluster_view(Connection& conn);

// Every key matching `pattern` on the node behind `conn` (SCAN, never
// KEYS). Throws Error: unreachable (69), refused (77), an error reply or a
// reply that is not SCAN's (76).
[[nodiscard]] std::vector<std::string> scan_node(Connection& conn, const std::string& pattern);

// Every key matching `pattern` on whatever `conn` reaches: every master of
// its cluster when it is a Redis Cluster node (their IDs go to `cluster`),
// else the node itself. Throws like scan_node.
[[nodiscard]] std::vector<std::string> scan_keys(Connection& conn, const std::string& pattern, const Timeouts& timeouts,
                                                 const std::shared_ptr<TlsContext>& tls,
                                                 std::vector<std::string>& cluster);

}  // namespace redlock::redis
