// renew-2.lua, release-9.lua and raise-fence-2.lua, row by row: what a
// holder does with its lock.

#include <gtest/gtest.h>

#include "rows.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::RaiseFenceArgs;
using lock::ReleaseArgs;
using lock::RenewArgs;
using lock::ScriptName;
using namespace std::chrono_literals;

template <typename Args>
std::vector<std::string> args(const Args& a) {
  return lock::to_args(keys(), a);
}

ReleaseArgs release_by(const std::string& token) {
  ReleaseArgs a;
  a.token = token;
  return a;
}

template <typename Change>
ReleaseArgs release_by(const std::string& token, Change change) {
  ReleaseArgs a = release_by(token);
  change(a);
  return a;
}

const std::string k_held_twice =
    "t:{a} = hash schema=redlock/1 token=T0 count=2 fence=5 host=h0 pid=10 cmd=c0 since_ms=NOW-1000 ttl_ms=30000 "
    "(px 30000)";
const std::string k_released = "t:{a}:released released";

std::vector<Row> rows() {
  const auto renew = ScriptName::k_renew;
  const auto release = ScriptName::k_release;
  const auto raise = ScriptName::k_raise_fence;
  return {
      {"TheHolderRenewsItsLease",
       renew,
       {"t:{a} = hash schema=redlock/1 token=T0 count=1 fence=5 host=h0 pid=10 cmd=c0 since_ms=NOW-1000 "
        "ttl_ms=5000 (px 5000)"},
       args(RenewArgs{"T0", 30s}),
       "{'renewed', 30000, 'exclusive', '1'}",
       {k_held_after, k_indexed}},
      {"ARenewalNeverShortensALease",
       renew,
       {k_held},
       args(RenewArgs{"T0", 1s}),
       "{'renewed', ~30000, 'exclusive', '1'}",
       {k_held_after, k_indexed}},
      {"AnotherTokenRenewsNothing", renew, {k_held}, args(RenewArgs{"T9", 30s}), "{'notheld'}", {k_held_after}},
      {"RenewingAFreeLockFindsNothing", renew, {}, args(RenewArgs{"T0", 30s}), "{'notheld'}", {}},
      {"ASemaphoreHolderRenewsItsOwnEntry",
       renew,
       {"t:{a} = hash schema=redlock/1 mode=semaphore limit=2 " + holder("T0", "h0", 10, "+5000") + " (px 5000)"},
       args(RenewArgs{"T0", 30s}),
       "{'renewed', 30000, 'semaphore', '2'}",
       {k_semaphore_after, k_indexed}},
      {"RenewingAForeignKeyLeavesItAlone",
       renew,
       {"t:{a} = string x"},
       args(RenewArgs{"T0", 30s}),
       "{'foreign', 'string'}",
       {"t:{a} = string x"}},

      {"TheHolderReleasesAndTheChannelHearsIt",
       release,
       {k_held, k_fence5},
       args(release_by("T0")),
       "{'released', 1, 0}",
       {k_fence5},
       {k_released}},
      {"ReleasingDropsOneLevelOfTwo",
       release,
       {k_held_twice, k_fence5},
       args(release_by("T0")),
       "{'decremented', 1, 1}",
       {k_held_after, k_fence5}},
      {"ExecsEndDropsEveryLevel",
       release,
       {k_held_twice, k_fence5},
       args(release_by("T0", [](ReleaseArgs& a) { a.levels = ReleaseArgs::Levels::k_all; })),
       "{'released', 2, 0}",
       {k_fence5},
       {k_released}},
      {"AMinimumHoldKeepsTheLockUnderNoToken",
       release,
       {k_held, k_fence5},
       args(release_by("T0", [](ReleaseArgs& a) { a.min_hold = 60s; })),
       "{'kept', 1, ~59000}",
       {"t:{a} = hash cmd=c0 count=0 fence=5 finished_ms=# host=h0 pid=10 schema=redlock/1 since_ms=# token= "
        "ttl_ms=30000 (px ~59000)",
        k_fence5, k_indexed}},
      {"AMinimumHoldThatIsOverReleases",
       release,
       {k_held, k_fence5},
       args(release_by("T0", [](ReleaseArgs& a) { a.min_hold = 500ms; })),
       "{'released', 1, 0}",
       {k_fence5},
       {k_released}},
      {"AReleaseAtTheFloorDropsNothing",
       release,
       {k_held, k_fence5, k_line_w1},
       args(release_by("T0", [](ReleaseArgs& a) { a.floor = 1; })),
       "{'floor', 1}",
       {k_held_after, k_fence5, k_line_w1_after}},
      {"AReleaseAboveTheFloorDropsOneLevel",
       release,
       {k_held_twice, k_fence5},
       args(release_by("T0", [](ReleaseArgs& a) { a.floor = 1; })),
       "{'decremented', 1, 1}",
       {k_held_after, k_fence5}},
      {"ASemaphoreHolderAtTheFloorKeepsItsPlace",
       release,
       {k_semaphore, k_fence5},
       args(release_by("T0", [](ReleaseArgs& a) { a.floor = 1; })),
       "{'floor', 1}",
       {k_semaphore_after, k_fence5}},
      {"AnotherTokenReleasesNothing",
       release,
       {k_held, k_fence5},
       args(release_by("T9")),
       "{'notheld'}",
       {k_held_after, k_fence5}},
      {"AReleaseWakesTheFirstInLine",
       release,
       {k_held, k_fence5, k_line_w1},
       args(release_by("T0")),
       "{'released', 1, 0}",
       {k_fence5, k_line_w1_after},
       {"t:{a}:released released W1", "t:{a}:released:W1 released W1"}},
      // The line moved: W2, at the head now with a far lease, has it cut
      // and is told, before the release names it.
      {"AReleasePrunesTheDeadAndTellsTheOneThatComesNear",
       release,
       {k_held, k_fence5, k_line_dead_w1_w2},
       args(release_by("T0")),
       "{'released', 1, 0}",
       {k_fence5, k_line_w2_after},
       {"t:{a}:released:W2 moved W2", "t:{a}:released released W2", "t:{a}:released:W2 released W2"}},
      {"UndoingQuietlyTellsNobody",
       release,
       {k_held, k_fence5, k_line_w1},
       args(release_by("T0", [](ReleaseArgs& a) { a.quiet = true; })),
       "{'released', 1, 0}",
       {k_fence5, k_line_w1_after}},
      {"ASemaphoreHolderLeavesTheOthersHolding",
       release,
       {k_semaphore_full, k_fence5},
       args(release_by("T0")),
       "{'released', 1, 1}",
       {"t:{a} = hash " + holder_after("T2", "h2", 12) + " limit=2 mode=semaphore schema=redlock/1 (px ~30000)",
        k_fence5, k_indexed},
       {k_released}},
      {"ReleasingAForeignKeyLeavesItAlone",
       release,
       {"t:{a} = string x"},
       args(release_by("T0")),
       "{'foreign', 'string'}",
       {"t:{a} = string x"}},

      {"RaisingMovesTheCounterAndTheHoldersFence",
       raise,
       {k_held, k_fence5},
       args(RaiseFenceArgs{"T0", 9000}),
       "{'raised', 9000}",
       {"t:{a} = hash cmd=c0 count=1 fence=9000 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=30000 "
        "(px ~30000)",
        "t:{a}:fence = string 9000"}},
      {"ACounterAboveTheFenceStays",
       raise,
       {k_held, "t:{a}:fence = string 10000"},
       args(RaiseFenceArgs{"T0", 9000}),
       "{'raised', 9000}",
       {"t:{a} = hash cmd=c0 count=1 fence=9000 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=30000 "
        "(px ~30000)",
        "t:{a}:fence = string 10000"}},
      {"ASemaphoreHoldersEntryIsRaised",
       raise,
       {k_semaphore, k_fence5},
       args(RaiseFenceArgs{"T0", 9000}),
       "{'raised', 9000}",
       {R"(t:{a} = hash h:T0={"cmd":"c0","count":1,"expiry":#,"fence":"9000","host":"h0","pid":10,"since":#,)"
        R"("ttl":30000} limit=2 mode=semaphore schema=redlock/1 (px ~30000))",
        "t:{a}:fence = string 9000"}},
      {"AnUnusableFenceIsRefused",
       raise,
       {k_held, k_fence5},
       args(RaiseFenceArgs{"T0", 0}),
       "error: *the request to raise t:{a}:fence holds 0, not a fence redlock hands out*: nothing was written",
       {k_held_after, k_fence5}},
      {"ACounterThatIsNotANumberIsLeftAlone",
       raise,
       {k_held, "t:{a}:fence = string abc"},
       args(RaiseFenceArgs{"T0", 9000}),
       "error: *the fence counter t:{a}:fence is not a number",
       {k_held_after, "t:{a}:fence = string abc"}},
  };
}

class HoldScripts : public testing::TestWithParam<Row> {};

TEST_P(HoldScripts, Row) {
  run(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rows, HoldScripts, testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace redlock::test
