#include "util/sha1.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "lock/scripts.hpp"

namespace redlock {
namespace {

// FIPS 180 test vectors, plus lengths around the one- and two-block padding
// boundaries (55, 56, 63, 64 bytes) checked against sha1sum.
TEST(Sha1, KnownVectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1, PaddingBoundaries) {
  EXPECT_EQ(sha1_hex(std::string(55, 'x')), "cef734ba81a024479e09eb5a75b6ddae62e6abf1");
  EXPECT_EQ(sha1_hex(std::string(56, 'x')), "901305367c259952f4e7af8323f480d59f81335b");
  EXPECT_EQ(sha1_hex(std::string(63, 'x')), "0ddc4e0cccd9a12850deb5abb0853a4425559fec");
  EXPECT_EQ(sha1_hex(std::string(64, 'x')), "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
  EXPECT_EQ(sha1_hex(std::string(65, 'x')), "78c741ddc482e4cdf8c474a0876347a0905b6233");
}

// The compiler works the digest out, so start-up does not.
constexpr Sha1Hex k_abc = sha1("abc");
static_assert(std::string_view(k_abc.data(), k_abc.size()) == "a9993e364706816aba3e25717850c26c9cd0d89d");

TEST(Sha1, EveryScriptIsNamedByTheDigestOfItsBody) {
  for (auto name : {lock::ScriptName::k_acquire, lock::ScriptName::k_renew, lock::ScriptName::k_inspect,
                    lock::ScriptName::k_raise_fence, lock::ScriptName::k_break, lock::ScriptName::k_release,
                    lock::ScriptName::k_leave, lock::ScriptName::k_line}) {
    const auto& s = lock::script(name);
    EXPECT_EQ(s.sha1, sha1_hex(s.body)) << s.name;
    EXPECT_GT(s.body.size(), 100u) << s.name;
  }
}

}  // namespace
}  // namespace redlock
