#include "lock/wait_loop.hpp"

#include <algorithm>
#include <memory>

#include "lock/keys.hpp"
#include "redis/subscriber.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/token.hpp"

namespace redlock::lock {
namespace {

// One subscriber connection per server, listening for releases. A server
// that cannot be subscribed to is left out: waiting then falls back on the
// holder's TTL (or the heartbeat) for it.
// A waiter in line (`me`, its id) listens on a channel of its own,
// '<channel>:<me>', which only the releases that name it reach: the others
// sleep on (no herd of processes waking to read a release that is not
// theirs). It stays subscribed to the lock's channel too, as every waiter
// is (PUBSUB NUMSUB counts them), on a second connection that it only
// reads when it wakes anyway.
class Subscribers {
 public:
  Subscribers(const Locker& locker, const std::string& channel, const std::string& me)
      : m_own(locker.endpoints(), locker.options().timeouts, locker.options().tls, locker.cancel()),
        m_seen(locker.endpoints(), locker.options().timeouts, locker.options().tls, locker.cancel()) {
    std::string own = channel;
    if (!me.empty()) {
      own.append(":").append(me);
    }
    m_own.start({own});
    if (!me.empty()) {
      m_seen.start({channel});
    }
    redis::Subscriber* both[] = {&m_own, &m_seen};
    redis::Subscriber::confirm(both, locker.cancel());
    for (size_t i = 0; i < m_own.size(); ++i) {
      if (!m_own.up(i)) {
        log_debug("cannot subscribe on {}: {}", m_own.endpoint(i).display(), m_own.why(i));
      }
      if (!me.empty() && !m_seen.up(i)) {
        log_debug("cannot subscribe on {}: {}", m_seen.endpoint(i).display(), m_seen.why(i));
      }
    }
  }

  // Sleeps until a message for waiter `me`, `until`, or `cancel`.
  // Returns k_cancelled, k_woken (a release was published) or k_deadline.
  // A release names the waiters it hands the lock to: one that names others
  // leaves `me` asleep (direct handoff, no herd). A message without names
  // (nobody was in line) and any message for an unfair waiter (`me` empty)
  // wake it.
  redis::RunResult sleep(TimePoint until, const Cancel& cancel, const std::string& me) {
    keep_up();
    redis::RunResult r;
    bool released = false;
    bool any = false;
    do {
      r = m_own.wait(until, cancel);
      redis::Subscriber::Arrived arrived = m_own.take();
      m_lost = m_lost || !arrived.lost.empty();
      any = !arrived.messages.empty();
      for (const auto& msg : arrived.messages) {
        released = released || for_me(msg.payload, me);
      }
    } while (r == redis::RunResult::k_woken && any && !released && !m_lost);
    if (r == redis::RunResult::k_woken && !released && !any) {
      // A subscriber failed (the server restarted, failed over, or reset
      // the connection): the lock may be free now. Try again at once, and
      // subscribe anew.
      m_lost = true;
      return redis::RunResult::k_deadline;
    }
    return r;
  }

  // Whether the release message `text` ("released[ id…]") wakes waiter `me`.
  static bool for_me(const std::string& text, const std::string& me) {
    if (me.empty() || text == "released") {
      return true;
    }
    for (size_t at = text.find(me); at != std::string::npos; at = text.find(me, at + 1)) {
      const bool starts = at > 0 && text[at - 1] == ' ';
      const bool ends = at + me.size() == text.size() || text[at + me.size()] == ' ';
      if (starts && ends) {
        return true;
      }
    }
    return false;
  }

  // True once a subscriber that was listening has failed.
  [[nodiscard]] bool lost() const { return m_lost; }

 private:
  // Reads and drops what the lock's channel brought the second connection
  // since the last wake.
  void keep_up() {
    m_seen.read_arrived();
    m_lost = m_lost || !m_seen.take().lost.empty();
  }

  redis::Subscriber m_own;   // listened to
  redis::Subscriber m_seen;  // on the lock's channel, not listened to
  bool m_lost = false;
};

// When the listener's next tick comes before `until`, that tick; else
// nullopt.
std::optional<TimePoint> tick_before(const WaitListener* listener, TimePoint until) {
  if (listener == nullptr) {
    return std::nullopt;
  }
  const std::optional<TimePoint> tick = listener->next_tick();
  return tick && *tick < until ? tick : std::nullopt;
}

// Sleeps for `d` unless `cancel` comes first (returns false then), ticking
// the listener on time.
bool nap_for(Millis d, const Cancel& cancel, WaitListener* listener) {
  const TimePoint until = Clock::now() + d;
  while (true) {
    const std::optional<TimePoint> tick = tick_before(listener, until);
    if (!cancel.sleep_until(tick ? *tick : until)) {
      return false;
    }
    if (!tick) {
      return true;
    }
    listener->tick();
  }
}

// This waiter's place in the lock's line. One server numbers its line
// itself. Over several (Redlock) servers each has a line of its own, and
// they must agree on the order, or each could be waiting for a different
// head and none would have a quorum: a waiter joins every line at the time
// on that server's clock, then keeps one ticket on all of them (see
// settle()). A waiter that does not wait takes no place.
Place place_for(const Locker& locker, bool fair, std::optional<Millis> wait) {
  Place place;
  place.fair = fair;
  place.lease = k_near_lease;
  if (place.fair && (!wait || *wait > Millis(0))) {
    place.id = random_token();
    place.ticket = locker.size() > 1 ? "clock" : "";
  }
  return place;
}

// Over several servers: the ticket the servers' first answers settle on
// (their median), kept from then on at every try, which is also the
// heartbeat, so a server that missed the waiter, or undid its grant, lines
// it up in the same place as the others.
void settle(Place& place, const Busy& busy) {
  if (place.ticket == "clock" && busy.ticket > 0) {
    place.ticket = std::to_string(busy.ticket);
  }
}

void tell(WaitListener* listener, const Busy& busy) {
  if (listener != nullptr) {
    listener->busy(busy);
  }
}

// Over several servers a waiter stays in every line until it has its
// majority (a grant that is undone must not let the next waiter overtake
// it on that server), so then it leaves them all: every server that
// answered (one that did not would only cost a timeout; its entry dies with
// its lease).
void leave_lines_behind(Locker& locker, const std::string& name, const Place& place, const Acquired& got) {
  if (place.id.empty() || place.ticket.empty()) {
    return;
  }
  std::vector<bool> answered(got.voted.size(), false);
  for (size_t i = 0; i < answered.size(); ++i) {
    answered[i] = got.voted[i] || (i < got.busy.size() && got.busy[i]);
  }
  locker.leave(name, place.id, answered);
}

// What is left of --wait (nothing: waiting forever).
std::optional<Millis> time_left(std::optional<TimePoint> deadline) {
  if (!deadline) {
    return std::nullopt;
  }
  return std::max(Millis(0), std::chrono::ceil<Millis>(*deadline - Clock::now()));
}

// Whether a try that failed with `e` is waited out: an outage (not a
// refusal or a protocol error) after Redis had answered once, or that Redis
// answered itself (LOADING, a grant that came too late), with time left in
// --wait (the last try comes when --wait runs out).
bool outage_to_wait_out(const Error& e, bool answered, std::optional<TimePoint> deadline) {
  return (answered || e.answered()) && e.status() == ExitStatus::k_unavailable &&
         (!deadline || Clock::now() < *deadline);
}

// Sleeps before the next try after an outage: the backoff, or what is left
// of --wait if less. False when cancelled.
bool nap_after_outage(const Error& e, const std::string& name, Millis backoff, std::optional<TimePoint> deadline,
                      const Cancel& cancel, WaitListener* listener) {
  const Millis nap = deadline ? std::min(backoff, *time_left(deadline)) : backoff;
  log_debug("{} while waiting for {}; retrying in {}", e.what(), name, format_duration(nap));
  return nap_for(nap, cancel, listener);
}

// The period of a waiter's beat at `place`, spread by up to a tenth far
// back, so that waiters that joined together do not beat together.
Millis heartbeat_for(long long place) {
  const Millis period = cadence_for(place).period;
  if (period <= k_near_period) {
    return period;
  }
  return period - random_millis(0, period.count() / 10);
}

// How long a busy lock may stay busy: a release message ends the sleep
// sooner.
Millis nap_for_busy(const Busy& busy, const Place& place, Millis heartbeat) {
  Millis nap = Millis(5000);  // a holder without TTL: only a release message frees it
  if (busy.lost_race) {
    nap = random_millis(5, 50);  // split vote among contenders: back off at random
  } else if (busy.ttl_left > Millis(0)) {
    nap = busy.ttl_left + random_millis(1, 15);
  }
  if (!place.id.empty()) {
    // Near the head a waiter also wakes when the holder's TTL runs out (a
    // holder that died never releases). Further back the holder's TTL does
    // not matter, and all of them waking at once would be a herd: a release
    // names the head, and the scripts tell a waiter that comes near it.
    const bool near = busy.place <= k_near_places || busy.lost_race;
    nap = near ? std::min(nap, heartbeat) : heartbeat;
  }
  return nap;
}

// Sleeps on a busy lock until a release for this waiter, its holder's TTL,
// the next heartbeat of its place, or the deadline. False when cancelled.
bool sleep_on_busy(Subscribers& subs, const std::string& name, const Busy& busy, const Place& place,
                   std::optional<TimePoint> deadline, const Cancel& cancel, WaitListener* listener) {
  const auto now = Clock::now();
  TimePoint until = now + nap_for_busy(busy, place, heartbeat_for(busy.place));
  if (deadline) {
    until = std::min(until, *deadline);
  }
  log_debug("{} is busy; sleeping up to {} for a release", name,
            format_duration(std::chrono::duration_cast<Millis>(until - now)));
  while (true) {
    const std::optional<TimePoint> tick = tick_before(listener, until);
    const redis::RunResult r = subs.sleep(tick ? *tick : until, cancel, place.id);
    if (r == redis::RunResult::k_cancelled) {
      return false;
    }
    if (!tick || r != redis::RunResult::k_deadline || subs.lost()) {
      return true;
    }
    listener->tick();
  }
}

// In line on no server (or on some of several: --max-waiters wait), or
// this period's run is done (--skip-if-ok-within), or the name is
// suspended (until an operator says otherwise): waiting changes nothing.
bool nothing_to_wait_for(const Busy& busy) {
  return busy.line_full || busy.skipped || busy.suspended;
}

// Sleeps until the next try (a release, the holder's expiry, a heartbeat);
// false if a stop signal came. A subscriber that failed is dropped, after a
// short pause, to be made anew: a server that keeps closing connections
// must not make the waiter spin.
bool sleep_until_next_try(std::unique_ptr<Subscribers>& subs, const std::string& name, const Busy& busy,
                          const Place& place, std::optional<TimePoint> deadline, const Cancel& cancel,
                          WaitListener* listener) {
  if (!sleep_on_busy(*subs, name, busy, place, deadline, cancel, listener)) {
    return false;
  }
  if (subs->lost()) {
    subs.reset();
    return nap_for(random_millis(5, 50), cancel, listener);
  }
  return true;
}

}  // namespace

Cadence cadence_for(long long place) {
  if (place <= k_near_places) {
    return {k_near_period, k_near_lease};
  }
  const Millis period = std::min(k_far_period, Millis(k_near_period.count() * place / k_near_places));
  return {period, period * 2 + Millis(1000)};
}

WaitOutcome acquire_waiting(Locker& locker, const std::string& name, Millis ttl, const std::string& reenter,
                            const Owner& owner, std::optional<Millis> wait, const Cancel& cancel, const Claim& claim,
                            bool fair, WaitListener* listener) {
  const std::optional<TimePoint> deadline = wait ? std::optional<TimePoint>(Clock::now() + *wait) : std::nullopt;
  Place place = place_for(locker, fair, wait);
  std::unique_ptr<Subscribers> subs;
  bool answered = false;  // Redis has answered at least once: a later outage is waited out
  Millis backoff{50};
  while (true) {
    AcquireOutcome outcome;
    place.wait_left = time_left(deadline);
    try {
      outcome = locker.try_acquire(name, ttl, reenter, owner, claim, place);
    } catch (const Error& e) {
      // Redis went away while we waited (a restart, a failover, a reset
      // connection): reconnect with backoff within --wait; give up with the
      // error only when the wait is spent.
      if (!outage_to_wait_out(e, answered, deadline)) {
        throw;
      }
      subs.reset();
      if (!nap_after_outage(e, name, backoff, deadline, cancel, listener)) {
        return Interrupted{place.id};
      }
      backoff = std::min(backoff * 2, Millis(1000));
      continue;
    }
    answered = true;
    backoff = Millis(50);
    if (auto* got = std::get_if<Acquired>(&outcome)) {
      leave_lines_behind(locker, name, place, *got);
      return *got;
    }
    const Busy& busy = std::get<Busy>(outcome);
    if (nothing_to_wait_for(busy)) {
      locker.leave(name, place.id);
      return busy;
    }
    settle(place, busy);
    place.lease = cadence_for(busy.place).lease;
    tell(listener, busy);
    if (deadline && Clock::now() >= *deadline) {
      locker.leave(name, place.id);  // at once: the line behind it moves up now
      return busy;
    }
    if (!subs) {
      // Subscribe, then try once more at once: a release published between
      // the busy answer and the subscription would otherwise be missed.
      subs = std::make_unique<Subscribers>(locker, keys_for(locker.options().prefix, name).channel, place.id);
      continue;
    }
    if (!sleep_until_next_try(subs, name, busy, place, deadline, cancel, listener)) {
      return Interrupted{place.id};
    }
  }
}

}  // namespace redlock::lock
