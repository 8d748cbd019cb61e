#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace redlock {

// SHA-1 as 40 lowercase hex digits: the name Redis gives a script (EVALSHA).
// Our own few lines rather than OpenSSL's SHA1(), which would initialise
// OpenSSL (providers, configuration) in every call that runs a script, TLS
// or not; and constexpr, so that the scripts' names are worked out by the
// compiler, not by every redlock process at start-up.
using Sha1Hex = std::array<char, 40>;

namespace sha1_detail {

constexpr std::uint32_t rotl(std::uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

// One 64-byte block at `at` of `block` into the state `h`.
template <typename Bytes>
constexpr void compress(std::array<std::uint32_t, 5>& h, const Bytes& block, std::size_t at) {
  std::array<std::uint32_t, 80> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      w[i] = w[i] << 8 | static_cast<std::uint32_t>(static_cast<unsigned char>(block[at + 4 * i + j]));
    }
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
    const std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
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

}  // namespace sha1_detail

[[nodiscard]] constexpr Sha1Hex sha1(std::string_view data) {
  std::array<std::uint32_t, 5> h{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  const std::size_t n = data.size();
  const std::size_t rest = n % 64;  // below 64: the tail never overflows
  const std::size_t whole = n - rest;
  for (std::size_t off = 0; off < whole; off += 64) {
    sha1_detail::compress(h, data, off);
  }
  // The tail, a 0x80 byte, zeros, and the message length in bits (big-endian)
  // fill one or two last blocks.
  std::array<unsigned char, 128> tail{};
  for (std::size_t i = 0; i < rest; ++i) {
    tail[i] = static_cast<unsigned char>(data[whole + i]);
  }
  tail[rest] = 0x80;
  const std::size_t blocks = rest + 1 + 8 <= 64 ? 1 : 2;
  const std::uint64_t bits = static_cast<std::uint64_t>(n) * 8;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[blocks * 64 - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    sha1_detail::compress(h, tail, 64 * b);
  }
  constexpr std::string_view k_hex = "0123456789abcdef";
  Sha1Hex out{};
  std::size_t at = 0;
  for (const std::uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) {
      out[at++] = k_hex[(word >> shift) & 0xf];
    }
  }
  return out;
}

[[nodiscard]] inline std::string sha1_hex(std::string_view data) {
  const Sha1Hex digest = sha1(data);
  return {digest.begin(), digest.end()};
}

}  // namespace redlock
