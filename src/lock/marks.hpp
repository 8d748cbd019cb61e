#pragma once

// The marks that operators set on a name, over lock::Servers: a suspension
// (suspend-3.lua), which acquire honours in the same step as a grant, and a
// revoke (revoke-2.lua), which the holders' execs hear of at once. Neither
// is a hold of the lock, so they are not Locker's: `redlock suspend`,
// `resume` and `revoke` take no lock to set them.

#include <string>
#include <vector>

#include "lock/locker.hpp"
#include "lock/servers.hpp"
#include "lock/votes.hpp"
#include "util/duration.hpp"

namespace redlock::lock {

// What suspend did: until when the name is suspended (server ms; -1: until
// resumed), by the first server's clock, and that clock.
struct SuspendedUntil {
  long long until_ms = -1;
  long long now_ms = 0;
};

// What revoke asked: the holders of the lock at that instant (by their
// run ids: the first 16 hex digits of the SHA-1 of the token, "" for a lock
// kept under no token) and how many clients the message reached (holders
// running exec listen; 0: none of them is one).
struct Revoking {
  using Asked = RevokedHolder;
  std::vector<Asked> holders;  // empty: the lock was free on every server
  long long listeners = 0;     // on every server together
  // Listeners on the lock's channel that no run's channel reached (execs of
  // a version that listens there only): which holders they are is unknown.
  long long unidentified = 0;
  long long now_ms = 0;  // the first answering server's clock
};

// Suspends `name` on every server, by `by`, for `lapse_after` (0: until
// resumed): acquire then refuses newcomers; holders go on. Fewer than a
// majority of servers taking it is an Error, as is a marker that is not
// redlock's (76). Suspending a suspended name replaces the suspension.
[[nodiscard]] SuspendedUntil suspend(Servers& servers, const std::string& name, const std::string& reason,
                                     const Owner& by, Millis lapse_after);
// Lifts the suspension of `name` on every server, by `by`: whether any
// server had it suspended. Errors as for suspend.
[[nodiscard]] bool resume(Servers& servers, const std::string& name, const Owner& by);
// Asks the holders of `name` on every server to stop and give it back
// within `grace` (0: each its own --kill-after), by `by`: a mark that
// names their runs, and a message on the revoke channel. Fewer than a
// majority of servers answering is an Error; so is a foreign key (76).
[[nodiscard]] Revoking revoke(Servers& servers, const std::string& name, const Owner& by, Millis grace);

}  // namespace redlock::lock
