#pragma once

// What exec's revoke listener hears of its hold, read by the lock: a
// subscriber on every server on the revoke channels of the hold's names
// (the lock's, and its run's own), the revoke mark read once subscribed
// (for a revoke made before), and the messages and the mark read into
// notices for this run. The listener's thread, its stop and its pauses are
// exec's (exec/revocation).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lock/locker.hpp"
#include "util/cancel.hpp"
#include "util/duration.hpp"

namespace redlock::redis {
class Subscriber;
}

namespace redlock::lock {

// Who revoked a hold, and the grace they gave (nullopt: exec's own
// --kill-after); or who broke it (redlock break: the hold is gone).
struct RevokeNotice {
  std::string name;  // the name revoked or broken (one of a lock of several)
  std::string host;
  std::string pid;
  std::optional<Millis> grace;
  bool broken = false;
};

class RevokeWatch {
 public:
  // Subscribes, on every server of `locker`, to the revoke channels of
  // `names` for the run of `token`; `stop` cuts every wait short.
  RevokeWatch(const Locker& locker, const std::vector<std::string>& names, const std::string& token, Cancel stop);
  ~RevokeWatch();
  RevokeWatch(const RevokeWatch&) = delete;
  RevokeWatch& operator=(const RevokeWatch&) = delete;

  // Reads the names' revoke marks (a connection to each server): a revoke
  // of this run made before the subscription.
  [[nodiscard]] std::optional<RevokeNotice> read_mark();

  enum class End { k_heard, k_stopped, k_failed };
  // Waits for a revoke of this run (k_heard, `heard` set), the stop
  // (k_stopped), or every subscriber gone (k_failed: subscribe again).
  [[nodiscard]] End wait(RevokeNotice& heard);

 private:
  const Locker& m_locker;
  std::vector<std::string> m_names;
  std::vector<std::string> m_channels;  // two per name: the lock's, the run's
  std::vector<std::string> m_marks;     // one per name
  std::string m_run;
  Cancel m_stop;
  std::unique_ptr<redis::Subscriber> m_sub;
};

}  // namespace redlock::lock
