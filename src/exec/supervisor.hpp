#pragma once

#include <sys/types.h>

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "exec/renewer.hpp"
#include "util/fd.hpp"
#include "util/signals.hpp"

namespace redlock::exec {

enum class OnLost { k_term, k_kill, k_ignore };

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // the complete environment, KEY=VALUE
};

struct Policy {
  OnLost on_lost = OnLost::k_term;
  Millis kill_after{5000};  // SIGTERM → SIGKILL grace
};

struct Finished {
  int status = 0;     // CMD's exit status, 128+N if killed by signal N, 126/127 if it could not start
  bool lost = false;  // the lock was lost while CMD ran (already reported on stderr)
};

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
  // it; false (no guard) if no process could be started.
  bool start(pid_t group, std::optional<TimePoint> deadline);
  // A renewal moved the validity's end (any thread may call it).
  void extend(TimePoint deadline);
  // Whether the guard killed the group because the deadline came first.
  [[nodiscard]] bool fired() const;
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

// Runs CMD in its own process group while `renewer` keeps the lock alive,
// and supervises it from one poll loop that Redis can never stall (the
// renewals run on the renewer's thread):
// - stop signals received through `signals` go to CMD's process group;
// - when the renewer reports the lock lost, or no renewal has been confirmed
//   by validity_end - kill_after, CMD's group gets `policy.on_lost`;
// - CMD gets SIGKILL if redlock dies (PR_SET_PDEATHSIG), and so does the
//   rest of its process group (`guard`, which the caller stops);
// - it returns only when CMD's whole process group is gone: processes CMD
//   left behind get SIGTERM (SIGKILL after policy.kill_after) while the
//   lock is still held, and after a lost lock the SIGKILL still reaches
//   them when CMD itself has already exited. Nothing of CMD runs unlocked.
// `signals` must already block SIGCHLD and the forwarded signals.
[[nodiscard]] Finished supervise(const Command& cmd, Renewer& renewer, const Policy& policy, SignalFd& signals,
                                 GroupGuard& guard);

}  // namespace redlock::exec
