#pragma once

// A lock of several names (acquire a b c, exec a b c -- CMD): all or
// nothing, under one token. The names are taken one by one in sorted order,
// each with the single-name protocol (so names in different Cluster slots,
// or on several Redlock servers, need no script that spans them), and two
// commands that ask for the same names in another order never wait for
// each other crosswise. The names already held are renewed while the next
// one is waited for; if one cannot be had, those taken are given back.

#include <string>
#include <variant>
#include <vector>

#include "cli/take/take.hpp"
#include "lock/locker.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

// One name of the lock, taken.
struct Held {
  std::string name;
  lock::Acquired got;
};

// Every name of the lock, in the order taken; one token for all.
struct HeldAll {
  std::vector<Held> held;

  [[nodiscard]] const std::string& token() const { return held.front().got.token; }
  // The names, in the order taken.
  [[nodiscard]] std::vector<std::string> names() const;
  // What `name` got (the first one's for a name not held).
  [[nodiscard]] const lock::Acquired& of(const std::string& name) const;
  // Until when every name is safely ours: the earliest of their leases.
  [[nodiscard]] TimePoint valid_until() const;
  // When the oldest lease still counted was asked for: the renewals run from it.
  [[nodiscard]] TimePoint sent() const;
  // How long the lock is safely ours from now: one name's validity as its
  // answers came in; for several, the earliest lease less the time since.
  [[nodiscard]] Millis validity() const;
};

using TakeAllOutcome = std::variant<HeldAll, Conflict, Stopped>;

// Takes every name of `take.names`, in that (sorted) order, as take_lock
// takes one: --wait is one budget for all of them, --jitter comes once,
// and a free name is taken under the token of the first name taken. A
// name that cannot be had (busy, a stop signal, Redis failing: an Error
// is thrown on after) gives back those taken, and nothing stays held.
// A name held since lost while the next was waited for starts the take
// over, within what is left of the wait.
[[nodiscard]] TakeAllOutcome take_all(lock::Locker& locker, const Take& take, const lock::Owner& owner,
                                      SignalFd& signals);

// Gives back one level of each of `held` (last taken first), and with
// `drop_run` the runs their acquires started. Failures are said with -v
// only: each name's TTL frees it anyway.
void give_back(lock::Locker& locker, const std::vector<Held>& held, bool drop_run);

// Names as a line on stderr says them: each escaped, "a, b and c".
[[nodiscard]] std::string spoken_names(const std::vector<std::string>& names);

// The lines of REDLOCK_FENCES (and REDLOCK_EXEC_LEVELS): "<number> <name>"
// per name, in the order taken; a name has no control character, so a line
// is one name.
[[nodiscard]] std::string numbered_names(const HeldAll& all, bool levels);

}  // namespace redlock::cli
