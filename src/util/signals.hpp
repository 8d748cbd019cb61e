#pragma once

#include <initializer_list>

#include "util/fd.hpp"

namespace redlock {

// Blocks the given signals and delivers them through a signalfd instead, so
// a poll loop can wait on them alongside sockets. Construct it before any
// thread starts (threads inherit the mask) and before fork. The signals
// stay blocked for the life of the process: a pending one never kills
// redlock half-way through releasing a lock.
class SignalFd {
 public:
  explicit SignalFd(std::initializer_list<int> signals);
  [[nodiscard]] int fd() const { return m_fd.get(); }
  // The next pending signal number, or 0 if none is pending (never blocks).
  [[nodiscard]] int take();

 private:
  Fd m_fd;
};

}  // namespace redlock
