#include "lock/waiter.hpp"

#include <algorithm>
#include <memory>

#include "redis/fanout.hpp"
#include "util/log.hpp"
#include "util/token.hpp"

namespace redlock::lock {
namespace {

Millis random_millis(long long lo, long long hi) {
  unsigned int r = 0;
  random_bytes(&r, sizeof(r));
  return Millis(lo + static_cast<long long>(r % static_cast<unsigned int>(hi - lo + 1)));
}

// One subscriber connection per server, listening on the lock's release
// channel. A server that cannot be subscribed to is left out: waiting then
// falls back on the holder's TTL for it.
class Subscribers {
 public:
  Subscribers(const Locker& locker, const std::string& channel) {
    for (const auto& ep : locker.endpoints()) {
      m_conns.push_back(std::make_unique<redis::Connection>(ep, locker.options().timeouts, locker.options().tls));
      m_conns.back()->queue({"SUBSCRIBE", channel});
    }
    std::vector<redis::Connection*> all = live();
    redis::run_all(all);
    for (auto& c : m_conns) {
      if (c->failure()) {
        log_debug("cannot subscribe on {}: {}", c->endpoint().display(), c->failure()->message);
      }
      (void)c->take_replies();
    }
  }

  // Sleeps until a message, `until`, or `cancel_fd`. Returns k_cancelled,
  // k_woken (a release was published) or k_deadline.
  redis::RunResult sleep(redis::TimePoint until, int cancel_fd) {
    std::vector<redis::Connection*> conns = live();
    auto r = redis::wait_any(conns, until, cancel_fd);
    bool released = false;
    for (auto* c : conns) {
      for (const auto& msg : c->take_replies()) {
        released = released || (msg.is_array() && !msg.elements.empty() && msg.elements[0].str == "message");
      }
    }
    if (r == redis::RunResult::k_woken && !released) {
      // A subscriber failed (or sent something else): carry on without it.
      return redis::RunResult::k_deadline;
    }
    return r;
  }

 private:
  std::vector<redis::Connection*> live() {
    std::vector<redis::Connection*> out;
    for (auto& c : m_conns) {
      if (!c->failure()) {
        out.push_back(c.get());
      }
    }
    return out;
  }

  std::vector<std::unique_ptr<redis::Connection>> m_conns;
};

}  // namespace

WaitOutcome acquire_waiting(Locker& locker, const std::string& name, Millis ttl, const std::string& reenter,
                            const Owner& owner, std::optional<Millis> wait, int cancel_fd, const Claim& claim) {
  const auto start = redis::Clock::now();
  std::optional<redis::TimePoint> deadline;
  if (wait) {
    deadline = start + *wait;
  }
  std::unique_ptr<Subscribers> subs;
  while (true) {
    AcquireOutcome outcome = locker.try_acquire(name, ttl, reenter, owner, claim);
    if (auto* got = std::get_if<Acquired>(&outcome)) {
      return *got;
    }
    Busy busy = std::get<Busy>(outcome);
    auto now = redis::Clock::now();
    if (deadline && now >= *deadline) {
      return busy;
    }
    if (!subs) {
      // Subscribe, then try once more at once: a release published between
      // the busy answer and the subscription would otherwise be missed.
      subs = std::make_unique<Subscribers>(locker, keys_for(locker.options().prefix, name).channel);
      continue;
    }
    Millis nap;
    if (busy.lost_race) {
      nap = random_millis(5, 50);  // split vote among contenders: back off at random
    } else if (busy.ttl_left > Millis(0)) {
      nap = busy.ttl_left + random_millis(1, 15);
    } else {
      nap = Millis(5000);  // a holder without TTL: only a release message frees it
    }
    redis::TimePoint until = now + nap;
    if (deadline) {
      until = std::min(until, *deadline);
    }
    log_debug("{} is busy; sleeping up to {} for a release", name,
              format_duration(std::chrono::duration_cast<Millis>(until - now)));
    if (subs->sleep(until, cancel_fd) == redis::RunResult::k_cancelled) {
      return Interrupted{};
    }
  }
}

}  // namespace redlock::lock
