// Lock tokens: at least 128 bits from the kernel's random source, printed as
// lowercase hex, never repeated.

#include "util/token.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bitset>
#include <set>
#include <string>
#include <vector>

using redlock::k_token_bytes;
using redlock::plausible_token;
using redlock::random_bytes;
using redlock::random_millis;
using redlock::random_token;

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

}  // namespace

TEST(RandomToken, CarriesAtLeast128Bits) {
  EXPECT_GE(k_token_bytes, 16u);
  std::string t = random_token();
  EXPECT_GE(t.size(), 32u) << t;
  EXPECT_EQ(t.size(), k_token_bytes * 2) << t;
}

TEST(RandomToken, IsLowercaseHexOnly) {
  for (int i = 0; i < 1000; ++i) {
    std::string t = random_token();
    for (char c : t) {
      ASSERT_GE(hex_digit(c), 0) << "'" << c << "' in " << t;
    }
  }
}

TEST(RandomToken, NeverRepeatsOverManyDraws) {
  std::set<std::string> seen;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE(seen.insert(random_token()).second) << "repeated after " << i << " draws";
  }
}

TEST(RandomToken, UsesEveryHexDigitAtEveryPosition) {
  // A generator with a stuck or narrow digit (a counter, a timestamp, a
  // small seed) fails this; a uniform one fails with probability ~1e-270.
  const size_t len = random_token().size();
  std::vector<std::array<int, 16>> counts(len, std::array<int, 16>{});
  for (int i = 0; i < 10000; ++i) {
    std::string t = random_token();
    ASSERT_EQ(t.size(), len);
    for (size_t p = 0; p < len; ++p) {
      ++counts[p][static_cast<size_t>(hex_digit(t[p]))];
    }
  }
  for (size_t p = 0; p < len; ++p) {
    for (int d = 0; d < 16; ++d) {
      EXPECT_GT(counts[p][static_cast<size_t>(d)], 0) << "digit " << d << " never at position " << p;
    }
  }
}

TEST(RandomToken, HasBalancedBits) {
  // 2000 tokens of 160 bits: the share of one bits is 0.5 within ~0.3%
  // (one standard deviation); 0.48..0.52 is more than ten deviations.
  long long ones = 0;
  long long bits = 0;
  for (int i = 0; i < 2000; ++i) {
    for (char c : random_token()) {
      ones += std::bitset<4>(static_cast<unsigned long>(hex_digit(c))).count();
      bits += 4;
    }
  }
  double share = static_cast<double>(ones) / static_cast<double>(bits);
  EXPECT_GT(share, 0.48);
  EXPECT_LT(share, 0.52);
}

TEST(RandomBytes, FillsLargeBuffersCompletely) {
  // getrandom may return short reads for large requests; every byte must
  // still be written: a buffer pre-filled with one value does not come back
  // with that value in its last four bytes (odds 2^-32), and every byte
  // value turns up about equally often.
  std::vector<unsigned char> buf(1 << 20, 0xAB);
  random_bytes(buf.data(), buf.size());
  size_t same_tail = 0;
  for (size_t i = buf.size(); i-- > 0 && buf[i] == 0xAB;) {
    ++same_tail;
  }
  EXPECT_LT(same_tail, 4u);
  std::array<int, 256> counts{};
  for (unsigned char b : buf) {
    ++counts[b];
  }
  for (int v = 0; v < 256; ++v) {
    EXPECT_GT(counts[static_cast<size_t>(v)], 3000) << v;  // expected 4096 each
  }
}

TEST(PlausibleToken, AcceptsWhatRandomTokenMakes) {
  EXPECT_TRUE(plausible_token(random_token()));
}

TEST(PlausibleToken, RejectsEmptyHugeAndUnprintableTokens) {
  EXPECT_FALSE(plausible_token(""));
  EXPECT_FALSE(plausible_token(std::string(257, 'a')));
  EXPECT_FALSE(plausible_token("abc def"));
  EXPECT_FALSE(plausible_token("abc\n"));
  EXPECT_FALSE(plausible_token("t\xc3\xa9"));
  EXPECT_TRUE(plausible_token(std::string(256, 'a')));
}

TEST(RandomMillis, DrawsEveryValueFromLoToHiAndNothingElse) {
  // --jitter D draws from 0 to D-1 ms: [0, D), as systemd's
  // RandomizedDelaySec=. 4,000 draws from 4 values miss one with
  // probability ~1e-500.
  std::array<int, 4> seen{};
  for (int i = 0; i < 4000; ++i) {
    const long long ms = random_millis(0, 3).count();
    ASSERT_GE(ms, 0);
    ASSERT_LE(ms, 3);
    ++seen[static_cast<size_t>(ms)];
  }
  for (size_t v = 0; v < seen.size(); ++v) {
    EXPECT_GT(seen[v], 0) << v << " ms was never drawn";
  }
  for (int i = 0; i < 1000; ++i) {
    const long long ms = random_millis(250, 260).count();
    ASSERT_GE(ms, 250);
    ASSERT_LE(ms, 260);
  }
  EXPECT_EQ(random_millis(7, 7).count(), 7);
}
