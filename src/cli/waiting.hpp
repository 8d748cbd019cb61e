#pragma once

// What a waiting acquire or exec says on stderr. Every line here is waiting
// chatter: -q silences it all.

#include <chrono>
#include <optional>
#include <string>

#include "lock/locker.hpp"

namespace redlock::cli {

// Who holds a lock, as the waiting lines name it.
struct HolderInfo {
  std::string host;
  std::string pid;
  std::string cmd;
  Millis ttl_left{0};  // 0: unknown
  size_t others = 0;   // more holders (a semaphore's or readers')
  bool kept = false;   // its holder finished: held only for its minimum hold
};

// The holder as `busy` names it (the acquire script's busy answer says
// who holds the lock, with its command: no round trip of its own).
[[nodiscard]] HolderInfo holder_of(const lock::Busy& busy);

// "web-3 pid 4411 (./deploy.sh)", or "" when nobody is named.
[[nodiscard]] std::string describe(const HolderInfo& h);

// From construction to stop(): one line saying who holds `name` (host, pid,
// command), for how long at most unless renewed, and how long redlock will
// wait; then, on a terminal, one live line updated every second (elapsed /
// bound, holder), and in a log at most one line a minute. The wait calls
// tick() when next_tick() comes (lock::WaitListener).
class WaitReport {
 public:
  WaitReport(std::string name, std::optional<Millis> wait, HolderInfo holder);
  ~WaitReport() { (void)stop(); }
  WaitReport(const WaitReport&) = delete;
  WaitReport& operator=(const WaitReport&) = delete;

  // When the next progress line is due (nullopt: none, under -q).
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> next_tick() const { return m_next; }
  // Writes the progress line that is due.
  void tick();
  // Ends the live line; returns how long the wait lasted.
  Millis stop();

 private:
  [[nodiscard]] std::string progress(Millis elapsed) const;
  [[nodiscard]] std::chrono::steady_clock::duration period() const;

  std::string m_name;
  std::optional<Millis> m_wait;
  HolderInfo m_holder;
  std::chrono::steady_clock::time_point m_start;
  bool m_tty = false;
  std::optional<std::chrono::steady_clock::time_point> m_next;
};

}  // namespace redlock::cli
