#pragma once

#include <string>
#include <string_view>

namespace redlock::lock {

// A Lua script with its SHA1, so it can be sent as EVALSHA and, when the
// server answers NOSCRIPT (first use, or after a restart), as EVAL.
struct Script {
  std::string_view name;
  std::string_view body;
  std::string sha1;
};

// Every read-check-write on a lock is one of these scripts: Redis runs a
// script atomically, so no other client can act between our check of the
// token and our write. Each script's comment says what it guarantees.
enum class ScriptName { k_acquire, k_release, k_renew, k_inspect, k_raise_fence };
[[nodiscard]] const Script& script(ScriptName name);

}  // namespace redlock::lock
