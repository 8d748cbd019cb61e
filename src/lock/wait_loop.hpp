#pragma once

// The wait loop of an acquire that may wait: try, and on a busy answer
// subscribe to the lock's release channel and sleep until a release message
// or the holder's TTL, then try again. How the wait is shown is cli's.

#include <optional>
#include <variant>

#include "lock/locker.hpp"

namespace redlock::lock {

// The wait was cut short by its Cancel (a signal): nothing is
// held. `queued_as` is the waiter's id in the line (empty if none): once
// the signal is taken, Locker::leave(name, queued_as) gives up its place.
struct Interrupted {
  std::string queued_as;
};

// How often a waiter beats (tries again, which keeps its entry in line) and
// how long its entry lives without a beat, by its place in line (1: next).
// The first k_near_places beat every 500 ms with a 2 s lease, so a head that
// dies or is stopped is skipped within about 2.5 s. Further back the period
// grows with the place, up to 15 s: a line of N waiters costs about N/15
// beats a second, not 2N. The scripts cut the lease of an entry that comes
// within k_near_places of the head and tell it, so a waiter that died far
// back is gone before it could hold anyone up (src/lock/lua/includes/line.lua,
// whose k_near and k_near_lease are these).
struct Cadence {
  Millis period;
  Millis lease;
};
inline constexpr long long k_near_places = 4;
inline constexpr Millis k_near_period{500};
inline constexpr Millis k_near_lease{2000};
inline constexpr Millis k_far_period{15000};
[[nodiscard]] Cadence cadence_for(long long place);

using WaitOutcome = std::variant<Acquired, Busy, Interrupted>;

// Hears what a wait goes through: every busy answer (the first one starts
// what a waiting acquire says), and the clock: while the wait sleeps,
// tick() is called once next_tick() has come (its progress lines). The
// wait wakes for it; nothing runs beside the waiting thread.
class WaitListener {
 public:
  WaitListener() = default;
  WaitListener(const WaitListener&) = delete;
  WaitListener& operator=(const WaitListener&) = delete;
  virtual ~WaitListener() = default;
  virtual void busy(const Busy& busy) = 0;
  [[nodiscard]] virtual std::optional<TimePoint> next_tick() const = 0;
  virtual void tick() = 0;
};

// Tries to acquire `name`, waiting up to `wait` (nullopt: forever) without
// polling (safety promise 4): after a busy answer it subscribes to the lock's
// release channel on every server and sleeps until a release message
// arrives or the holder's PTTL runs out (plus a little jitter), then tries
// again. A zero wait is exactly one try. When `cancel` comes, the wait ends
// at once with Interrupted, holding nothing (a round in flight is cut short
// by the Locker's own Cancel).
// `fair` (the default) waits in line: the waiter joins the line of waiters
// on the server, keeps its entry alive by heartbeat, sleeps until a release
// names it (direct handoff) and leaves the line when its wait runs out; a
// one-try acquire is refused while anyone is in line. Over several (Redlock)
// servers a waiter keeps one ticket in every server's line, so the lines
// agree. Unfair waiters race for the lock whenever it frees, as before fair
// waiting existed.
// `listener` (if any) hears every busy answer before the wait goes on, and
// ticks while it sleeps.
[[nodiscard]] WaitOutcome acquire_waiting(Locker& locker, const std::string& name, Millis ttl,
                                          const std::string& reenter, const Owner& owner, std::optional<Millis> wait,
                                          const Cancel& cancel, const Claim& claim = Claim{}, bool fair = true,
                                          WaitListener* listener = nullptr);

}  // namespace redlock::lock
