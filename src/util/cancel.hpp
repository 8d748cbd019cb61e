#pragma once

#include "util/clock.hpp"

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

}  // namespace redlock
