#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "exec/lease.hpp"
#include "util/clock.hpp"
#include "util/fd.hpp"

namespace redlock::exec {

// Keeps a lease alive from a background thread: renews every ttl/3 on
// the monotonic clock (next += interval, so the schedule does not drift),
// retries a failed renewal quickly, and tracks the lock's validity locally
// from the last confirmed renewal. It never signals anyone itself: the
// supervisor reads validity_end() and waits on lost_fd().
class Renewer {
 public:
  // `acquired_at` is when the acquire request was sent; `valid_until` when
  // the lock it took stops being safely ours. `lease` outlives the renewer.
  Renewer(Lease& lease, TimePoint acquired_at, TimePoint valid_until);
  ~Renewer();
  Renewer(const Renewer&) = delete;
  Renewer& operator=(const Renewer&) = delete;

  // How often a lock of `ttl` is renewed: every ttl/3.
  [[nodiscard]] static Millis interval_for(Millis ttl);

  // Called on the renewer's thread with the new validity's end after each
  // confirmed renewal. Set it before start().
  void on_renewed(std::function<void(TimePoint)> tell) { m_on_renewed = std::move(tell); }

  void start();
  [[nodiscard]] bool started() const { return m_thread.joinable(); }
  // When to start() at the latest: half the interval before the first
  // renewal is due. A command that ends sooner never needs the thread.
  [[nodiscard]] TimePoint start_by() const { return m_acquired_at + interval_for(m_lease.ttl()) / 2; }
  // Stops at once (an in-flight renewal is abandoned) and joins. After
  // stop(), the lease's lock may be used again by the caller.
  void stop();

  // Readable once a renewal found that the token no longer holds the lock.
  [[nodiscard]] int lost_fd() const { return m_lost.get(); }
  // Until when the lock is safely ours, as of the last confirmed renewal.
  [[nodiscard]] TimePoint validity_end() const;
  // Why the lock was lost (after lost_fd() became readable).
  [[nodiscard]] std::string lost_reason() const;

 private:
  void loop();
  void declare_lost(std::string reason);

  Lease& m_lease;
  TimePoint m_acquired_at;
  std::atomic<long long> m_validity_end_ns;
  Fd m_stop;
  Fd m_lost;
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::string m_reason;
  std::function<void(TimePoint)> m_on_renewed;
};

}  // namespace redlock::exec
