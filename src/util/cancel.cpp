#include "util/cancel.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace redlock {

bool Cancel::requested() const {
  if (m_fd < 0) {
    return false;
  }
  pollfd p{m_fd, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n > 0 && (p.revents & POLLIN) != 0;
}

bool Cancel::sleep_until(TimePoint until) const {
  constexpr long long k_day_ms = std::chrono::milliseconds(std::chrono::hours(24)).count();
  pollfd p{m_fd, POLLIN, 0};
  int n;
  do {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
    n = ::poll(&p, m_fd >= 0 ? 1 : 0, static_cast<int>(std::clamp<long long>(left, 0, k_day_ms)));
  } while (n < 0 && errno == EINTR);
  return n <= 0;
}

}  // namespace redlock
