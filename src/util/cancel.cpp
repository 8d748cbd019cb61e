#include "util/cancel.hpp"

#include <poll.h>
#include <sys/timerfd.h>

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

CancelAfter::CancelAfter(std::chrono::milliseconds after)
    : m_fd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) {
  if (!m_fd.valid()) {
    return;
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(after, std::chrono::milliseconds(1)));
  itimerspec when{};
  when.it_value.tv_sec = static_cast<time_t>(ns.count() / 1'000'000'000);
  when.it_value.tv_nsec = static_cast<long>(ns.count() % 1'000'000'000);
  if (timerfd_settime(m_fd.get(), 0, &when, nullptr) != 0) {
    m_fd.reset();
  }
}

}  // namespace redlock
