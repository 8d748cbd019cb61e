#include "lock/scripts.hpp"

#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lock/lua_scripts.hpp"  // made from src/lock/lua/ at build time (src/lock/lua/embed.cmake)
#include "util/sha1.hpp"

namespace redlock::lock {
namespace {

// The scripts in ScriptName's order (both made by embed.cmake from one
// list). What each one guarantees, and why it must be atomic, is in the
// header of its file in src/lock/lua/.
constexpr std::span<const lua::Embedded* const> k_embedded(lua::k_all);

// Each script's SHA-1, computed by the compiler (static storage, so that a
// Script can refer to it); one constant each, as a compiler bounds the work
// of one constant expression.
template <size_t at>
constexpr Sha1Hex k_sha1_of = sha1(lua::k_all[at]->text);

template <size_t... at>
constexpr std::array<const Sha1Hex*, sizeof...(at)> sha1s_of(std::index_sequence<at...>) {
  return {&k_sha1_of<at>...};
}
constexpr auto k_sha1s = sha1s_of(std::make_index_sequence<std::size(lua::k_all)>());

// The start of a call's arguments: the number of keys, then the keys. The
// count is the one in the script's file name, which embed.cmake has checked
// against the KEYS the script reads.
template <const lua::Embedded& script, typename... Key>
std::vector<std::string> keys_of(const Key&... key) {
  static_assert(!script.per_lock && script.keys == sizeof...(Key),
                "a script takes as many keys as its file's name says");
  return {std::to_string(sizeof...(Key)), key...};
}

// The same for a script that takes its keys per lock: `key` picks each
// lock's, as many as its file's name says.
template <const lua::Embedded& script, typename... Key>
std::vector<std::string> keys_per_lock(std::span<const Keys> locks, Key Keys::*... key) {
  static_assert(script.per_lock && script.keys == sizeof...(Key),
                "a script takes as many keys as its file's name says");
  std::vector<std::string> args{std::to_string(locks.size() * sizeof...(Key))};
  args.reserve(1 + locks.size() * sizeof...(Key));
  for (const Keys& lock : locks) {
    (args.push_back(lock.*key), ...);
  }
  return args;
}

std::string ms(Millis d) {
  return std::to_string(d.count());
}

std::vector<std::string> with_argv(std::vector<std::string> args, std::initializer_list<std::string> argv) {
  args.insert(args.end(), argv);
  return args;
}

}  // namespace

std::vector<std::string> to_args(const Keys& keys, const AcquireArgs& a) {
  // A reader's share has no limit of its own: '0' in the hash.
  const int limit = a.mode == Claim::Mode::k_shared ? 0 : a.limit;
  return with_argv(keys_of<lua::k_acquire>(keys.lock, keys.fence, keys.line, keys.beats, keys.waiters, keys.writers,
                                           keys.runs, keys.suspended, keys.index, keys.ledgers),
                   {a.token, ms(a.ttl), a.host, std::to_string(a.pid), a.cmd, a.reenter, mode_name(a.mode),
                    std::to_string(limit), ms(a.min_hold), a.waiter, a.fair ? "fair" : "unfair", ms(a.lease),
                    a.wait_left ? ms(*a.wait_left) : "-1", a.ticket, std::to_string(a.max_waiters),
                    a.record_run ? (a.run_later ? "check" : "run") : "", ms(a.skip_ok_within), a.note});
}

std::vector<std::string> to_args(const Keys& keys, const ReleaseArgs& a) {
  return with_argv(keys_of<lua::k_release>(keys.lock, keys.fence, keys.line, keys.beats, keys.waiters, keys.writers,
                                           keys.runs, keys.index, keys.ledgers),
                   {a.token, keys.channel, ms(a.min_hold), a.levels == ReleaseArgs::Levels::k_all ? "all" : "one",
                    a.quiet ? "quiet" : "", std::to_string(a.floor), a.run_end, a.exit, a.host, std::to_string(a.pid),
                    a.cmd, std::to_string(a.fence)});
}

std::vector<std::string> to_args(const Keys& keys, const RenewArgs& a) {
  return with_argv(keys_of<lua::k_renew>(keys.lock, keys.index), {a.token, ms(a.ttl)});
}

std::vector<std::string> to_args(std::span<const Keys> locks, const InspectArgs& a) {
  using Part = InspectArgs::Part;
  if (a.part == Part::k_all) {
    return keys_per_lock<lua::k_inspect>(locks, &Keys::lock, &Keys::fence, &Keys::suspended, &Keys::revoke);
  }
  // Fewer keys a lock than the file's name says: ARGV[1] tells how many.
  const size_t per = a.part == Part::k_lock ? 2 : 1;
  std::vector<std::string> args{std::to_string(locks.size() * per)};
  for (const Keys& lock : locks) {
    switch (a.part) {
      case Part::k_lock:
        args.push_back(lock.lock);
        args.push_back(lock.fence);
        break;
      case Part::k_suspended:
        args.push_back(lock.suspended);
        break;
      case Part::k_revoke:
      case Part::k_all:
        args.push_back(lock.revoke);
        break;
    }
  }
  args.push_back(std::to_string(per));
  return args;
}

std::vector<std::string> to_args(const Keys& keys, const RaiseFenceArgs& a) {
  return with_argv(keys_of<lua::k_raise_fence>(keys.lock, keys.fence), {a.token, std::to_string(a.fence)});
}

std::vector<std::string> to_args(const Keys& keys, const BreakArgs& a) {
  return with_argv(
      keys_of<lua::k_break>(keys.lock, keys.fence, keys.line, keys.beats, keys.waiters, keys.writers, keys.index),
      {keys.channel, a.runs, keys.revoke_channel, a.host, a.pid > 0 ? std::to_string(a.pid) : std::string()});
}

std::vector<std::string> to_args(const Keys& keys, const RevokeArgs& a) {
  return with_argv(keys_of<lua::k_revoke>(keys.lock, keys.revoke),
                   {a.host, std::to_string(a.pid), ms(a.grace), keys.revoke_channel});
}

std::vector<std::string> to_args(const Keys& keys, const LeaveArgs& a) {
  return with_argv(keys_of<lua::k_leave>(keys.lock, keys.fence, keys.line, keys.beats, keys.waiters, keys.writers),
                   {a.waiter, keys.channel});
}

std::vector<std::string> to_args(std::span<const Keys> locks, const LineArgs& a) {
  return with_argv(keys_per_lock<lua::k_line>(locks, &Keys::line, &Keys::beats, &Keys::waiters),
                   {std::to_string(a.listed)});
}

std::vector<std::string> to_args(const Keys& keys, const HistoryArgs& a) {
  return with_argv(keys_of<lua::k_history>(keys.runs, keys.lock), {std::to_string(a.count)});
}

std::vector<std::string> to_args(const Keys& keys, const StartRunArgs& a) {
  return with_argv(keys_of<lua::k_start_run>(keys.lock, keys.runs, keys.ledgers),
                   {a.token, a.host, std::to_string(a.pid), a.cmd});
}

std::vector<std::string> to_args(std::span<const Keys> locks, const RunsArgs& /*a*/) {
  return keys_per_lock<lua::k_runs>(locks, &Keys::runs);
}

std::vector<std::string> to_args(const Keys& keys, const SuspendArgs& a) {
  return with_argv(keys_of<lua::k_suspend>(keys.lock, keys.suspended, keys.index),
                   {a.resume ? "resume" : "suspend", a.reason, a.host, std::to_string(a.pid), ms(a.lapse_after)});
}

const Script& script(ScriptName name) {
  static const std::array<Script, std::size(lua::k_all)> all = [] {
    std::array<Script, std::size(lua::k_all)> scripts{};
    for (size_t i = 0; i < scripts.size(); ++i) {
      scripts[i] = Script{k_embedded[i]->name, k_embedded[i]->text,
                          std::string_view(k_sha1s[i]->data(), k_sha1s[i]->size()), k_embedded[i]->optional_keys};
    }
    return scripts;
  }();
  return all.at(static_cast<size_t>(name));
}

}  // namespace redlock::lock
