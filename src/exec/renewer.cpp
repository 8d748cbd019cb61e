#include "exec/renewer.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cstdint>

#include "util/cancel.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::exec {
namespace {

long long to_ns(TimePoint t) {
  return t.time_since_epoch().count();
}

}  // namespace

Renewer::Renewer(Lease& lease, TimePoint acquired_at, TimePoint valid_until)
    : m_lease(lease),
      m_acquired_at(acquired_at),
      m_validity_end_ns(to_ns(valid_until)),
      m_stop(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      m_lost(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Renewer::~Renewer() {
  stop();
}

Millis Renewer::interval_for(Millis ttl) {
  return std::max(Millis(1), ttl / 3);
}

void Renewer::start() {
  m_thread = std::thread([this] { loop(); });
}

void Renewer::stop() {
  if (m_thread.joinable()) {
    uint64_t one = 1;
    (void)!write(m_stop.get(), &one, sizeof(one));
    m_thread.join();
  }
}

TimePoint Renewer::validity_end() const {
  return TimePoint(TimePoint::duration(m_validity_end_ns.load()));
}

std::string Renewer::lost_reason() const {
  std::lock_guard<std::mutex> guard(m_mutex);
  return m_reason;
}

void Renewer::declare_lost(std::string reason) {
  {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_reason = std::move(reason);
  }
  uint64_t one = 1;
  (void)!write(m_lost.get(), &one, sizeof(one));
}

void Renewer::loop() {
  // Job-control stops of redlock's group go to the supervisor's thread,
  // which stops the whole process when it sends one (see Supervisor), and
  // so does SIGCONT, which it reads to learn that it was continued.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTSTP);
  sigaddset(&stops, SIGCONT);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  const std::string name = escape_for_terminal(m_lease.name());
  const Millis interval = interval_for(m_lease.ttl());
  const Millis retry = std::clamp(interval / 10, Millis(10), Millis(250));
  TimePoint next = m_acquired_at + interval;
  bool failing = false;
  const Cancel stop(m_stop.get());
  while (true) {
    if (!stop.sleep_until(next)) {
      return;
    }
    const RenewResult result = m_lease.renew(stop);
    if (const auto* extended = std::get_if<Extended>(&result)) {
      m_validity_end_ns = to_ns(extended->valid_until);
      if (m_on_renewed) {
        m_on_renewed(extended->valid_until);
      }
      say_held_warnings();  // a server that refused this renewal, while the others renewed
      if (failing) {
        log_warning("renewing {} works again", name);
        failing = false;
      }
      next += interval;
      if (next < Clock::now()) {
        next = Clock::now() + interval;
      }
      continue;
    }
    if (const auto* gone = std::get_if<Gone>(&result)) {
      declare_lost(gone->reason);
      return;
    }
    if (stop.requested()) {
      return;
    }
    const std::string& error = std::get<Failed>(result).error;
    if (!failing) {
      log_warning("renewing {} failed: {}; retrying", name, error);
      failing = true;
    } else {
      log_debug("renewing {} failed again: {}", name, error);
    }
    next = Clock::now() + retry;
  }
}

}  // namespace redlock::exec
