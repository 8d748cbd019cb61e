#pragma once

#include <chrono>

#include "util/clock.hpp"
#include "util/fd.hpp"

namespace redlock {

// A request to stop waiting: one descriptor that becomes readable when the
// request comes (the stop signals' SignalFd, or a thread's eventfd). Every
// blocking wait polls the Cancel it is given beside what it waits for, so
// that a stop signal ends any wait at once, and cleanup can follow. It does
// not own the descriptor, which must outlive it. The default one never
// comes.
class Cancel {
 public:
  Cancel() = default;
  explicit Cancel(int fd) : m_fd(fd) {}

  // The descriptor to poll for POLLIN; -1 for the Cancel that never comes.
  [[nodiscard]] int fd() const { return m_fd; }
  // Whether the request has come (never blocks, consumes nothing).
  [[nodiscard]] bool requested() const;
  // Sleeps until `until`, unless the request comes first: false then.
  [[nodiscard]] bool sleep_until(TimePoint until) const;

 private:
  int m_fd = -1;
};

// A Cancel that comes by itself once `after` has passed (a timerfd): the
// bound of a wait that must stay short whatever else it waits for, such as
// the last words to Redis once a stop signal was taken. If no timer can be
// had, its Cancel never comes.
class CancelAfter {
 public:
  explicit CancelAfter(std::chrono::milliseconds after);
  [[nodiscard]] Cancel cancel() const { return Cancel(m_fd.get()); }

 private:
  Fd m_fd;
};

}  // namespace redlock
