// What history (and history --max-age) prints of a name's runs, as pure
// functions: the table, fitted to a terminal's width, and the decision's
// line, each time as every text line of redlock's writes one.

#include "cli/show/history_format.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lines.hpp"
#include "util/text.hpp"

namespace redlock::cli {
namespace {

using redlock::test::lines_of;

// 2024-12-02T03:00:01Z.
constexpr long long k_start = 1'733'108'401'000;

lock::Run ended(std::string host, long long pid, lock::Outcome outcome, std::optional<int> exit, std::string cmd,
                long long took_ms) {
  lock::Run r;
  r.id = host + std::to_string(pid);
  r.host = std::move(host);
  r.pid = pid;
  r.outcome = outcome;
  r.exit = exit;
  r.cmd = std::move(cmd);
  r.start_ms = k_start;
  r.end_ms = k_start + took_ms;
  return r;
}

const std::string k_long_command =
    "/opt/backup/bin/nightly-backup --target s3://backups-eu-west-1/accounting --compress zstd --verify";

std::vector<lock::Run> some_runs() {
  return {ended("web-3", 4411, lock::Outcome::k_ok, 0, k_long_command, 723'000),
          ended("db-primary-1", 28115, lock::Outcome::k_failed, 2, "/opt/backup.sh", 41'000)};
}

TEST(HistoryTable, StartsAreInUtcWithAZoneAndAPipeGetsEveryColumnWhole) {
  const std::string table = history_table(some_runs(), k_start + 3'600'000);
  const std::vector<std::string> lines = lines_of(table);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "STARTED               HOST          PID    TOOK   OUTCOME          CMD");
  EXPECT_EQ(lines[1], "2024-12-02T03:00:01Z  web-3         4411   12m3s  ok               " + k_long_command);
  EXPECT_EQ(lines[2], "2024-12-02T03:00:01Z  db-primary-1  28115  41s    failed (exit 2)  /opt/backup.sh");
}

TEST(HistoryTable, OnATerminalItFitsCuttingTheCommandFirstAndNoOtherValue) {
  for (const size_t width : {80U, 60U}) {
    SCOPED_TRACE(width);
    const std::string table = history_table(some_runs(), k_start + 3'600'000, width);
    for (const auto& line : lines_of(table)) {
      EXPECT_LE(text_columns(line), width) << line;
    }
    // The start, the host and the outcome are never cut.
    EXPECT_NE(table.find("2024-12-02T03:00:01Z  web-3 "), std::string::npos) << table;
    EXPECT_NE(table.find("2024-12-02T03:00:01Z  db-primary-1  "), std::string::npos) << table;
    EXPECT_NE(table.find("  failed (exit 2)"), std::string::npos) << table;
    if (width == 80) {
      // CMD, cut with an ellipsis to what is left of the width.
      EXPECT_NE(table.find("  ok               /opt/backup/\xe2\x80\xa6\n"), std::string::npos) << table;
      EXPECT_NE(table.find("  failed (exit 2)  /opt/backup.\xe2\x80\xa6\n"), std::string::npos) << table;
      EXPECT_NE(table.find("  12m3s  "), std::string::npos) << "TOOK whole: " << table;
    } else {
      // Too narrow for CMD, then for PID: left out, not cut.
      EXPECT_EQ(table.find("CMD"), std::string::npos) << table;
      EXPECT_EQ(table.find("4411"), std::string::npos) << table;
      EXPECT_EQ(table.find("\xe2\x80\xa6"), std::string::npos) << table;
    }
  }
}

TEST(HistoryTable, ALongHostIsCutOnlyWhenNothingElseIsLeftToGive) {
  const std::vector<lock::Run> runs = {ended(std::string(60, 'h'), 1, lock::Outcome::k_signalled, 143, "./job", 1'000)};
  const std::string table = history_table(runs, k_start + 2'000, 60);
  for (const auto& line : lines_of(table)) {
    EXPECT_LE(text_columns(line), 60U) << line;
  }
  // CMD, PID and TOOK left out first; then HOST cut to what is left.
  EXPECT_NE(table.find("2024-12-02T03:00:01Z  " + std::string(21, 'h') + "\xe2\x80\xa6  signalled (15)\n"),
            std::string::npos)
      << table;
}

TEST(OverdueLine, NamesTheLastOkRunsEndInUtc) {
  ledger::Overdue d;
  d.overdue = false;
  d.last_ok = ended("web-3", 4411, lock::Outcome::k_ok, 0, "/opt/backup.sh", 723'000);
  d.age = Millis(21'723'000);
  EXPECT_EQ(overdue_line("nightly-backup", d, Millis(93'600'000)),
            "nightly-backup is on time: its last ok run ended 6h2m ago on web-3 (pid 4411, 2024-12-02T03:12:04Z), "
            "within --max-age 26h");
}

}  // namespace
}  // namespace redlock::cli
