#pragma once

#include <string>
#include <string_view>

#include "util/duration.hpp"

namespace redlock {

// Bytes of entropy in a token: 160 bits, above the 128 the contract promises.
inline constexpr size_t k_token_bytes = 20;

// A fresh lock token: k_token_bytes from getrandom(2) (the kernel CSPRNG),
// as lowercase hex. Throws Error if the kernel cannot supply randomness.
[[nodiscard]] std::string random_token();

// Fills `out` with `n` bytes from getrandom(2); used for tokens and jitter.
void random_bytes(void* out, size_t n);

// A random duration from `lo` to `hi` milliseconds, both included (from
// random_bytes: waiters' jitter, --jitter).
[[nodiscard]] Millis random_millis(long long lo, long long hi);

// True when `token` has the shape random_token() produces. Tokens given by
// users are only compared against stored ones, so this is a sanity check for
// clear messages, not a security boundary.
[[nodiscard]] bool plausible_token(std::string_view token);

}  // namespace redlock
