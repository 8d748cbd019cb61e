#include "util/token.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "util/exit_status.hpp"

namespace redlock {

void random_bytes(void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(p + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw Error(ExitStatus::k_unavailable,
                  std::string("cannot read the kernel's random source: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
}

Millis random_millis(long long lo, long long hi) {
  unsigned long long r = 0;
  random_bytes(&r, sizeof(r));
  return Millis(lo + static_cast<long long>(r % static_cast<unsigned long long>(hi - lo + 1)));
}

std::string random_token() {
  std::array<unsigned char, k_token_bytes> bytes{};
  random_bytes(bytes.data(), bytes.size());
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out.push_back(k_hex[b >> 4]);
    out.push_back(k_hex[b & 15]);
  }
  return out;
}

bool plausible_token(std::string_view token) {
  if (token.empty() || token.size() > 256) {
    return false;
  }
  for (unsigned char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return false;
    }
  }
  return true;
}

}  // namespace redlock
