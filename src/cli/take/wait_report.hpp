#pragma once

// The wait report: what a waiting acquire or exec says on stderr. One line
// when the wait starts (who holds the lock, how long redlock waits); then on
// a terminal one live line rewritten every second, in a log one line a
// minute; and at the end how long the wait lasted. Every line is waiting
// chatter: -q silences it all.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "lock/locker.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"

namespace redlock::cli {

// Who holds a lock, as the wait report names it.
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

// What the wait report reads and writes outside itself: the clock, and
// stderr and whether it is a terminal. stderr_screen() is the real one;
// tests give a fake clock and keep what is written.
class ReportScreen {
 public:
  virtual ~ReportScreen() = default;
  // Now, on the clock of the wait's deadlines.
  [[nodiscard]] virtual TimePoint now() const = 0;
  // Whether the report's lines go to a terminal (one live line) or a log.
  [[nodiscard]] virtual bool terminal() const = 0;
  // Writes `text` as it is. Never throws.
  virtual void write(std::string_view text) noexcept = 0;
  // The terminal's width in columns (0: not known), which the live line
  // stays within so that it redraws in place.
  [[nodiscard]] virtual size_t columns() const { return 0; }
};

// stderr and the monotonic clock.
[[nodiscard]] ReportScreen& stderr_screen();

// How often a progress line comes.
struct ReportPeriods {
  Clock::duration terminal = std::chrono::seconds(1);  // the live line
  Clock::duration log = std::chrono::minutes(1);       // a line in a log (cron, systemd)
};

// From construction to stop(): one line saying who holds `name` (host, pid,
// command), for how long at most unless renewed, and how long redlock will
// wait; then, on a terminal, one live line updated every period (elapsed /
// bound, holder), and in a log one line a period. The wait calls tick() when
// next_tick() comes (lock::WaitListener).
class WaitReport {
 public:
  WaitReport(std::string name, std::optional<Millis> wait, HolderInfo holder, ReportScreen& screen = stderr_screen(),
             ReportPeriods periods = {});
  ~WaitReport() { (void)stop(); }
  WaitReport(const WaitReport&) = delete;
  WaitReport& operator=(const WaitReport&) = delete;

  // When the next progress line is due (nullopt: none, under -q).
  [[nodiscard]] std::optional<TimePoint> next_tick() const { return m_next; }
  // Writes the progress line that is due.
  void tick();
  // Ends the live line; returns how long the wait lasted.
  Millis stop();
  // stop(), then says that the lock was taken and after how long.
  void acquired();

 private:
  [[nodiscard]] std::string progress(Millis elapsed) const;
  [[nodiscard]] Clock::duration period() const { return m_tty ? m_periods.terminal : m_periods.log; }
  void say(const std::string& line) noexcept;

  std::string m_name;
  std::optional<Millis> m_wait;
  HolderInfo m_holder;
  ReportScreen& m_screen;
  ReportPeriods m_periods;
  TimePoint m_start;
  bool m_tty = false;
  std::optional<TimePoint> m_next;
};

}  // namespace redlock::cli
