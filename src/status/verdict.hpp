#pragma once

// status's verdict: the overall picture of one lock from every server's
// view of it (survey.hpp reads the views). Pure functions, tested
// table-driven in tests/unit/status/verdict_test.cpp with no server.

#include <optional>
#include <string>
#include <vector>

#include "lock/claim.hpp"
#include "lock/ledger.hpp"
#include "lock/view.hpp"

namespace redlock::status {

// The overall picture of one lock across all servers.
struct Verdict {
  enum class State { k_free, k_held, k_foreign };
  std::string name;
  State state = State::k_free;
  std::string foreign_type;
  lock::Claim::Mode mode = lock::Claim::Mode::k_exclusive;  // held: the mode it is held in
  long long limit = 1;
  long long now_ms = 0;                   // server time of the view the holders come from
  std::vector<lock::HolderView> holders;  // holders with a quorum, oldest first
  std::vector<lock::WaiterView> waiters;  // the head of the line on any server, first come first
  long long waiting = 0;                  // how many wait in line (the longest server's line)
  std::vector<lock::ServerView> views;
  lock::LastRuns runs;  // its last run and last ok run (ledger::last_runs; none for a foreign key)
  std::optional<lock::Suspension> suspension;  // suspended, as the first server that says so has it
  // Revokes pending for holders in `holders` (matched by run), one each.
  std::vector<lock::PendingRevoke> revokes;
  // Neither held nor foreign, but with something to show: a suspension.
  [[nodiscard]] bool shown() const { return state != State::k_free || suspension.has_value(); }
};

using State = Verdict::State;

// A holder counts when as many servers as its mode needs agree on its token
// (the merged view: smallest TTL, largest fence and count); the lock is
// foreign when a majority of servers hold a foreign key.
[[nodiscard]] Verdict judge(std::string name, std::vector<lock::ServerView> views);

}  // namespace redlock::status
