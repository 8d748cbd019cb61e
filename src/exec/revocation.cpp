#include "exec/revocation.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "util/cancel.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::exec {
namespace {

// How soon a failed subscriber is made again.
constexpr Millis k_resubscribe{1000};

}  // namespace

std::string broken_reason(const RevokeNotice& n) {
  const std::string name = n.name.empty() ? std::string("the lock") : escape_for_terminal(n.name);
  if (n.host.empty()) {
    return fmt::format("{} was broken (redlock break)", name);
  }
  return fmt::format("{} was broken by {} (pid {}; redlock break)", name, escape_for_terminal(n.host),
                     n.pid.empty() ? std::string("not known") : escape_for_terminal(n.pid));
}

RevokeListener::RevokeListener(const lock::Locker& locker, const std::vector<std::string>& names,
                               const std::string& token)
    : m_locker(locker),
      m_names(names),
      m_token(token),
      m_stop(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      m_revoked(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

RevokeListener::~RevokeListener() {
  if (m_thread.joinable()) {
    uint64_t one = 1;
    (void)!write(m_stop.get(), &one, sizeof(one));
    m_thread.join();
  }
}

void RevokeListener::start() {
  if (!m_thread.joinable()) {
    m_thread = std::thread([this] { loop(); });
  }
}

RevokeNotice RevokeListener::notice() const {
  std::lock_guard<std::mutex> guard(m_mutex);
  return m_notice;
}

void RevokeListener::take_notice(RevokeNotice n) {
  {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_notice = std::move(n);
  }
  uint64_t one = 1;
  (void)!write(m_revoked.get(), &one, sizeof(one));
}

bool RevokeListener::listen_once() {
  const Cancel stop(m_stop.get());
  lock::RevokeWatch watch(m_locker, m_names, m_token, stop);
  // A revoke before the subscription is in the mark.
  if (stop.requested()) {
    return true;
  }
  if (std::optional<RevokeNotice> n = watch.read_mark()) {
    take_notice(std::move(*n));
    return true;
  }
  RevokeNotice heard;
  switch (watch.wait(heard)) {
    case lock::RevokeWatch::End::k_heard:
      take_notice(std::move(heard));
      return true;
    case lock::RevokeWatch::End::k_stopped:
      return true;
    case lock::RevokeWatch::End::k_failed:
      break;
  }
  return false;
}

void RevokeListener::loop() {
  // As the renewer's: job-control stops and SIGCONT are the supervisor's.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTSTP);
  sigaddset(&stops, SIGCONT);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  const Cancel stop(m_stop.get());
  while (!listen_once()) {
    log_debug("listening for a revoke failed; subscribing again in {}", format_duration(k_resubscribe));
    if (!stop.sleep_until(Clock::now() + k_resubscribe)) {
      return;
    }
  }
}

}  // namespace redlock::exec
