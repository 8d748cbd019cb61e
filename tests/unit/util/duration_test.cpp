// Durations as the command line takes them (--ttl, --wait, --timeout…) and
// as redlock prints them.

#include "util/duration.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "util/exit_status.hpp"

using redlock::ExitStatus;
using redlock::format_duration;
using redlock::Millis;
using redlock::parse_duration;
using redlock::parse_wait;
using redlock::UsageError;

namespace {

// The UsageError thrown for `text`, or a test failure if none is.
std::string usage_error_for(const std::string& text) {
  try {
    (void)parse_duration(text, "--ttl");
  } catch (const UsageError& e) {
    EXPECT_EQ(e.status(), ExitStatus::k_usage);
    return e.what();
  }
  ADD_FAILURE() << "'" << text << "' was accepted";
  return {};
}

}  // namespace

TEST(ParseDuration, AcceptsEveryUnitTheContractNames) {
  EXPECT_EQ(parse_duration("250ms", "--ttl"), Millis(250));
  EXPECT_EQ(parse_duration("30s", "--ttl"), Millis(30'000));
  EXPECT_EQ(parse_duration("2m", "--ttl"), Millis(120'000));
  EXPECT_EQ(parse_duration("1h", "--ttl"), Millis(3'600'000));
}

TEST(ParseDuration, AddsUpCompoundDurations) {
  EXPECT_EQ(parse_duration("1m30s", "--ttl"), Millis(90'000));
  EXPECT_EQ(parse_duration("1h2m3s", "--ttl"), Millis(3'723'000));
  EXPECT_EQ(parse_duration("1s500ms", "--ttl"), Millis(1'500));
}

TEST(ParseDuration, ReadsABareNumberAsSeconds) {
  EXPECT_EQ(parse_duration("5", "--ttl"), Millis(5'000));
  EXPECT_EQ(parse_duration("0", "--wait"), Millis(0));
  EXPECT_EQ(parse_duration("1.5", "--ttl"), Millis(1'500));
  EXPECT_EQ(parse_duration("0.25", "--ttl"), Millis(250));
}

TEST(ParseDuration, AcceptsFractionsWithUnits) {
  EXPECT_EQ(parse_duration("1.5s", "--ttl"), Millis(1'500));
  EXPECT_EQ(parse_duration("0.5m", "--ttl"), Millis(30'000));
  EXPECT_EQ(parse_duration(".5s", "--ttl"), Millis(500));
}

TEST(ParseDuration, AcceptsOneHundredYearsButNotMore) {
  EXPECT_EQ(parse_duration("876000h", "--ttl"), Millis(876'000LL * 3'600'000));
  usage_error_for("876001h");
}

TEST(ParseDuration, RejectsEmptyText) {
  usage_error_for("");
}

TEST(ParseDuration, RejectsWordsAndStrayCharacters) {
  for (const char* text : {"abc", "s", "ms", "inf", "1 s", " 1s", "1s ", "1,5s", "1e3", "+5s", "."}) {
    SCOPED_TRACE(text);
    usage_error_for(text);
  }
}

TEST(ParseDuration, RejectsNegativeDurationsSayingSo) {
  std::string msg = usage_error_for("-5s");
  EXPECT_NE(msg.find("negative"), std::string::npos) << msg;
  usage_error_for("-1");
  usage_error_for("1m-5s");
}

TEST(ParseDuration, RejectsUnknownUnitsNamingThem) {
  std::string msg = usage_error_for("10x");
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  for (const char* text : {"10sec", "10S", "10D", "5us", "10mss", "1w"}) {
    SCOPED_TRACE(text);
    usage_error_for(text);
  }
}

TEST(ParseDuration, AcceptsDaysAsStatusPrintsThem) {
  EXPECT_EQ(parse_duration("1d", "--ttl"), Millis(86'400'000));
  EXPECT_EQ(parse_duration("2d12h", "--ttl"), Millis(216'000'000));
  EXPECT_EQ(parse_duration("0.5d", "--ttl"), Millis(43'200'000));
  EXPECT_EQ(parse_duration(format_duration(Millis(50LL * 3'600'000)), "--ttl"), Millis(50LL * 3'600'000));
}

TEST(ParseDuration, RejectsATrailingNumberWithoutItsUnit) {
  usage_error_for("1m30");
  usage_error_for("1s5");
}

TEST(ParseDuration, RejectsTwoDotsInOneNumber) {
  usage_error_for("1.5.5s");
}

TEST(ParseDuration, RejectsValuesThatWouldOverflow) {
  for (const char* text : {"99999999999999999999h", "99999999999999999999", "999999999999999999999999999999s",
                           "9999999999999999999ms", "18446744073709551616ms"}) {
    SCOPED_TRACE(text);
    usage_error_for(text);
  }
}

TEST(ParseDuration, NamesTheOptionAndTheTextInItsMessage) {
  try {
    (void)parse_duration("soon", "--wait");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("--wait"), std::string::npos) << msg;
    EXPECT_NE(msg.find("soon"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(ParseWait, TakesInfAndItsSpellingsAsNoLimit) {
  EXPECT_EQ(parse_wait("inf", "--wait"), std::nullopt);
  EXPECT_EQ(parse_wait("infinity", "--wait"), std::nullopt);
  EXPECT_EQ(parse_wait("forever", "--wait"), std::nullopt);
}

TEST(ParseWait, TakesOrdinaryDurationsAsALimit) {
  EXPECT_EQ(parse_wait("0", "--wait"), Millis(0));
  EXPECT_EQ(parse_wait("10s", "--wait"), Millis(10'000));
  EXPECT_EQ(parse_wait("1m30s", "--wait"), Millis(90'000));
}

TEST(ParseWait, RejectsWhatParseDurationRejects) {
  for (const char* text : {"", "abc", "-5s", "10x", "INF", "infinite", "1m30"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW((void)parse_wait(text, "--wait"), UsageError);
  }
}

TEST(FormatDuration, ShowsMillisecondsBelowASecond) {
  EXPECT_EQ(format_duration(Millis(0)), "0ms");
  EXPECT_EQ(format_duration(Millis(850)), "850ms");
  EXPECT_EQ(format_duration(Millis(999)), "999ms");
}

TEST(FormatDuration, ShowsTenthsOfSecondsBelowAMinute) {
  EXPECT_EQ(format_duration(Millis(1'000)), "1s");
  EXPECT_EQ(format_duration(Millis(12'500)), "12.5s");
  EXPECT_EQ(format_duration(Millis(1'940)), "1.9s");
  EXPECT_EQ(format_duration(Millis(30'000)), "30s");
}

TEST(FormatDuration, ShowsMinutesAndSecondsBelowAnHour) {
  EXPECT_EQ(format_duration(Millis(60'000)), "1m");
  EXPECT_EQ(format_duration(Millis(123'000)), "2m3s");
  EXPECT_EQ(format_duration(Millis(3'599'000)), "59m59s");
}

TEST(FormatDuration, ShowsHoursAndMinutesThenDays) {
  EXPECT_EQ(format_duration(Millis(3'600'000)), "1h");
  EXPECT_EQ(format_duration(Millis(3'720'000)), "1h2m");
  EXPECT_EQ(format_duration(Millis(3LL * 24 * 3'600'000 + 5 * 3'600'000)), "3d5h");
}

TEST(FormatDuration, MarksNegativeDurations) {
  EXPECT_EQ(format_duration(Millis(-850)), "-850ms");
}

TEST(FormatDuration, PrintsWhatParseDurationReadsBack) {
  for (long long ms : {1LL, 250LL, 999LL, 1'000LL, 12'500LL, 59'000LL, 60'000LL, 90'000LL, 3'599'000LL, 3'600'000LL,
                       3'720'000LL, 47LL * 3'600'000}) {
    SCOPED_TRACE(ms);
    EXPECT_EQ(parse_duration(format_duration(Millis(ms)), "--ttl"), Millis(ms));
  }
}

TEST(FormatDuration, RoundsUpToAWholeMinuteRatherThanSixtySeconds) {
  EXPECT_EQ(format_duration(Millis(59'940)), "59.9s");
  EXPECT_EQ(format_duration(Millis(59'960)), "1m");
  EXPECT_EQ(format_duration(Millis(90'600)), "1m31s");
}

TEST(FormatDuration, HandlesNegativeAndExtremeValues) {
  EXPECT_EQ(format_duration(Millis(-1'500)), "-1.5s");
  EXPECT_EQ(format_duration(Millis(-999)), "-999ms");
  EXPECT_EQ(format_duration(Millis(std::numeric_limits<long long>::min())).front(), '-');
  EXPECT_EQ(format_duration(Millis(std::numeric_limits<long long>::max())).back(), 'h');
}

TEST(FormatTime, IsRfc3339InUtcToTheSecondWhateverTheZone) {
  // 2024-12-02T13:35:01.999Z: the second it is in, not the nearest.
  EXPECT_EQ(redlock::format_time(1'733'146'501'999), "2024-12-02T13:35:01Z");
  EXPECT_EQ(redlock::format_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(redlock::format_time(-1), "1969-12-31T23:59:59Z");
  const char* zone = std::getenv("TZ");
  const std::string was = zone == nullptr ? "" : zone;
  setenv("TZ", "Pacific/Auckland", 1);
  tzset();
  EXPECT_EQ(redlock::format_time(1'733'146'501'123), "2024-12-02T13:35:01Z") << "never the local time";
  if (zone == nullptr) {
    unsetenv("TZ");
  } else {
    setenv("TZ", was.c_str(), 1);
  }
  tzset();
}
