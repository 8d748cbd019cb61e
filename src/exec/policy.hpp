#pragma once

// What exec does when the lock is lost, and its clock for CMD: small
// policy types that the command line fills in, apart from the supervisor
// (exec/supervisor) so that reading options needs no lock or Redis header.

#include <optional>

#include "util/duration.hpp"

namespace redlock::exec {

enum class OnLost { k_term, k_kill, k_ignore };

struct Policy {
  OnLost on_lost = OnLost::k_term;
  Millis kill_after{5000};            // SIGTERM → SIGKILL grace
  std::optional<Millis> max_runtime;  // CMD's group gets SIGTERM when it has run this long
  std::optional<Millis> warn_after;   // one line when CMD still runs after this long
};

}  // namespace redlock::exec
