#include "exec/lease.hpp"

#include <fmt/format.h>

#include "util/exit_status.hpp"
#include "util/text.hpp"

namespace redlock::exec {

LockerLease::LockerLease(lock::Locker& locker, std::string name, std::string token, Millis ttl)
    : m_locker(locker), m_name(std::move(name)), m_token(std::move(token)), m_ttl(ttl) {}

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
    auto outcome = m_locker.renew(m_name, m_token, m_ttl);
    if (const auto* renewed = std::get_if<lock::Renewed>(&outcome)) {
      return Extended{renewed->valid_until};
    }
    const auto& not_held = std::get<lock::NotHeld>(outcome);
    return Gone{not_held.foreign ? fmt::format("the key of {} was replaced by a {} that redlock did not write",
                                               escape_for_terminal(m_name), not_held.what)
                                 : fmt::format("{} is no longer held by this token (it expired or was deleted)",
                                               escape_for_terminal(m_name))};
  } catch (const Error& e) {
    return Failed{e.what()};
  }
}

}  // namespace redlock::exec
