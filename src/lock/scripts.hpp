#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lock/claim.hpp"
#include "lock/script_names.hpp"  // made from src/lock/lua/ at build time
#include "redis/script.hpp"
#include "util/duration.hpp"

namespace redlock::lock {

// A Lua script with its SHA1 (sent as EVALSHA, or EVAL on NOSCRIPT).
using Script = redis::Script;

// ScriptName: one name a file of src/lock/lua/, made from the same list as
// the scripts themselves (embed.cmake), so the two cannot disagree.
[[nodiscard]] const Script& script(ScriptName name);

// The Redis keys for one lock name (one hash slot: all share the {NAME}
// tag), and the indexes under its prefix (of held locks, of names with a
// ledger), which lie in no lock's slot.
struct Keys {
  std::string lock;     // <prefix>{NAME}       hash
  std::string fence;    // <prefix>{NAME}:fence counter
  std::string channel;  // <prefix>{NAME}:released
  // The line of waiters (src/lock/lua/includes/line.lua): who waits in
  // what order, their leases, their entries, and which are not readers.
  std::string line;     // <prefix>{NAME}:line      zset id -> ticket
  std::string beats;    // <prefix>{NAME}:beats     zset id -> end of lease
  std::string waiters;  // <prefix>{NAME}:waiters   hash id -> entry
  std::string writers;  // <prefix>{NAME}:writers   zset id -> ticket (not readers)
  // The run ledger (src/lock/lua/includes/ledger.lua): exec's runs of the
  // name, newest last, kept after the lock is gone.
  std::string runs;  // <prefix>{NAME}:runs   stream, one entry per run
  // Operators' marks on the name: a suspension (acquire refuses newcomers;
  // src/lock/lua/includes/suspension.lua) and a pending revoke of its
  // holders (revoke-3.lua), which holders running exec hear of at once on
  // the revoke channel.
  std::string suspended;       // <prefix>{NAME}:suspended  hash
  std::string revoke;          // <prefix>{NAME}:revoke     hash run id -> who asked
  std::string revoke_channel;  // <prefix>{NAME}:revoke     channel
  // The held locks under the prefix (src/lock/lua/includes/index.lua), for
  // status: the scripts that change a lock's lease keep its entry, where
  // the server lets them name this key beside the lock's (not on a Redis
  // Cluster).
  std::string index;  // <prefix>index   zset lock key -> end of lease
  // The names with a run ledger under the prefix (src/lock/lua/includes/
  // ledger.lua), for status: the scripts that write a ledger keep its
  // entry, where the server lets them (as for the index).
  std::string ledgers;  // <prefix>ledgers   zset ledger key -> when it expires
};

// Each script's ARGV by name, one struct per script, in the words of its
// file's header. to_args writes what EVALSHA takes after the SHA-1: the
// number of keys, the keys the script reads (taken from `keys`), then its
// ARGV in order.

// acquire-10.lua: take the lock, or re-enter it.
struct AcquireArgs {
  std::string token;  // the token a new holder gets
  Millis ttl{0};
  std::string host{};  // who asks, kept for status
  long long pid = 0;
  std::string cmd{};
  std::string reenter;  // the token to re-enter ("" for none)
  Claim::Mode mode = Claim::Mode::k_exclusive;
  int limit = 1;  // a semaphore's places (a reader's share sends 0)
  Millis min_hold{0};
  std::string waiter;               // the waiter's id in line ("" to not wait in line)
  bool fair = true;                 // false: skip the line of waiters
  Millis lease{0};                  // how long the waiter's entry lives unrefreshed
  std::optional<Millis> wait_left;  // how much longer it waits (nullopt: forever)
  std::string ticket;               // "", "clock" or the ticket settled on (Place::ticket)
  int max_waiters = 0;              // a newcomer is busy at once when this many wait (0: no bound)
  bool record_run = false;          // a new hold starts a run in the ledger
  bool run_later = false;           // with record_run: the ledger only checked (StartRunArgs begins it)
  Millis skip_ok_within{0};         // refuse when the last ok run ended this recently (0: never)
  std::string note{};               // kept with a new hold for status ("" for none)
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const AcquireArgs& a);

// release-9.lua: end a hold, one level or every level, or keep it under no
// token until its minimum hold is over: `redlock release`, an acquire
// undone, exec's end.
struct ReleaseArgs {
  enum class Levels { k_one, k_all };
  std::string token;
  Millis min_hold{0};  // kept under no token until then (0: none)
  Levels levels = Levels::k_one;
  bool quiet = false;   // tell no waiter: undoing an attempt that never counted as held
  long long floor = 0;  // levels that must stay (an exec running the caller holds them): none dropped below
  // The run ledger: "" (no run), "drop" (an acquire undone) or the run's
  // outcome; its exit status ("" for none), and the run as exec knows it.
  std::string run_end{};
  std::string exit{};
  std::string host{};
  long long pid = 0;
  std::string cmd{};
  long long fence = 0;
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const ReleaseArgs& a);

// renew-2.lua: extend the holder's lease.
struct RenewArgs {
  std::string token;
  Millis ttl{0};
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const RenewArgs& a);

// Status reads many locks a call: the scripts named <name>-<keys>n.lua
// take that many keys for each lock, and answer for as many of the locks as
// fit in one reply, from the first (their file's header says how many).

// inspect-4n.lua: read everything status shows of each lock (no ARGV).
struct InspectArgs {
  // Which keys of each lock: all four; the hash and the fence counter; or
  // one of the lock's marks alone, read as a hash would be (Redis Cluster).
  enum class Part { k_all, k_lock, k_suspended, k_revoke };
  Part part = Part::k_all;
};
[[nodiscard]] std::vector<std::string> to_args(std::span<const Keys> locks, const InspectArgs& a);

// raise-fence-2.lua: raise the fence counter to a quorum's fence.
struct RaiseFenceArgs {
  std::string token;  // the new holder, whose fence is raised with the counter
  long long fence = 0;
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const RaiseFenceArgs& a);

// break-7.lua: free the lock, whoever holds it, or only some holders.
struct BreakArgs {
  // The run ids of the only holders to remove, space-separated, '-' for a
  // lock kept under no token; "" for every holder.
  std::string runs{};
  std::string host{};  // who breaks it, told to the holders' execs
  long long pid = 0;   // (0: not said)
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const BreakArgs& a);

// leave-6.lua: a waiter leaves the line.
struct LeaveArgs {
  std::string waiter;
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const LeaveArgs& a);

// line-3n.lua: read the head of each lock's line of waiters, for status.
struct LineArgs {
  long long listed = 20;  // how many waiters at the head of each line to list (all are counted)
};
[[nodiscard]] std::vector<std::string> to_args(std::span<const Keys> locks, const LineArgs& a);

// history-2.lua: read the newest entries of the run ledger, and whether
// each running run's hold is still in the lock.
struct HistoryArgs {
  long long count = 100;
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const HistoryArgs& a);

// runs-1n.lua: the last run and the last ok run of each name, for status (no ARGV).
struct RunsArgs {};
[[nodiscard]] std::vector<std::string> to_args(std::span<const Keys> locks, const RunsArgs& a);

// suspend-3.lua: suspend the name, or resume it.
struct SuspendArgs {
  bool resume = false;
  std::string reason{};
  std::string host{};  // who suspends it
  long long pid = 0;
  Millis lapse_after{0};  // how long it lasts (0: until resumed)
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const SuspendArgs& a);

// start-run-3.lua: begin the run of a hold taken already (exec of several
// names, once every name is held).
struct StartRunArgs {
  std::string token;
  std::string host{};
  long long pid = 0;
  std::string cmd{};
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const StartRunArgs& a);

// revoke-2.lua: ask the holders to stop and give the lock back.
struct RevokeArgs {
  std::string host{};  // who asks
  long long pid = 0;
  Millis grace{0};  // how long a holder has to stop (0: its own --kill-after)
};
[[nodiscard]] std::vector<std::string> to_args(const Keys& keys, const RevokeArgs& a);

}  // namespace redlock::lock
