#pragma once

// A model of a lock's line of waiters, for line_model_test.cpp: the steps
// that waiters and holders take, what each sends to the scripts, and what
// must come back by a few rules of the line:
// - a writer goes when the lock is free and no live waiter is ahead of it;
//   a reader when the lock is free or held by readers and no live writer
//   is ahead of it (readers that queued together go together, a writer is
//   never overtaken by a later reader);
// - a busy waiter keeps its place, and a new one goes to the back, behind
//   every live waiter (FIFO in the server's order: its ticket is higher);
// - a waiter whose lease ran out is skipped, and pruned at the next call
//   that prunes; whenever that moves the line, a waiter that comes within
//   k_near places of the head has its far lease cut to k_near_lease and is
//   told, so a head that stops is skipped within the near lease;
// - a release, a break or a leave names the waiters at the head that can go
//   now;
// - never two writers, never a writer beside readers.
//
// Time. The scripts read the server's clock (TIME) and nothing else, so the
// model cannot move it; it chooses leases instead. A lease or TTL is either
// long (it outlives any sequence: line_model_test.cpp discards one that
// takes longer) or short, asked only by a step that then pauses before
// anything else is read: "stop" (a waiter's last beat), "crash" (several
// waiters' last beats) and "brief" (a holder whose TTL runs out). What has
// run out is then certain, and the model stays exact.

#include <chrono>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lock/claim.hpp"
#include "lock/scripts.hpp"

namespace redlock::test::line_model {

using Mode = lock::Claim::Mode;
inline constexpr Mode k_writer = Mode::k_exclusive;
inline constexpr Mode k_reader = Mode::k_shared;

inline constexpr int k_clients = 7;                     // more than k_near wait at times
inline constexpr Millis k_long{60000};                  // a lease or TTL no sequence outlives
inline constexpr Millis k_short{1};                     // one that has run out at the step's pause
inline constexpr Millis k_crash_lease{30};              // the leases of waiters that stop together
inline constexpr std::chrono::milliseconds k_pause{5};  // server time moving past short leases
// includes/line.lua's: the first k_near places beat with a lease of at most
// k_near_lease.
inline constexpr size_t k_near = 4;
inline constexpr long long k_near_lease = 2000;

// ---- The steps ----

enum class Op {
  k_join,
  k_stop,
  k_crash,
  k_leave,
  k_take,
  k_brief,
  k_reenter,
  k_renew,
  k_release,
  k_release_all,
  k_break,
  k_tick
};

struct Step {
  Op op = Op::k_tick;
  int client = 0;  // crash: a set of clients, one bit each
  Mode mode = k_writer;
};

// Client c joins the line or, in it, beats (an acquire with its waiter id).
inline Step join(int c, Mode m = k_writer) {
  return {Op::k_join, c, m};
}
// Its last beat: the lease it asks ends at once, and time moves past it.
inline Step stop(int c, Mode m = k_writer) {
  return {Op::k_stop, c, m};
}
// Those of `clients` that wait stop together (a host dies): each beats with
// a lease of k_crash_lease, one after the other, and time moves past them.
inline Step crash(std::initializer_list<int> clients) {
  Step s{Op::k_crash, 0};
  for (int c : clients) {
    s.client |= 1 << c;
  }
  return s;
}
inline Step leave(int c) {
  return {Op::k_leave, c};
}
// An acquire without waiting (no waiter id).
inline Step take(int c, Mode m = k_writer) {
  return {Op::k_take, c, m};
}
// The same with a TTL that ends at once, and time moves past it.
inline Step brief(int c, Mode m = k_writer) {
  return {Op::k_brief, c, m};
}
// The holder's token acquires again, in mode m.
inline Step reenter(int c, Mode m = k_writer) {
  return {Op::k_reenter, c, m};
}
// Renew or release (one level, or all) with the client's token, held or not.
inline Step renew(int c) {
  return {Op::k_renew, c};
}
inline Step release(int c) {
  return {Op::k_release, c};
}
inline Step release_all(int c) {
  return {Op::k_release_all, c};
}
inline Step break_lock() {
  return {Op::k_break};
}
inline Step tick() {
  return {Op::k_tick};
}

// A step as the code that makes it: a shrunk sequence pastes into a test.
[[nodiscard]] std::string code_of(const Step& s);

// ---- The model ----

struct Waiter {
  int client = 0;
  Mode mode = k_writer;
  bool far = false;       // its lease is a far one: it beat more than k_near places back
  bool stopping = false;  // its last beat asked a lease that ends at the step's pause
  bool dead = false;      // that lease ended: skipped, and gone at the next prune
};

struct Holder {
  int client = 0;
  std::string token;
  Mode mode = k_writer;
  int count = 1;       // levels of re-entry
  bool brief = false;  // its TTL ends before the next step
};

struct Model {
  std::vector<Waiter> line;           // in the order they joined, dead ones until pruned
  bool line_lasts = false;            // the line's keys outlive a tick: some beat in them was long
  std::vector<Holder> holders;        // one writer, or readers
  std::map<int, std::string> lapsed;  // a client's token that no longer holds
  int tokens = 0;                     // tokens handed out
};

// What one call sends, and what must come back.
struct Expect {
  std::pair<lock::ScriptName, std::vector<std::string>> call;
  std::string reply;                   // a pattern (table.hpp)
  std::vector<std::string> published;  // "channel message", in any order
  std::string granted;                 // a new holder's token: its fence exceeds every earlier one
  std::string reentered;               // a re-entered token: its fence is the one it got
  std::optional<bool> held;            // a busy reply: whether the holder's TTL left is positive
  int waiter = -1;                     // a busy waiter, whose ticket is
  bool new_entry = false;              // new (behind everyone's in line) or the one it had
  std::vector<int> behind;             // those in line when it joined
};

// One step: its calls, one after the other, then a pause (server time
// moving) if it has one.
struct Play {
  std::vector<Expect> calls;
  std::chrono::milliseconds pause{0};
};

// Whether the model allows step s in state m.
[[nodiscard]] bool allowed(const Model& m, const Step& s);
// Applies step s to the model; what it sends and must get back.
[[nodiscard]] Play next(Model& m, const Step& s);
// The line and the holders, for a message.
[[nodiscard]] std::string describe(const Model& m);
// Client c's waiter id.
[[nodiscard]] std::string waiter_id(int c);
// Where c stands in the line (dead or alive), or the line's length.
[[nodiscard]] size_t index_of(const Model& m, int c);
// Whether c waits in line (alive), or holds the lock.
[[nodiscard]] bool waits(const Model& m, int c);
[[nodiscard]] bool holds(const Model& m, int c);

}  // namespace redlock::test::line_model
