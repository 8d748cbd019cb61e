#include "lock/scripts.hpp"

#include <array>

#include "lock/lua_scripts.hpp"  // made from src/lock/lua/ at build time (src/lock/lua/embed.cmake)
#include "util/sha1.hpp"

namespace redlock::lock {
namespace {

// The scripts in ScriptName's order. What each one guarantees, and why it
// must be atomic, is in the header of its file in src/lock/lua/.
constexpr std::array<const lua::Embedded*, 8> k_embedded = {&lua::k_acquire,     &lua::k_renew, &lua::k_inspect,
                                                            &lua::k_raise_fence, &lua::k_break, &lua::k_finish,
                                                            &lua::k_leave,       &lua::k_line};

// Each script's SHA-1, computed by the compiler (static storage, so that a
// Script can refer to it); one constant each, as a compiler bounds the work
// of one constant expression.
constexpr Sha1Hex k_acquire_sha1 = sha1(lua::k_acquire.text);
constexpr Sha1Hex k_renew_sha1 = sha1(lua::k_renew.text);
constexpr Sha1Hex k_inspect_sha1 = sha1(lua::k_inspect.text);
constexpr Sha1Hex k_raise_fence_sha1 = sha1(lua::k_raise_fence.text);
constexpr Sha1Hex k_break_sha1 = sha1(lua::k_break.text);
constexpr Sha1Hex k_finish_sha1 = sha1(lua::k_finish.text);
constexpr Sha1Hex k_leave_sha1 = sha1(lua::k_leave.text);
constexpr Sha1Hex k_line_sha1 = sha1(lua::k_line.text);
constexpr std::array<const Sha1Hex*, 8> k_sha1s = {&k_acquire_sha1,     &k_renew_sha1, &k_inspect_sha1,
                                                   &k_raise_fence_sha1, &k_break_sha1, &k_finish_sha1,
                                                   &k_leave_sha1,       &k_line_sha1};

}  // namespace

const Script& script(ScriptName name) {
  static const std::array<Script, 8> all = [] {
    std::array<Script, 8> scripts{};
    for (size_t i = 0; i < scripts.size(); ++i) {
      scripts[i] =
          Script{k_embedded[i]->name, k_embedded[i]->text, std::string_view(k_sha1s[i]->data(), k_sha1s[i]->size())};
    }
    return scripts;
  }();
  return all.at(static_cast<size_t>(name));
}

}  // namespace redlock::lock
