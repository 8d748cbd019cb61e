#pragma once

// What each lock script's answer means, read without any I/O: one server's
// reply in, one vote out. The scripts promise a shape (an array whose first
// element names the outcome, see scripts.cpp); a reply of any other shape
// is std::nullopt, which the caller reports as an unexpected reply. These
// readers never throw and never trust a number they are given, so a
// hostile or broken server can only make a vote fail.

#include <optional>
#include <string>

#include "lock/quorum.hpp"
#include "redis/reply.hpp"

namespace redlock::lock {

// A reply element as an integer: an integer reply, or a string holding a
// decimal integer; anything else is 0.
[[nodiscard]] long long reply_integer(const redis::Reply& r);

// A reply element as a fence: an integer reply, or a string of decimal
// digits, that usable_fence (layout.hpp) accepts; nullopt for anything else.
[[nodiscard]] std::optional<long long> reply_fence(const redis::Reply& r);

// The acquire script: acquired / reentered / busy / mismatch / upgrade /
// foreign. The vote's `failure` is left empty. A grant or re-entry whose
// fence is not usable is no grant: a failed vote whose `taken` says what the
// server did all the same (so that it is undone) and `bad_fence` what it sent.
[[nodiscard]] std::optional<AcquireVote> read_acquire_answer(const redis::Reply& reply);

// The renew script: renewed (with the mode and limit held) / notheld / foreign.
[[nodiscard]] std::optional<RenewVote> read_renew_answer(const redis::Reply& reply);

// The finish script's answer to a release (one level, no minimum hold).
struct ReleaseAnswer {
  enum class Kind { k_released, k_decremented, k_not_held, k_foreign };
  Kind kind = Kind::k_not_held;
  std::string foreign_type;  // foreign: what the key holds
};
[[nodiscard]] std::optional<ReleaseAnswer> read_release_answer(const redis::Reply& reply);

// The break script: broken (with the mode, limit, server time and every
// holder it took the lock from) / free / foreign.
[[nodiscard]] std::optional<BreakVote> read_break_answer(const redis::Reply& reply);

// The inspect script (status): fills `view`'s type, server time, PTTL and
// holders (see read_holders). False for a reply of another shape.
[[nodiscard]] bool read_inspect_answer(const redis::Reply& reply, ServerView& view);

// The line script (status): the live waiters in the line, first come first
// (see read_waiters). Nullopt for a reply of another shape.
[[nodiscard]] std::optional<std::vector<WaiterView>> read_line_answer(const redis::Reply& reply);

}  // namespace redlock::lock
