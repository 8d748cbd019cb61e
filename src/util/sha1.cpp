#include "util/sha1.hpp"

#include <array>
#include <cstdint>

namespace redlock {
namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

void compress(std::array<std::uint32_t, 5>& h, const unsigned char* block) {
  std::array<std::uint32_t, 80> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = static_cast<std::uint32_t>(block[4 * i]) << 24 | static_cast<std::uint32_t>(block[4 * i + 1]) << 16 |
           static_cast<std::uint32_t>(block[4 * i + 2]) << 8 | static_cast<std::uint32_t>(block[4 * i + 3]);
  }
  for (std::size_t i = 16; i < 80; ++i) {
    w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (std::size_t i = 0; i < 80; ++i) {
    std::uint32_t f = 0, k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<std::uint32_t, 5> h{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t n = data.size();
  std::size_t whole = n - n % 64;
  for (std::size_t off = 0; off < whole; off += 64) {
    compress(h, p + off);
  }
  // The tail, a 0x80 byte, zeros, and the message length in bits (big-endian)
  // fill one or two last blocks.
  std::array<unsigned char, 128> tail{};
  std::size_t rest = n - whole;
  for (std::size_t i = 0; i < rest; ++i) {
    tail[i] = p[whole + i];
  }
  tail[rest] = 0x80;
  std::size_t blocks = rest + 1 + 8 <= 64 ? 1 : 2;
  std::uint64_t bits = static_cast<std::uint64_t>(n) * 8;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[blocks * 64 - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    compress(h, tail.data() + 64 * b);
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (std::uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) {
      out += k_hex[(word >> shift) & 0xf];
    }
  }
  return out;
}

}  // namespace redlock
