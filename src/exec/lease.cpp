#include "exec/lease.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "util/exit_status.hpp"
#include "util/text.hpp"

namespace redlock::exec {

LockerLease::LockerLease(lock::Locker& locker, std::vector<std::string> names, std::string token, Millis ttl)
    : m_locker(locker), m_names(std::move(names)), m_token(std::move(token)), m_ttl(ttl) {
  std::vector<std::string> escaped;
  escaped.reserve(m_names.size());
  for (const auto& n : m_names) {
    escaped.push_back(escape_for_terminal(n));
  }
  m_spoken = spoken_list(escaped);
}

RenewResult LockerLease::renew(const Cancel& cancel) {
  // The locker is the caller's again once this returns: `cancel` is only
  // this renewal's.
  struct Scope {
    lock::Locker& locker;
    Scope(lock::Locker& l, const Cancel& c) : locker(l) { locker.set_cancel(c); }
    ~Scope() { locker.reset_cancel(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  } scope(m_locker, cancel);
  try {
    // Valid until the earliest of the names' leases: each renewal runs from
    // its own send time, so the first one sent bounds them all.
    std::optional<TimePoint> until;
    for (const auto& name : m_names) {
      auto outcome = m_locker.renew(name, m_token, m_ttl);
      if (const auto* renewed = std::get_if<lock::Renewed>(&outcome)) {
        until = until ? std::min(*until, renewed->valid_until) : renewed->valid_until;
        continue;
      }
      const auto& not_held = std::get<lock::NotHeld>(outcome);
      return Gone{not_held.foreign ? fmt::format("the key of {} was replaced by a {} that redlock did not write",
                                                 escape_for_terminal(name), not_held.what)
                                   : fmt::format("{} is no longer held by this token (it expired or was deleted)",
                                                 escape_for_terminal(name))};
    }
    return Extended{*until};
  } catch (const Error& e) {
    return Failed{e.what()};
  }
}

}  // namespace redlock::exec
