// The wait report on a fake clock and a fake stderr: its first line, the
// live line on a terminal, a line a minute in a log, the line when the lock
// is taken, and none of it under -q. Milliseconds, however long the wait.

#include "cli/take/wait_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class FakeScreen final : public ReportScreen {
 public:
  explicit FakeScreen(bool terminal, size_t columns = 0) : m_terminal(terminal), m_columns(columns) {}
  [[nodiscard]] TimePoint now() const override { return m_now; }
  [[nodiscard]] bool terminal() const override { return m_terminal; }
  void write(std::string_view text) noexcept override { m_text.append(text); }
  [[nodiscard]] size_t columns() const override { return m_columns; }

  // What was written since the last call.
  std::string take() { return std::exchange(m_text, std::string()); }
  void advance(Clock::duration d) { m_now += d; }

 private:
  TimePoint m_now = TimePoint(std::chrono::hours(1000));
  bool m_terminal;
  size_t m_columns;
  std::string m_text;
};

// Sets the verbosity for the life of the object, as -q or -v would.
class VerbosityAs {
 public:
  explicit VerbosityAs(Verbosity v) : m_saved(std::exchange(verbosity(), v)) {}
  ~VerbosityAs() { verbosity() = m_saved; }
  VerbosityAs(const VerbosityAs&) = delete;
  VerbosityAs& operator=(const VerbosityAs&) = delete;

 private:
  Verbosity m_saved;
};

HolderInfo holder() {
  return HolderInfo{"web-3", "4411", "sleep 300", Millis(30'000), 0, false};
}

TEST(WaitReport, ItsFirstLineNamesTheHolderItsLeaseAndHowLongRedlockWaits) {
  FakeScreen log(false);
  WaitReport report("deploy", Millis(64'000), holder(), log);
  EXPECT_EQ(log.take(),
            "redlock: deploy is held by web-3 pid 4411 (sleep 300) for at most 30s more unless renewed; waiting up to "
            "1m4s\n");
}

TEST(WaitReport, InALogAProgressLineComesOnceAMinute) {
  FakeScreen log(false);
  WaitReport report("deploy", Millis(64'000), holder(), log);
  const TimePoint start = log.now();
  (void)log.take();
  ASSERT_EQ(report.next_tick(), start + minutes(1));
  log.advance(minutes(1));
  report.tick();
  EXPECT_EQ(log.take(), "redlock: still waiting for deploy: 1m of 1m4s, held by web-3 pid 4411 (sleep 300)\n");
  EXPECT_EQ(report.next_tick(), start + minutes(2));
  log.advance(seconds(4));
  EXPECT_EQ(report.stop(), Millis(64'000));
  EXPECT_EQ(log.take(), "") << "a log has no live line to end";
  EXPECT_EQ(report.next_tick(), std::nullopt);
}

TEST(WaitReport, OnATerminalTheLineIsRewrittenInPlaceEverySecondAndErasedAtTheEnd) {
  FakeScreen tty(true);
  WaitReport report("deploy", Millis(20'000), holder(), tty);
  const TimePoint start = tty.now();
  (void)tty.take();
  ASSERT_EQ(report.next_tick(), start + seconds(1));
  tty.advance(seconds(1));
  report.tick();
  tty.advance(seconds(1));
  report.tick();
  EXPECT_EQ(tty.take(),
            "\rredlock: waiting for deploy: 1s of 20s, held by web-3 pid 4411 (sleep 300)\033[K"
            "\rredlock: waiting for deploy: 2s of 20s, held by web-3 pid 4411 (sleep 300)\033[K");
  tty.advance(Millis(500));
  report.acquired();
  EXPECT_EQ(tty.take(), "\r\033[Kredlock: acquired deploy after 2.5s\n");
}

// A line as wide as the terminal would wrap, and each redraw add a row.
TEST(WaitReport, OnANarrowTerminalTheLiveLineStaysWithinItsWidth) {
  FakeScreen tty(true, 40);
  WaitReport report("deploy", Millis(20'000), holder(), tty);
  (void)tty.take();
  tty.advance(seconds(1));
  report.tick();
  EXPECT_EQ(tty.take(), "\rredlock: waiting for deploy: 1s of 20s\u2026\033[K");
}

TEST(WaitReport, LinesAreCutByCharactersNeverInsideOne) {
  EXPECT_EQ(fit_columns("abcdef", 0), "abcdef");
  EXPECT_EQ(fit_columns("abcdef", 6), "abcdef");
  EXPECT_EQ(fit_columns("abcdef", 4), "abc\u2026");
  EXPECT_EQ(fit_columns("\u00e9t\u00e9 long", 4), "\u00e9t\u00e9\u2026") << "each accented letter is one";
}

TEST(WaitReport, AWaitThatWokeLateSkipsTheLinesItMissed) {
  FakeScreen log(false);
  WaitReport report("deploy", std::nullopt, holder(), log);
  const TimePoint start = log.now();
  (void)log.take();
  log.advance(minutes(3) + seconds(30));
  report.tick();
  EXPECT_EQ(log.take(), "redlock: still waiting for deploy: 3m30s so far, held by web-3 pid 4411 (sleep 300)\n");
  EXPECT_EQ(report.next_tick(), start + minutes(4));
}

TEST(WaitReport, TheLinesComeAtThePeriodsItIsGiven) {
  FakeScreen log(false);
  WaitReport report("deploy", Millis(1'000), HolderInfo{}, log, ReportPeriods{Millis(10), Millis(250)});
  const TimePoint start = log.now();
  EXPECT_EQ(log.take(), "redlock: deploy is held; waiting up to 1s\n");
  EXPECT_EQ(report.next_tick(), start + Millis(250));
  log.advance(Millis(250));
  report.tick();
  EXPECT_EQ(log.take(), "redlock: still waiting for deploy: 0ms of 1s\n");
  EXPECT_EQ(report.next_tick(), start + Millis(500));
}

TEST(WaitReport, AWaitWithoutALimitAndAHolderKeptForItsMinimumHold) {
  FakeScreen log(false);
  HolderInfo kept = holder();
  kept.kept = true;
  kept.others = 2;
  WaitReport report("deploy", std::nullopt, kept, log);
  EXPECT_EQ(log.take(),
            "redlock: deploy is held by web-3 pid 4411 (sleep 300) and 2 others for 30s more (it finished; "
            "--hold-at-least keeps the lock); waiting for as long as it takes (--wait inf)\n");
}

TEST(WaitReport, QuietSaysNothingAndWantsNoTick) {
  const VerbosityAs quiet(Verbosity::k_quiet);
  FakeScreen tty(true);
  WaitReport report("deploy", Millis(20'000), holder(), tty);
  EXPECT_EQ(report.next_tick(), std::nullopt);
  tty.advance(seconds(5));
  report.tick();
  report.acquired();
  EXPECT_EQ(tty.take(), "");
}

TEST(WaitReport, ControlCharactersInTheNameAndHolderAreEscaped) {
  FakeScreen log(false);
  WaitReport report("a\x1b]b", Millis(1'000), HolderInfo{"h\n", "1", "c\r", Millis(0), 0, false}, log);
  EXPECT_EQ(log.take(), "redlock: a\\x1b]b is held by h\\n pid 1 (c\\r); waiting up to 1s\n");
}

}  // namespace
}  // namespace redlock::cli
