#include "redis/sentinel.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "redis/fanout.hpp"
#include "util/log.hpp"

namespace redlock::redis {
namespace {

// The address in a reply to SENTINEL get-master-addr-by-name.
std::optional<Sentinel::Address> named_master(const std::vector<Reply>& replies) {
  if (replies.size() != 1 || !replies[0].is_array() || replies[0].elements.size() != 2) {
    return std::nullopt;
  }
  try {
    return std::make_pair(replies[0].elements[0].text(), std::stoi(replies[0].elements[1].text()));
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

Sentinel::Sentinel(Endpoint endpoint, Timeouts timeouts) : m_endpoint(std::move(endpoint)), m_timeouts(timeouts) {}

std::optional<Sentinel::Address> Sentinel::ask(const Cancel& cancel, std::string& reasons, ExitStatus& status) {
  // Each sentinel in turn, each with its own short budget (a third of
  // --connect-timeout, and no more than --timeout for its answer), so that
  // one hung sentinel leaves time to ask the others; the first that names
  // a master wins, and is asked first next time. (Blocking: only on
  // (re)connect, and for failed_over().)
  const Millis each = std::max(Millis(1), m_timeouts.connect / 3);
  const Timeouts budget{each, std::min(each, m_timeouts.command)};
  const size_t n = m_endpoint.sentinels.size();
  const char* password_hint =
      " (give the sentinels' password with ?sentinel_password= in the URL or $REDLOCK_SENTINEL_PASSWORD)";
  for (size_t k = 0; k < n; ++k) {
    const size_t index = (m_first + k) % n;
    const auto& [host, port] = m_endpoint.sentinels[index];
    Endpoint sentinel;
    sentinel.host = host;
    sentinel.port = port;
    sentinel.password = m_endpoint.sentinel_password;
    Connection conn(sentinel, budget, nullptr, cancel);
    conn.queue({"SENTINEL", "get-master-addr-by-name", m_endpoint.master});
    Connection* one[] = {&conn};
    run_all(one, cancel);
    const std::string where = sentinel.display();
    if (conn.failure()) {
      if (conn.failure()->status == ExitStatus::k_refused) {
        status = ExitStatus::k_refused;
        reasons += fmt::format("; sentinel {} refused the password{}", where, password_hint);
      } else {
        reasons += fmt::format("; sentinel {}: {}", where, conn.failure()->message);
      }
      continue;
    }
    auto replies = conn.take_replies();
    if (replies.size() == 1 && replies[0].is_error() && classify_error(replies[0].str) == ExitStatus::k_refused) {
      status = ExitStatus::k_refused;
      reasons += fmt::format("; sentinel {} requires a password{}", where, password_hint);
      continue;
    }
    if (auto master = named_master(replies)) {
      if (std::find(m_not_master.begin(), m_not_master.end(), *master) == m_not_master.end()) {
        m_first = index;
        return master;
      }
      reasons += fmt::format("; sentinel {} named {}:{}, which is not a master", where, master->first, master->second);
      continue;
    }
    reasons += fmt::format(
        "; sentinel {}: {}", where,
        replies.empty() || replies[0].is_nil() ? "does not know that master" : "answered " + replies[0].text());
  }
  return std::nullopt;
}

std::optional<Sentinel::Address> Sentinel::find_master(const Cancel& cancel, Failure& failure) {
  std::string reasons;
  ExitStatus status = ExitStatus::k_unavailable;
  auto master = ask(cancel, reasons, status);
  if (!master) {
    failure = Failure{status, fmt::format("no sentinel of {} named a master '{}'{}", m_endpoint.display(),
                                          m_endpoint.master, reasons)};
    return std::nullopt;
  }
  m_master = master;
  return master;
}

Sentinel::Role Sentinel::confirm(const Reply& role, Failure& failure) {
  if (role.is_array() && !role.elements.empty() && role.elements[0].str == "master") {
    return Role::k_master;
  }
  if (role.is_error()) {
    if (role.str.rfind("NOPERM", 0) == 0) {
      // A user without +role: the check cannot be made; READONLY answers
      // and the sentinels still catch a replica.
      log_debug("cannot confirm that {} is a master: {}", m_endpoint.display(), role.str);
      return Role::k_master;
    }
    const ExitStatus status = classify_error(role.str);
    failure = Failure{status,
                      status == ExitStatus::k_refused
                          ? fmt::format("Redis at {} requires a password: give it with --password-file or "
                                        "$REDLOCK_PASSWORD",
                                        m_endpoint.display())
                          : fmt::format("Redis at {} answered ROLE: {}", m_endpoint.display(), mask_secrets(role.str))};
    return Role::k_failed;
  }
  // A replica: the sentinel's answer was stale. Ask the others, within the
  // same connect deadline.
  const std::string role_name = role.is_array() && !role.elements.empty() ? role.elements[0].text() : "?";
  log_debug("{}:{}, named by a sentinel of {}, is a {}, not the master; asking the sentinels again", m_master->first,
            m_master->second, m_endpoint.display(), role_name);
  m_not_master.push_back(*m_master);
  return Role::k_replica;
}

bool Sentinel::failed_over(const Cancel& cancel) {
  if (!m_master) {
    return false;
  }
  std::string reasons;
  ExitStatus status = ExitStatus::k_unavailable;
  m_not_master.clear();
  auto now = ask(cancel, reasons, status);
  if (!now) {
    log_debug("could not ask the sentinels of {} for the master{}", m_endpoint.display(), reasons);
    return false;
  }
  if (*now == *m_master) {
    return false;
  }
  log_debug("the sentinels of {} now name {}:{} as the master, not {}:{}", m_endpoint.display(), now->first,
            now->second, m_master->first, m_master->second);
  m_master.reset();
  return true;
}

std::string Sentinel::master_address() const {
  return m_master ? fmt::format("{}:{}", m_master->first, m_master->second) : std::string();
}

}  // namespace redlock::redis
