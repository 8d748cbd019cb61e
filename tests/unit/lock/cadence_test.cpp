#include <gtest/gtest.h>

#include "lock/wait_loop.hpp"

namespace redlock::lock {
namespace {

TEST(Cadence, TheFirstPlacesBeatOftenWithAShortLease) {
  for (long long place : {0LL, 1LL, 2LL, 4LL}) {
    EXPECT_EQ(cadence_for(place).period, Millis(500)) << place;
    EXPECT_EQ(cadence_for(place).lease, Millis(2000)) << place;
  }
}

TEST(Cadence, FurtherBackTheBeatSlowsWithThePlaceUpToFifteenSeconds) {
  Millis last{0};
  for (long long place = 5; place <= 10000; place += 7) {
    const Cadence c = cadence_for(place);
    EXPECT_GE(c.period, last) << place;
    EXPECT_LE(c.period, Millis(15000)) << place;
    // The lease outlives two missed beats, so a live waiter never lapses.
    EXPECT_GE(c.lease, c.period * 2) << place;
    last = c.period;
  }
  EXPECT_EQ(cadence_for(10000).period, Millis(15000));
}

// What a line of N costs in beats a second: about N / 15 far back, not 2N.
TEST(Cadence, ALineOfTenThousandBeatsLessThanAThousandTimesASecond) {
  double per_second = 0;
  for (long long place = 1; place <= 10000; ++place) {
    per_second += 1000.0 / static_cast<double>(cadence_for(place).period.count());
  }
  EXPECT_LT(per_second, 1000.0);
  EXPECT_GT(per_second, 600.0);
}

}  // namespace
}  // namespace redlock::lock
