#include "redis/cluster.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <sstream>

#include "redis/fanout.hpp"
#include "util/exit_status.hpp"
#include "util/number.hpp"

namespace redlock::redis {

std::optional<Redirect> redirect_of(const std::string& error) {
  Redirect r;
  size_t start = 0;
  if (error.rfind("MOVED ", 0) == 0) {
    start = 6;
  } else if (error.rfind("ASK ", 0) == 0) {
    r.kind = Redirect::Kind::k_ask;
    start = 4;
  } else {
    return std::nullopt;
  }
  const size_t space = error.find(' ', start);
  const size_t colon = error.rfind(':');
  if (space == std::string::npos || colon == std::string::npos || colon < space) {
    return std::nullopt;
  }
  r.host = error.substr(space + 1, colon - space - 1);
  if (r.host.size() > 2 && r.host.front() == '[' && r.host.back() == ']') {
    r.host = r.host.substr(1, r.host.size() - 2);
  }
  const auto port = parse_integer(error.substr(colon + 1));
  if (!port || *port <= 0 || *port > 65535) {
    return std::nullopt;
  }
  r.port = static_cast<int>(*port);
  return r;
}

Endpoint redirected(const Endpoint& from, const Redirect& to) {
  Endpoint ep = from;
  ep.kind = Endpoint::Kind::k_tcp;
  ep.host = to.host;
  ep.port = to.port;
  ep.path.clear();
  ep.sentinels.clear();
  ep.master.clear();
  return ep;
}

std::string peer_address(int fd) {
  if (fd < 0) {
    return "";
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return "";
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    return fmt::format("{}:{}", text, ntohs(in->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    return fmt::format("[{}]:{}", text, ntohs(in6->sin6_port));
  }
  if (addr.ss_family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(&addr);
    return std::string(un->sun_path, strnlen(un->sun_path, sizeof(un->sun_path)));
  }
  return "";
}

namespace {

// One line of CLUSTER NODES: "<id> <ip:port@cport[,hostname]> <flags> …".
// Adds the node's ID, and its address to `masters` when it is a master that
// has not failed.
void read_node_line(const std::string& line, const Endpoint& asked, ClusterView& view) {
  std::istringstream in(line);
  std::string id;
  std::string address;
  std::string flags;
  if (!(in >> id >> address >> flags)) {
    return;
  }
  view.node_ids.push_back(id);
  auto has = [&](const char* flag) {
    return ("," + flags + ",").find(std::string(",") + flag + ",") != std::string::npos;
  };
  if (!has("master") || has("fail") || has("noaddr") || has("handshake")) {
    return;
  }
  const std::string hostport = address.substr(0, address.find('@'));
  const size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) {
    return;
  }
  Redirect at;
  at.host = hostport.substr(0, colon);
  if (at.host.size() > 2 && at.host.front() == '[' && at.host.back() == ']') {
    at.host = at.host.substr(1, at.host.size() - 2);
  }
  if (at.host.empty()) {
    at.host = asked.host;  // a node that does not know its own address yet
  }
  const auto port = parse_integer(hostport.substr(colon + 1));
  if (!port || *port <= 0 || *port > 65535) {
    return;
  }
  at.port = static_cast<int>(*port);
  view.masters.push_back(redirected(asked, at));
}

}  // namespace

std::optional<ClusterView> cluster_view(Connection& conn) {
  const Reply r = call(conn, {"CLUSTER", "NODES"});
  if (r.is_error() || r.type != Reply::Type::k_string) {
    return std::nullopt;  // not a cluster node, or a user without +cluster|nodes
  }
  ClusterView view;
  std::istringstream lines(r.str);
  for (std::string line; std::getline(lines, line);) {
    read_node_line(line, conn.endpoint(), view);
  }
  std::sort(view.node_ids.begin(), view.node_ids.end());
  if (view.masters.empty()) {
    return std::nullopt;
  }
  return view;
}

namespace {

// NOAUTH, or the protocol error a server with requirepass sends an
// unauthenticated client's long command: either way, a password is needed.
bool needs_password(const std::string& error) {
  return error.rfind("NOAUTH", 0) == 0 || error.find("unauthenticated") != std::string::npos;
}

std::string password_message(const std::string& where) {
  return fmt::format(
      "Redis at {} requires a password: give it with --password-file FILE, $REDLOCK_PASSWORD or "
      "$REDLOCK_PASSWORD_FILE",
      where);
}

}  // namespace

std::vector<std::string> scan_node(Connection& conn, const std::string& pattern) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    const Reply r = call(conn, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (r.is_error()) {
      throw Error(classify_error(r.str), needs_password(r.str) ? password_message(conn.endpoint().display())
                                                               : fmt::format("Redis at {} answered SCAN: {}",
                                                                             conn.endpoint().display(), r.str));
    }
    if (!r.is_array() || r.elements.size() != 2) {
      throw Error(ExitStatus::k_protocol,
                  fmt::format("Redis at {} sent an unexpected reply to SCAN", conn.endpoint().display()));
    }
    cursor = r.elements[0].text();
    for (const auto& k : r.elements[1].elements) {
      keys.push_back(k.str);
    }
  } while (cursor != "0");
  return keys;
}

std::vector<std::string> scan_keys(Connection& conn, const std::string& pattern, const Timeouts& timeouts,
                                   const std::shared_ptr<TlsContext>& tls, std::vector<std::string>& cluster) {
  const std::optional<ClusterView> view = cluster_view(conn);
  if (!view) {
    return scan_node(conn, pattern);
  }
  cluster = view->node_ids;
  std::vector<std::string> keys;
  for (const Endpoint& master : view->masters) {
    Connection node(master, timeouts, tls, conn.cancel());
    std::vector<std::string> more = scan_node(node, pattern);
    keys.insert(keys.end(), more.begin(), more.end());
  }
  return keys;
}

}  // namespace redlock::redis
