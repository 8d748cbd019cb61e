#pragma once

#include <sys/types.h>

#include <atomic>
#include <optional>

#include "util/clock.hpp"
#include "util/fd.hpp"

namespace redlock::exec {

// A small process that SIGKILLs CMD's whole process group if redlock ends
// without saying "done" (even by SIGKILL), or if the lock's validity ends
// before redlock says it was renewed (a stopped redlock renews nothing).
// supervise() starts it and says "done" once the group is gone; stop() (or
// the destructor) reaps it, which waits until it has run: exec does that
// after the lock is released, so the release goes out sooner. It ends
// without a signal to redlock (no SIGCHLD), so it cannot cut a round short.
class GroupGuard {
 public:
  GroupGuard() = default;
  ~GroupGuard() { stop(); }
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;

  // Guards `group`, and with a `deadline` (the lock's validity end) keeps
  // it, and with a `hard_deadline` (the end of --max-runtime's grace) that
  // one too, which nothing moves; false (no guard) if no process could be
  // started.
  bool start(pid_t group, std::optional<TimePoint> deadline, std::optional<TimePoint> hard_deadline = std::nullopt);
  // A renewal moved the validity's end (any thread may call it).
  void extend(TimePoint deadline);
  // Whether the guard killed the group because the validity's end came first.
  [[nodiscard]] bool fired() const;
  // Whether the guard killed the group at the hard deadline.
  [[nodiscard]] bool fired_hard() const;
  // The guard's process id (-1 when none runs).
  [[nodiscard]] pid_t pid() const { return m_pid; }
  // The group is gone: the guard may end (at once, without waiting for it).
  void done();
  // done(), and reaps the guard.
  void stop();

 private:
  pid_t m_pid = -1;
  Fd m_pipe;
  bool m_keeps_deadline = false;
  std::atomic<bool> m_said_done{false};
};

}  // namespace redlock::exec
