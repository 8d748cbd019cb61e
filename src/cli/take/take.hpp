#pragma once

// Taking a lock for acquire and exec: their options checked, the wait (with
// its report on stderr), and what a lock that was not taken exits with.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/commands.hpp"
#include "lock/locker.hpp"
#include "util/cancel.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"
#include "util/exit_status.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

// The longest --note (and --reason of suspend), in bytes.
inline constexpr size_t k_max_note_bytes = 256;
// The most names one acquire, exec, release or renew takes as one lock.
inline constexpr size_t k_max_names = 32;

// The names of a lock of several (or one): each valid, none twice, at most
// k_max_names; a UsageError (64) otherwise. Sorted: the order they are taken
// in, so that two commands that ask for the same names in another order
// never wait for each other crosswise.
[[nodiscard]] std::vector<std::string> parse_names(const std::vector<std::string>& names);

// TakeOptions validated (UsageError otherwise), with --shared from exec.
struct Take {
  std::vector<std::string> names;  // sorted, distinct: the order they are taken in
  std::string first;               // the first name given: REDLOCK_NAME and REDLOCK_FENCE are its
  std::string name;                // the one take_lock takes (the first of `names` unless set)
  Millis ttl{0};
  std::optional<Millis> wait;  // nullopt: forever
  lock::Claim claim;
  std::string reenter;  // --token or $REDLOCK_TOKEN
  ExitCode conflict_exit_code = ExitStatus::k_busy;
  bool fair = true;                   // wait in line (not --unfair)
  Millis jitter{0};                   // a random delay below this before the first try
  std::optional<Millis> stale_after;  // a holder that has held it longer may be stuck: said even under -q
  std::string note;                   // kept with a new hold (secrets redacted)
};
[[nodiscard]] Take parse_take(const TakeOptions& o, bool shared);

// Renewals a take of several names owes the names it already holds while
// it waits for the next one (cli/take/take_all.cpp).
class KeepAlive {
 public:
  KeepAlive() = default;
  KeepAlive(const KeepAlive&) = delete;
  KeepAlive& operator=(const KeepAlive&) = delete;
  virtual ~KeepAlive() = default;
  // When the next renewal is due (nullopt: none).
  [[nodiscard]] virtual std::optional<TimePoint> due() const = 0;
  // Renews what is due.
  virtual void renew() = 0;
};

// How long the last words to Redis may wait once a stop signal was taken
// (the release of what was granted, the leave of the line): the signal no
// longer cuts them short, and a server that stopped answering must not hold
// redlock for a whole --timeout. What is not answered by then was sent all
// the same; the lock's TTL, or the waiter's lease, covers the rest.
inline constexpr Millis k_after_stop{250};

// While it lives, `locker`'s rounds wait at most k_after_stop.
class StopBound {
 public:
  explicit StopBound(lock::Locker& locker) : m_locker(locker), m_timer(k_after_stop) {
    m_locker.set_cancel(m_timer.cancel());
  }
  ~StopBound() { m_locker.reset_cancel(); }
  StopBound(const StopBound&) = delete;
  StopBound& operator=(const StopBound&) = delete;

 private:
  lock::Locker& m_locker;
  CancelAfter m_timer;
};

// What take_lock did when it took nothing (it said why on stderr).
struct Conflict {
  ExitCode status;  // 75, or --conflict-exit-code
};
struct Stopped {
  int signal = 0;  // the stop signal that came while waiting or while the acquire was in flight
};
using TakeOutcome = std::variant<lock::Acquired, Conflict, Stopped>;

// The status to exit with when `outcome` holds no lock: a conflict's, or
// 128+N for stop signal N.
[[nodiscard]] ExitCode status_without_lock(const TakeOutcome& outcome);

// Takes the lock, waiting as --wait allows: what was acquired, a conflict
// (busy), or the stop signal that ended the wait or the acquire (then what
// was acquired is released: nothing stays taken). SIGCHLD is not a stop.
// While it waits, `keep` (if any) renews what the caller already holds.
[[nodiscard]] TakeOutcome take_lock(lock::Locker& locker, const Take& take, const lock::Owner& owner, SignalFd& signals,
                                    KeepAlive* keep = nullptr);

// Says on stderr why `busy` took nothing of `name` (the holder, a
// suspension, --skip-if-ok-within, a full line; quiet under -q unless the
// holder is stale) and returns the status: 75, or --conflict-exit-code.
[[nodiscard]] ExitCode report_busy(const std::string& name, const lock::Busy& busy, const Take& take);

// --hold-at-least D (0: none) for a lock taken as `claim`: only a plain
// lock has a minimum hold (a UsageError otherwise).
void check_hold_at_least(Millis hold, const lock::Claim& claim);

// Who holds the lock, for `status`: this host, `pid`, and its command line
// `argv` as recorded_command() stores it (no secrets, valid UTF-8, at most
// 64 bytes: cut between characters and marked).
[[nodiscard]] lock::Owner make_owner(long long pid, const std::vector<std::string>& argv);

// The arguments of process `pid` from /proc (empty if unreadable).
[[nodiscard]] std::vector<std::string> process_argv(long long pid);

}  // namespace redlock::cli
