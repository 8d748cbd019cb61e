#pragma once

// Where a lock lives: the Redis keys of a (prefix, name) and the name of a
// key read back. man redlock: KEYS.

#include <optional>
#include <string>
#include <string_view>

#include "lock/scripts.hpp"

namespace redlock::lock {

// Inside a key's hash tag a name's braces are written as these two bytes,
// control characters no name or prefix may hold: the tag then always runs
// to the end of the name (one Cluster slot per lock, never an empty tag),
// and no two (prefix, name) pairs share a key.
inline constexpr char k_open_brace = '\x01';
inline constexpr char k_close_brace = '\x02';

// The name as it is written inside the hash tag: '{' and '}' replaced.
[[nodiscard]] std::string tag_of(std::string_view name);

// The key of the lock's hash: <prefix>{tag_of(name)}.
[[nodiscard]] std::string lock_key(std::string_view prefix, std::string_view name);

// The index of held locks under `prefix`: <prefix>index. Every lock key
// has a '{' right after the prefix and ends with '}' or a ':' suffix, so no
// lock's key under any prefix is this key, and SCAN for <prefix>{*} never
// lists it (nor do versions before the index).
[[nodiscard]] std::string index_key(std::string_view prefix);

// The index of names with a run ledger under `prefix`: <prefix>ledgers,
// apart from every lock's key as the index is.
[[nodiscard]] std::string ledgers_key(std::string_view prefix);

// The name whose run ledger is `key` (<prefix>{NAME}:runs) under `prefix`,
// or nullopt for any other key.
[[nodiscard]] std::optional<std::string> name_of_ledger(std::string_view prefix, std::string_view key);

// Every key (and the channel) of lock `name` under `prefix`.
[[nodiscard]] Keys keys_for(const std::string& prefix, const std::string& name);

// The channel where the scripts tell what happens to lock `name`
// (lua/includes/events.lua): <prefix>{NAME}:events.
[[nodiscard]] std::string events_channel(std::string_view prefix, std::string_view name);

// A PSUBSCRIBE pattern for the events channel of every lock under `prefix`:
// the prefix with Redis's glob characters escaped, then {*}:events (no
// name in a channel holds a brace: see tag_of).
[[nodiscard]] std::string events_pattern(std::string_view prefix);

// The name whose events channel is `channel` under `prefix`, or nullopt.
[[nodiscard]] std::optional<std::string> name_of_events_channel(std::string_view prefix, std::string_view channel);

// `text` with the characters Redis's glob patterns give a meaning (* ? [ ]
// and backslash) escaped, so that it matches only itself.
[[nodiscard]] std::string glob_escaped(std::string_view text);

// The name whose lock hash is `key` under `prefix`, or nullopt for any
// other key: a fence counter, a line's key, a key of another prefix, or a
// lock of a name with braces written by a version before this layout.
[[nodiscard]] std::optional<std::string> name_of_key(std::string_view prefix, std::string_view key);

}  // namespace redlock::lock
