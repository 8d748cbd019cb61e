// The run ledger's decisions, table-driven, without any server: what an
// entry says, how every server's runs come together, and overdue.

#include "lock/ledger.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ledger/runs.hpp"

namespace redlock::lock {
namespace {

using ledger::decide_overdue;
using ledger::merge_runs;
using ledger::Overdue;

// A run: "id:outcome:start:end" (start or end "-" for none).
Run run(const std::string& id, Outcome outcome, std::optional<long long> start, std::optional<long long> end,
        long long fence = 1) {
  Run r;
  r.id = id;
  r.outcome = outcome;
  r.host = "h-" + id;
  r.start_ms = start;
  r.end_ms = end;
  r.fence = fence;
  return r;
}

std::string ids(const std::vector<Run>& runs) {
  std::string out;
  for (const Run& r : runs) {
    out += (out.empty() ? "" : " ") + r.id + "=" + outcome_name(r.outcome);
  }
  return out;
}

TEST(Ledger, EveryOutcomeReadsBackByItsName) {
  for (Outcome o : {Outcome::k_running, Outcome::k_ok, Outcome::k_failed, Outcome::k_signalled, Outcome::k_lost,
                    Outcome::k_timed_out, Outcome::k_revoked, Outcome::k_abandoned}) {
    EXPECT_EQ(outcome_named(outcome_name(o)), o) << outcome_name(o);
  }
  EXPECT_FALSE(outcome_named("exploded"));
}

TEST(Ledger, AnEntryReadsAsARun) {
  const auto r = read_run({{"run", "abc"},
                           {"outcome", "failed"},
                           {"host", "web-3"},
                           {"pid", "4411"},
                           {"cmd", "backup"},
                           {"fence", "17"},
                           {"start_ms", "1000"},
                           {"end_ms", "4500"},
                           {"exit", "3"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, Outcome::k_failed);
  EXPECT_EQ(r->pid, 4411);
  EXPECT_EQ(r->exit, 3);
  EXPECT_EQ(r->duration(), Millis(3500));
}

TEST(Ledger, WhatAnEntryLacksStaysUnknown) {
  struct Row {
    std::vector<std::pair<std::string, std::string>> fields;
    bool read;
  };
  const Row rows[] = {
      {{{"run", "a"}, {"outcome", "ok"}}, true},
      {{{"outcome", "ok"}}, false},                      // no run id
      {{{"run", "a"}, {"outcome", "exploded"}}, false},  // an outcome this redlock does not know
      {{{"run", "a"}}, false},                           // no outcome
      {{{"run", "a"}, {"outcome", "ok"}, {"exit", "x"}, {"start_ms", ""}, {"pid", "-"}}, true},
  };
  for (const auto& r : rows) {
    const auto got = read_run(r.fields);
    EXPECT_EQ(got.has_value(), r.read);
    if (got) {
      EXPECT_FALSE(got->exit);
      EXPECT_FALSE(got->start_ms);
      EXPECT_FALSE(got->duration());
    }
  }
  const auto running = read_run({{"run", "a"}, {"outcome", "running"}, {"end_ms", "5"}});
  ASSERT_TRUE(running);
  EXPECT_FALSE(running->end_ms) << "a run still running has no end";
}

TEST(Ledger, TheCommandsStatusGivesTheOutcome) {
  EXPECT_EQ(outcome_of_command(0, false, false), Outcome::k_ok);
  EXPECT_EQ(outcome_of_command(3, false, false), Outcome::k_failed);
  EXPECT_EQ(outcome_of_command(127, false, false), Outcome::k_failed);
  EXPECT_EQ(outcome_of_command(137, true, false), Outcome::k_signalled);
  EXPECT_EQ(outcome_of_command(130, false, false), Outcome::k_failed) << "exit 130 is not a signal";
  EXPECT_EQ(outcome_of_command(0, false, true), Outcome::k_lost);
  EXPECT_EQ(outcome_of_command(143, true, false, true), Outcome::k_timed_out);
  EXPECT_EQ(outcome_of_command(143, true, true, true), Outcome::k_lost) << "a lock lost first is lost";
}

TEST(Ledger, EveryServersRunsComeTogetherOnceEach) {
  struct Row {
    std::vector<std::vector<lock::Run>> servers;
    std::string merged;
  };
  const Row rows[] = {
      {{}, ""},
      {{{run("a", Outcome::k_ok, 1, 2)}}, "a=ok"},
      // One server restarted empty loses nothing visible.
      {{{run("b", Outcome::k_ok, 5, 6), run("a", Outcome::k_ok, 1, 2)}, {}, {run("a", Outcome::k_ok, 1, 2)}},
       "b=ok a=ok"},
      // Newest first by start, whatever order the servers gave.
      {{{run("a", Outcome::k_ok, 1, 2)}, {run("c", Outcome::k_failed, 9, 10), run("b", Outcome::k_ok, 5, 6)}},
       "c=failed b=ok a=ok"},
      // The run's own end beats the next acquire's "abandoned" and "running".
      {{{run("a", Outcome::k_abandoned, 1, {})}, {run("a", Outcome::k_lost, 1, 4)}}, "a=lost"},
      {{{run("a", Outcome::k_running, 1, {})}, {run("a", Outcome::k_abandoned, 1, {})}}, "a=abandoned"},
      // Servers that disagree on an end: the most of them win.
      {{{run("a", Outcome::k_lost, 1, 3)}, {run("a", Outcome::k_ok, 1, 3)}, {run("a", Outcome::k_ok, 1, 3)}}, "a=ok"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(ids(merge_runs(r.servers)), r.merged);
  }
}

TEST(Ledger, AMergedRunHasTheLargestFence) {
  const auto merged = merge_runs({{run("a", Outcome::k_ok, 1, 2, 5)}, {run("a", Outcome::k_ok, 1, 2, 9)}});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].fence, 9);
}

TEST(Ledger, OverdueGoesByTheNewestOkRunsEnd) {
  struct Row {
    std::vector<lock::Run> runs;
    long long now_ms;
    bool overdue;
    std::string last;
  };
  const Row rows[] = {
      {{}, 100'000, true, ""},
      {{run("a", Outcome::k_ok, 0, 50'000)}, 100'000, false, "a"},
      {{run("a", Outcome::k_ok, 0, 50'000)}, 200'000, true, "a"},
      // Failed and abandoned runs since do not count; nor does one running.
      {{run("c", Outcome::k_running, 90'000, {}), run("b", Outcome::k_failed, 80'000, 85'000),
        run("a", Outcome::k_ok, 0, 10'000)},
       100'000,
       true,
       "a"},
      // The newest by its end, not its start.
      {{run("b", Outcome::k_ok, 70'000, 75'000), run("a", Outcome::k_ok, 60'000, 95'000)}, 100'000, false, "a"},
  };
  for (const auto& r : rows) {
    const Overdue d = decide_overdue(r.runs, r.now_ms, Millis(60'000));
    EXPECT_EQ(d.overdue, r.overdue) << r.last;
    EXPECT_EQ(d.last_ok ? d.last_ok->id : "", r.last);
  }
}

}  // namespace
}  // namespace redlock::lock
