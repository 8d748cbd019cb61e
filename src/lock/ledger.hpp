#pragma once

// The run ledger of a lock name (<prefix>{NAME}:runs, lua/includes/ledger.lua)
// as the lock's scripts and their readers need it, apart from any I/O:
// what a run is, its outcomes, and how exec's command ended. Reading the
// ledgers back as one list is ledger/runs.hpp. Pure functions, tested
// table-driven in tests/unit/lock/ledger_test.cpp.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/duration.hpp"

namespace redlock::lock {

// How a run ended, in the ledger's words (outcome_name).
enum class Outcome { k_running, k_ok, k_failed, k_signalled, k_lost, k_timed_out, k_revoked, k_abandoned };

// "running", "ok", "failed", "signalled", "lost", "timed-out", "revoked", "abandoned".
[[nodiscard]] const char* outcome_name(Outcome outcome);
// The outcome a name stands for (outcome_name's inverse), nullopt for any other.
[[nodiscard]] std::optional<Outcome> outcome_named(std::string_view name);

// One run of exec as the ledger keeps it.
struct Run {
  std::string id;  // the run's id: the same on every server (never the token)
  Outcome outcome = Outcome::k_running;
  std::string host;
  long long pid = 0;
  std::string cmd;
  long long fence = 0;
  std::optional<long long> start_ms;  // server time; nullopt when not known
  std::optional<long long> end_ms;    // nullopt while running, and for an abandoned run
  std::optional<int> exit;            // the exit status, when there is one
  // A running run: whether its hold is still in the lock on a server that
  // has the run (false: its redlock is gone and nobody recorded its end;
  // history says "abandoned?"); nullopt for an ended run, or not known.
  std::optional<bool> held;
  [[nodiscard]] std::optional<Millis> duration() const;
};

// A run from an entry's fields (name, value pairs); nullopt for an entry
// without a run id or with an outcome this redlock does not know.
[[nodiscard]] std::optional<Run> read_run(const std::vector<std::pair<std::string, std::string>>& fields);

// The outcome of exec's run: the lock lost while CMD ran (`lost`), else
// ended by --max-runtime (`timed_out`), else by CMD's status (0 ok; 128+N
// after signal N, when `signalled`; else failed).
[[nodiscard]] Outcome outcome_of_command(int status, bool signalled, bool lost, bool timed_out = false);

// What status shows of a name's runs: its last run (the newest by start)
// and its last ok run, with the clock of a server that said (server ms).
struct LastRuns {
  std::optional<Run> last;
  std::optional<Run> last_ok;
  long long now_ms = 0;
  bool read = false;  // the ledgers were read (status without names, as a table, does not)
};

}  // namespace redlock::lock
