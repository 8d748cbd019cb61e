#pragma once

// What a server holds for a lock, as the reply readers (answers.cpp,
// layout.cpp) decode it: its holders, its line of waiters, the operators'
// marks, and the runs an acquire's answer names. status judges these
// across servers (status/verdict.hpp); the lock's own rounds read them too
// (a break's holders, a refused acquire's suspension), so they stay here.

#include <optional>
#include <string>
#include <vector>

#include "lock/claim.hpp"

namespace redlock::lock {

// A run in a lock's ledger as an acquire's answer names it: the run before
// a new hold that never ended (abandoned), or the last ok run that made a
// server refuse (skipped), with that server's clock.
struct RunSeen {
  std::string host;
  std::string pid;
  long long start_ms = 0;  // abandoned: when it started (server time, 0 if not known)
  long long end_ms = 0;    // skipped: when it ended (server time)
  long long now_ms = 0;    // skipped: the server's clock
};

// A name suspended (redlock suspend) as a server's marker says: acquire
// refuses newcomers until it lapses or is resumed.
struct Suspension {
  std::string reason;
  std::string host, pid;    // who suspended it
  long long since_ms = 0;   // since when (server time)
  long long until_ms = -1;  // until when (server time); -1: until resumed
  long long now_ms = 0;     // the server's clock when it answered
};

// One holder of a lock as one server sees it.
struct HolderView {
  std::string token;
  std::string host;
  long long pid = 0;
  std::string cmd;
  long long since_ms = 0;  // server time of acquisition
  long long ttl_ms = 0;    // time left
  long long fence = 0;     // 0: the stored one is not a fence redlock hands out (see usable_fence)
  long long count = 0;     // re-entry depth
  // Held only for its minimum hold (--hold-at-least): the holder above has
  // finished (at finished_ms, server time) and no token holds the lock.
  bool kept = false;
  long long finished_ms = 0;
  std::string note{};  // --note ("" for none)
};

// A revoke asked of one hold (revoke-2.lua's mark), pending while the hold
// lasts.
struct PendingRevoke {
  std::string run;  // the hold's run id (lock::hold_id of its token)
  std::string host, pid;
  long long since_ms = 0;  // when it was asked (server time)
  long long grace_ms = 0;  // 0: the holder's own --kill-after
};

// One waiter in a lock's line (fair waiting), for `status`.
struct WaiterView {
  std::string id;        // the waiter's id in the line
  long long ticket = 0;  // its place in the server's order (smaller: earlier)
  std::string host;
  long long pid = 0;
  std::string cmd;
  long long since_ms = 0;   // server time it started waiting
  long long until_ms = -1;  // server time its --wait ends; -1: it waits for as long as it takes
  long long age_ms = 0;     // how long it has waited, by the server's clock
  long long left_ms = -1;   // how long it will wait still; -1: as long as it takes
  // What it waits for.
  Claim::Mode mode = Claim::Mode::k_exclusive;
};

// One server's view of a lock, for `status`.
struct ServerView {
  std::string endpoint;              // display URL
  std::optional<std::string> error;  // unreachable / error text
  std::string type;                  // "none", "hash", or a foreign type
  bool foreign = false;
  long long now_ms = 0;                  // server TIME
  long long ttl_ms = -2;                 // the key's PTTL
  long long limit = 1;                   // a semaphore's limit
  std::vector<HolderView> holders;       // live holders
  std::vector<WaiterView> waiters;       // the head of the live line of waiters, first come first
  long long waiting = 0;                 // how many are alive in the whole line
  std::optional<Suspension> suspension;  // the name is suspended (held or not)
  std::vector<PendingRevoke> revokes;    // revokes asked of holds (maybe past ones)
  // While held: the mode it is held in.
  Claim::Mode mode = Claim::Mode::k_exclusive;
  [[nodiscard]] bool held() const { return !error && !foreign && !holders.empty(); }
};

}  // namespace redlock::lock
