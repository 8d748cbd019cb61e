#pragma once

// The loop that watches CMD while the lock is held: signals forwarded to its
// group, the lost-lock policy, Ctrl-Z, and the group's end. Starting CMD is
// exec/spawn; the guard that outlives redlock is exec/guard.

#include "exec/guard.hpp"
#include "exec/policy.hpp"
#include "exec/renewer.hpp"
#include "exec/revocation.hpp"
#include "exec/spawn.hpp"
#include "util/signals.hpp"

namespace redlock::exec {

struct Finished {
  int status = 0;          // CMD's exit status, 128+N if killed by signal N, 126/127 if it could not start
  bool lost = false;       // the lock was lost while CMD ran (already reported on stderr)
  bool started = true;     // CMD was run at all (false: 126/127 from redlock, nothing of it ran)
  bool timed_out = false;  // CMD was ended for running past policy.max_runtime (already reported)
  bool signalled = false;  // CMD was ended by a signal (status is 128+N)
  bool revoked = false;    // CMD was ended because the lock was revoked (already reported)
  int stop_signal = 0;     // the last stop signal (SIGINT, SIGTERM, SIGHUP) forwarded to CMD, or 0
};

// Runs CMD in its own process group while `renewer` keeps the lock alive,
// and supervises it from one poll loop that Redis can never stall (the
// renewals run on the renewer's thread):
// - stop signals received through `signals` go to CMD's process group;
// - when the renewer reports the lock lost, or no renewal has been confirmed
//   by validity_end - kill_after, CMD's group gets `policy.on_lost`;
// - when `revocation` (if given) hears a revoke, CMD's group gets SIGTERM
//   (SIGKILL after the revoke's grace, or kill_after), while the lock is
//   still renewed; the caller then gives it back;
// - at policy.max_runtime CMD's group gets SIGTERM (SIGKILL after
//   kill_after), as on a loss, and the guard SIGKILLs it at max_runtime +
//   kill_after even if redlock is stopped; at policy.warn_after one line
//   says CMD still runs;
// - CMD gets SIGKILL if redlock dies (PR_SET_PDEATHSIG), and so does the
//   rest of its process group (`guard`, which the caller stops);
// - it returns only when CMD's whole process group is gone, and every
//   descendant that left it (redlock adopts orphans, exec/leftovers):
//   processes CMD left behind get SIGTERM (SIGKILL after policy.kill_after)
//   while the lock is still held, and after a lost lock the SIGKILL still
//   reaches them when CMD itself has already exited. Nothing of CMD runs
//   unlocked, short of what another service started for it.
// `signals` must already block SIGCHLD and the forwarded signals.
[[nodiscard]] Finished supervise(const Command& cmd, Renewer& renewer, const Policy& policy, SignalFd& signals,
                                 GroupGuard& guard, Revocation* revocation = nullptr);

}  // namespace redlock::exec
