// The index of held locks (includes/index.lua), row by row: acquire,
// renew, release and break keep a lock's entry in t:index where the
// caller names it, leave an index that is not redlock's alone, and prune
// entries whose lease ended a few at a time.

#include <gtest/gtest.h>

#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::ScriptName;
using namespace std::chrono_literals;

template <typename Args>
std::vector<std::string> args(const Args& a) {
  return lock::to_args(keys(), a);
}

// The arguments of `script` as sent to a server that refuses its optional
// keys (a Redis Cluster): without the indexes, the last of the keys.
template <typename Args>
std::vector<std::string> args_without_index(lock::ScriptName script, const Args& a) {
  std::vector<std::string> v = lock::to_args(keys(), a);
  const size_t n = std::stoul(v[0]);
  const auto optional = static_cast<size_t>(lock::script(script).optional_keys);
  v[0] = std::to_string(n - optional);
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(n - optional + 1), v.begin() + static_cast<std::ptrdiff_t>(n + 1));
  return v;
}

lock::AcquireArgs take(const std::string& token) {
  lock::AcquireArgs a;
  a.token = token;
  a.ttl = 30s;
  a.host = "h1";
  a.pid = 11;
  a.cmd = "c1";
  a.lease = 10s;
  return a;
}

const std::string k_t1_holds =
    "t:{a} = hash cmd=c1 count=1 fence=# host=h1 pid=11 schema=redlock/1 since_ms=# token=T1 ttl_ms=30000 (px ~30000)";
const std::string k_some_fence = "t:{a}:fence = string #";
const std::string k_released = "t:{a}:released released";
// Lock "a" in the index beside lock "b", each until 30 s from now.
const std::string k_index_a_b = "t:index = zset t:{a}=NOW+30000 t:{b}=NOW+30000 redlock/1=inf";

std::vector<Row> rows() {
  const auto acquire = ScriptName::k_acquire;
  const auto renew = ScriptName::k_renew;
  const auto release = ScriptName::k_release;
  const auto brk = ScriptName::k_break;
  return {
      {"ATakenLockIsIndexedUntilItsLeaseEnds",
       acquire,
       {},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, "t:index = zset t:{a}=~NOW+30100 redlock/1=inf"}},
      {"ABusyAnswerWritesNoIndex",
       acquire,
       {k_held, k_fence5},
       args(take("T1")),
       "{'busy', ~30000, 'h0', '10', 0, 0, 0, 'c0', 1, '', #, ''}",
       {k_held_after, k_fence5}},
      {"WithoutTheIndexKeyNothingIsIndexed",
       acquire,
       {},
       args_without_index(acquire, take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence}},
      {"AnIndexWithoutTheMarkerIsLeftAlone",
       acquire,
       {"t:index = zset t:{z}=5"},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, "t:index = zset t:{z}=5"}},
      {"AnIndexOfAnotherTypeIsLeftAlone",
       acquire,
       {"t:index = string mine"},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       {k_t1_holds, k_some_fence, "t:index = string mine"}},
      {"EntriesWhoseLeaseEndedArePrunedEightAtATime",
       acquire,
       {"t:index = zset t:{d1}=NOW-10 t:{d2}=NOW-9 t:{d3}=NOW-8 t:{d4}=NOW-7 t:{d5}=NOW-6 t:{d6}=NOW-5 t:{d7}=NOW-4 "
        "t:{d8}=NOW-3 t:{d9}=NOW-2 t:{b}=NOW+20000 redlock/1=inf"},
       args(take("T1")),
       "{'acquired', 'T1', #, 1, 30000}",
       // The longest dead go first; the last one waits for the next write.
       {k_t1_holds, k_some_fence, "t:index = zset t:{d9}=NOW-2 t:{b}=NOW+20000 t:{a}=# redlock/1=inf"}},

      {"ARenewalMovesTheEntryWithTheLease",
       renew,
       {k_held, "t:index = zset t:{a}=NOW+1000 redlock/1=inf"},
       args(lock::RenewArgs{"T0", 60s}),
       "{'renewed', 60000, 'exclusive', '1'}",
       {"t:{a} = hash cmd=c0 count=1 fence=5 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=60000 "
        "(px ~60000)",
        "t:index = zset t:{a}=~NOW+60100 redlock/1=inf"}},
      {"ARenewalIndexesALockTakenWithoutIt",
       renew,
       {k_held},
       args(lock::RenewArgs{"T0", 30s}),
       "{'renewed', ~30000, 'exclusive', '1'}",
       {k_held_after, k_indexed}},

      {"AReleasedLockLeavesTheIndex",
       release,
       {k_held, k_fence5, k_index_a_b},
       args(lock::ReleaseArgs{.token = "T0"}),
       "{'released', 1, 0}",
       {k_fence5, "t:index = zset t:{b}=NOW+30000 redlock/1=inf"},
       {k_released}},
      {"AKeptLockStaysIndexedForItsMinimumHold",
       release,
       {k_held, k_fence5, k_index_a_b},
       args(lock::ReleaseArgs{.token = "T0", .min_hold = 60s}),
       "{'kept', 1, ~59000}",
       {"t:{a} = hash cmd=c0 count=0 fence=5 finished_ms=# host=h0 pid=10 schema=redlock/1 since_ms=# token= "
        "ttl_ms=30000 (px ~59000)",
        k_fence5, "t:index = zset t:{b}=NOW+30000 t:{a}=~NOW+59100 redlock/1=inf"}},
      {"ReleasingAFreeLockCreatesNoIndex", release, {}, args(lock::ReleaseArgs{.token = "T0"}), "{'notheld'}", {}},

      {"ABrokenLockLeavesTheIndex",
       brk,
       {k_held, k_fence5, k_index_a_b},
       args(lock::BreakArgs{}),
       "{'broken', 'exclusive', '1', '#', {{'T0', 'h0', '10', 'c0', '#', '5', '1'}}}",
       {k_fence5, "t:index = zset t:{b}=NOW+30000 redlock/1=inf"},
       {k_told_broken_t0, k_released}},
      {"BreakingALockThatExpiredDropsItsEntry",
       brk,
       {k_fence5, k_index_a_b},
       args(lock::BreakArgs{}),
       "{'free'}",
       {k_fence5, "t:index = zset t:{b}=NOW+30000 redlock/1=inf"}},
  };
}

class IndexRows : public testing::TestWithParam<Row> {};

TEST_P(IndexRows, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, IndexRows, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
