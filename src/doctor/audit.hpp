#pragma once

// What `redlock doctor` asks each server, without taking a lock: whether it
// answers and accepts the credentials, its clock and round trip, INFO, the
// CONFIG values that matter to locks, the ACL rights the scripts need
// (lua/rights-1.lua), CLUSTER INFO, and for redis+sentinel:// the
// sentinels' down-after-milliseconds. doctor/checks.hpp judges the answers.

#include <vector>

#include "doctor/checks.hpp"
#include "lock/locker.hpp"
#include "redis/endpoint.hpp"
#include "util/cancel.hpp"

namespace redlock::doctor {

// Every server's facts, in the order of `endpoints`. Never throws for a
// server that cannot be reached or refuses: that is a fact like the others.
// Bounded by the timeouts in `options`; `cancel` cuts it short.
[[nodiscard]] std::vector<ServerFacts> audit(const std::vector<redis::Endpoint>& endpoints,
                                             const lock::Options& options, const Cancel& cancel);

// What `status --format prometheus` reports of each server, at the cost of
// one round trip: whether it answers (failure), and the CONFIG values of
// evicts_locks() and restart_forgets_locks(). Never throws for a server.
[[nodiscard]] std::vector<ServerFacts> probe(const std::vector<redis::Endpoint>& endpoints,
                                             const lock::Options& options, const Cancel& cancel);

}  // namespace redlock::doctor
