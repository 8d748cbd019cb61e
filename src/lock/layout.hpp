#pragma once

// How a lock is laid out in its Redis hash, read back for `status`.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lock/view.hpp"

namespace redlock::lock {

// The schema marker every lock hash redlock writes carries (field 'schema'):
// a hash without it is not redlock's and is never changed. It is set in
// CMakeLists.txt, which writes it into the Lua scripts too;
// src/lock/lua/README.md says when it changes.
inline constexpr const char* k_schema = REDLOCK_LOCK_SCHEMA;
// What a lock key of another redlock layout (another version) is said to
// hold, its schema after it: by the scripts (check_key.lua) and by status.
inline constexpr const char* k_other_layout = "hash of redlock layout ";

// The largest fence redlock hands out: 2^53 - 1. The scripts compute fences
// with Lua's numbers, which are doubles: past this they skip integers, so a
// counter there could not be increased exactly. Fences are microseconds
// since 1970 (about 1.8e15 today), far below it.
inline constexpr long long k_max_fence = 9'007'199'254'740'991;

// Whether `fence` is one redlock could have handed out: 1 to k_max_fence.
[[nodiscard]] constexpr bool usable_fence(long long fence) {
  return fence >= 1 && fence <= k_max_fence;
}

// A fence written as decimal digits, or nullopt for text that is not a
// usable fence (not a whole number, out of range, zero or negative).
[[nodiscard]] std::optional<long long> parse_fence(std::string_view text);

// The one line for a lock whose key redlock did not write: `holds` is what
// the key is (a Redis type), `where` names the server(s), e.g. " on
// redis://…" (or is empty).
[[nodiscard]] std::string foreign_message(const std::string& name, const std::string& holds, const std::string& where);

// The one line for several such keys, each a name and what its key holds
// (foreign_message's line for one): the first few named, the rest counted.
[[nodiscard]] std::string foreign_keys_message(const std::vector<std::pair<std::string, std::string>>& keys);

// Fills `v.mode`, `v.limit` and `v.holders` from the lock hash's fields
// (HGETALL pairs), given `v.type`, `v.now_ms` and `v.ttl_ms`: the plain
// layout's fields, or a semaphore's / readers' 'h:<token>' JSON entries that
// have not expired. A key that is not a hash, lacks the schema marker or has
// entries redlock would not write makes `v.foreign`. A holder whose fence is
// not usable (see usable_fence) is shown with fence 0: no fence at all,
// never a number someone could take for one. Never throws on input.
void read_holders(ServerView& v, const std::vector<std::pair<std::string, std::string>>& fields);

// The suspension and the pending revokes of a lock, from the fields of its
// marks (inspect-4n.lua): what is not redlock's is left out.
void read_marks(ServerView& v, const std::vector<std::pair<std::string, std::string>>& suspension,
                const std::vector<std::pair<std::string, std::string>>& revoke);

// The public name of the hold of `token`, which the events name a holder
// by and the ledger a run (a run is one hold of exec): the first 16 hex
// digits of its SHA-1 ("" for ""), the same on every server, and never the
// token itself (lua/includes/hold_id.lua's hold_id).
[[nodiscard]] std::string hold_id(std::string_view token);

// The live waiters of a line of waiters (the line script's pairs),
// first come first: its 'w:<id>' JSON entries whose heartbeat has not lapsed
// at server time `now_ms`. A hash without the schema marker, or an entry
// redlock would not write, is skipped. Never throws on input.
[[nodiscard]] std::vector<WaiterView> read_waiters(const std::vector<std::pair<std::string, std::string>>& fields,
                                                   long long now_ms);

}  // namespace redlock::lock
