#pragma once

// What the renewer knows of the lock it keeps alive: its name, its TTL, and
// one renewal at a time. LockerLease is the real one, over lock::Locker;
// tests give a fake, so the lost-lock policy is tested without a server.

#include <string>
#include <variant>
#include <vector>

#include "lock/locker.hpp"
#include "util/cancel.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"

namespace redlock::exec {

// A renewal was confirmed: the lock is safely ours until `valid_until`.
struct Extended {
  TimePoint valid_until;
};
// The lock is no longer ours (it expired, was deleted or replaced): never
// renew it again. `reason` says so in a sentence.
struct Gone {
  std::string reason;
};
// No answer that counts (Redis unreachable, too few servers, cancelled):
// the lock may still be ours; try again.
struct Failed {
  std::string error;
};
using RenewResult = std::variant<Extended, Gone, Failed>;

class Lease {
 public:
  Lease() = default;
  virtual ~Lease() = default;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // The lock's name, as messages show it (escape it for a terminal).
  [[nodiscard]] virtual const std::string& name() const = 0;
  // The TTL each renewal sets (the renewer renews every third of it).
  [[nodiscard]] virtual Millis ttl() const = 0;
  // Renews the lock once, for ttl(); gives up, as Failed, once `cancel`
  // comes. Called from one thread at a time.
  [[nodiscard]] virtual RenewResult renew(const Cancel& cancel) = 0;
};

// The lease of the locks `names` (one or more, renewed in their order, as
// one: losing any of them is losing the lease) held through `locker` under
// `token`.
class LockerLease final : public Lease {
 public:
  LockerLease(lock::Locker& locker, std::vector<std::string> names, std::string token, Millis ttl);

  [[nodiscard]] const std::string& name() const override { return m_spoken; }
  [[nodiscard]] Millis ttl() const override { return m_ttl; }
  [[nodiscard]] RenewResult renew(const Cancel& cancel) override;

 private:
  lock::Locker& m_locker;
  std::vector<std::string> m_names;
  std::string m_spoken;  // the names as a sentence says them
  std::string m_token;
  Millis m_ttl;
};

}  // namespace redlock::exec
