#pragma once

#include "redis/script.hpp"

namespace redlock::lock {

// A Lua script with its SHA1 (sent as EVALSHA, or EVAL on NOSCRIPT).
using Script = redis::Script;

// Every read-check-write on a lock is one of these scripts: Redis runs a
// script atomically, so no other client can act between our check of the
// token and our write. Each script's comment says what it guarantees.
enum class ScriptName { k_acquire, k_renew, k_inspect, k_raise_fence, k_break, k_finish, k_leave, k_line };
[[nodiscard]] const Script& script(ScriptName name);

}  // namespace redlock::lock
