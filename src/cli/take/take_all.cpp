#include "cli/take/take_all.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

std::vector<std::string> HeldAll::names() const {
  std::vector<std::string> out;
  out.reserve(held.size());
  for (const auto& h : held) {
    out.push_back(h.name);
  }
  return out;
}

const lock::Acquired& HeldAll::of(const std::string& name) const {
  const auto it = std::find_if(held.begin(), held.end(), [&](const Held& h) { return h.name == name; });
  return it != held.end() ? it->got : held.front().got;
}

TimePoint HeldAll::valid_until() const {
  TimePoint until = held.front().got.valid_until;
  for (const auto& h : held) {
    until = std::min(until, h.got.valid_until);
  }
  return until;
}

TimePoint HeldAll::sent() const {
  TimePoint sent = held.front().got.sent;
  for (const auto& h : held) {
    sent = std::min(sent, h.got.sent);
  }
  return sent;
}

Millis HeldAll::validity() const {
  if (held.size() == 1) {
    return held.front().got.validity;
  }
  return std::chrono::floor<Millis>(valid_until() - Clock::now());
}

void give_back(lock::Locker& locker, const std::vector<Held>& held, bool drop_run) {
  for (auto h = held.rbegin(); h != held.rend(); ++h) {
    try {
      (void)locker.release(h->name, h->got.token, 0, drop_run && h->got.count == 1);
    } catch (const Error& e) {
      log_debug("could not give {} back: {}; it frees itself when its TTL runs out", escape_for_terminal(h->name),
                e.what());
    }
  }
}

std::string spoken_names(const std::vector<std::string>& names) {
  std::vector<std::string> escaped;
  escaped.reserve(names.size());
  for (const auto& n : names) {
    escaped.push_back(escape_for_terminal(n));
  }
  return spoken_list(escaped);
}

std::string numbered_names(const HeldAll& all, bool levels) {
  std::string out;
  for (const auto& h : all.held) {
    if (!out.empty()) {
      out += '\n';
    }
    out += fmt::format("{} {}", levels ? h.got.count : h.got.fence, h.name);
  }
  return out;
}

namespace {

// What take_lock ended with when it took nothing.
TakeAllOutcome without_lock(TakeOutcome&& taken) {
  if (auto* conflict = std::get_if<Conflict>(&taken)) {
    return *conflict;
  }
  if (auto* stopped = std::get_if<Stopped>(&taken)) {
    return *stopped;
  }
  throw std::logic_error("without_lock: the lock was taken");
}

// The names taken so far, renewed every third of the TTL while the take
// waits for the next name (a renewal that fails is tried again a little
// later). A name found no longer held is `lost`.
class Holding final : public KeepAlive {
 public:
  Holding(lock::Locker& locker, Millis ttl) : m_locker(locker), m_ttl(ttl) {}

  [[nodiscard]] std::optional<TimePoint> due() const override {
    if (m_lost || m_next.empty()) {
      return std::nullopt;
    }
    return *std::min_element(m_next.begin(), m_next.end());
  }

  void renew() override {
    const Millis retry = std::min(Millis(1000), m_ttl / 10);
    for (size_t i = 0; i < m_held.size() && !m_lost; ++i) {
      Held& h = m_held[i];
      const TimePoint sent = Clock::now();
      if (m_next[i] > sent) {
        continue;
      }
      try {
        const auto outcome = m_locker.renew(h.name, h.got.token, m_ttl);
        if (const auto* renewed = std::get_if<lock::Renewed>(&outcome)) {
          h.got.sent = sent;
          h.got.valid_until = renewed->valid_until;
          h.got.validity = renewed->validity;
          m_next[i] = sent + m_ttl / 3;
        } else {
          log_debug("{} was lost while waiting for the next name; taking them again", escape_for_terminal(h.name));
          m_lost = true;
        }
      } catch (const Error& e) {
        // Tried again a little later; a stop signal ends the wait itself.
        log_debug("could not renew {} while waiting: {}", escape_for_terminal(h.name), e.what());
        m_next[i] = Clock::now() + retry;
      }
    }
  }

  void add(Held held) {
    m_next.push_back(held.got.sent + m_ttl / 3);
    m_held.push_back(std::move(held));
  }
  std::vector<Held>& held() { return m_held; }
  [[nodiscard]] bool lost() const { return m_lost; }

 private:
  lock::Locker& m_locker;
  Millis m_ttl;
  std::vector<Held> m_held;
  std::vector<TimePoint> m_next;  // per name held: when to renew it
  bool m_lost = false;
};

// One pass over the names: HeldAll, or what ended it (the names taken are
// given back then); nullopt when a name taken was lost meanwhile (given
// back too: the caller starts over).
std::optional<TakeAllOutcome> take_once(lock::Locker& locker, const Take& take, const lock::Owner& owner,
                                        SignalFd& signals) {
  Holding holding(locker, take.ttl);
  std::vector<Held>& held = holding.held();
  const auto started = Clock::now();
  try {
    for (const auto& name : take.names) {
      Take one = take;
      one.name = name;
      if (!held.empty()) {
        one.jitter = Millis(0);
        one.claim.token = held.front().got.token;
        if (take.wait) {
          one.wait = std::max(Millis(0), *take.wait - std::chrono::ceil<Millis>(Clock::now() - started));
        }
      }
      auto taken = take_lock(locker, one, owner, signals, &holding);
      if (auto* got = std::get_if<lock::Acquired>(&taken)) {
        holding.add(Held{name, std::move(*got)});
        if (held.back().got.token != held.front().got.token) {
          // The token re-entered this name but the ones before were free:
          // they are taken again under it.
          const std::string token = held.back().got.token;
          give_back(locker, held, take.claim.starts_run());
          Take again = take;
          again.claim.token = token;
          again.jitter = Millis(0);
          return take_once(locker, again, owner, signals);
        }
        if (!holding.lost()) {
          continue;
        }
      }
      if (!held.empty()) {
        log_debug("giving back {}: {} was not taken", spoken_names(HeldAll{held}.names()), escape_for_terminal(name));
      }
      if (std::holds_alternative<Stopped>(taken)) {
        const StopBound bound(locker);  // the stop was taken: a moment at most for the give-back
        give_back(locker, held, take.claim.starts_run());
        return without_lock(std::move(taken));
      }
      give_back(locker, held, take.claim.starts_run());
      if (holding.lost()) {
        return std::nullopt;
      }
      return without_lock(std::move(taken));
    }
  } catch (...) {
    give_back(locker, held, take.claim.starts_run());
    throw;
  }
  return HeldAll{std::move(held)};
}

}  // namespace

TakeAllOutcome take_all(lock::Locker& locker, const Take& take, const lock::Owner& owner, SignalFd& signals) {
  if (take.names.size() == 1) {
    auto taken = take_lock(locker, take, owner, signals);
    if (auto* got = std::get_if<lock::Acquired>(&taken)) {
      return HeldAll{{Held{take.name, std::move(*got)}}};
    }
    return without_lock(std::move(taken));
  }
  const auto started = Clock::now();
  Take attempt = take;
  while (true) {
    if (auto outcome = take_once(locker, attempt, owner, signals)) {
      return std::move(*outcome);
    }
    attempt.jitter = Millis(0);
    if (take.wait) {
      attempt.wait = std::max(Millis(0), *take.wait - std::chrono::ceil<Millis>(Clock::now() - started));
    }
  }
}

}  // namespace redlock::cli
