#include "exec/renewer.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cstdint>

#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::exec {
namespace {

long long to_ns(TimePoint t) {
  return t.time_since_epoch().count();
}

}  // namespace

Renewer::Renewer(lock::Locker& locker, std::string name, std::string token, Millis ttl, TimePoint acquired_at,
                 TimePoint valid_until)
    : m_locker(locker),
      m_name(std::move(name)),
      m_token(std::move(token)),
      m_ttl(ttl),
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
  m_locker.set_cancel(Cancel(m_stop.get()));
  m_thread = std::thread([this] { loop(); });
}

void Renewer::stop() {
  if (m_thread.joinable()) {
    uint64_t one = 1;
    (void)!write(m_stop.get(), &one, sizeof(one));
    m_thread.join();
    m_locker.reset_cancel();
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
  // which stops the whole process when it sends one (see Supervisor).
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTSTP);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  const Millis interval = interval_for(m_ttl);
  const Millis retry = std::clamp(interval / 10, Millis(10), Millis(250));
  TimePoint next = m_acquired_at + interval;
  bool failing = false;
  const Cancel stop(m_stop.get());
  while (true) {
    if (!stop.sleep_until(next)) {
      return;
    }
    try {
      auto outcome = m_locker.renew(m_name, m_token, m_ttl);
      if (auto* renewed = std::get_if<lock::Renewed>(&outcome)) {
        m_validity_end_ns = to_ns(renewed->valid_until);
        if (m_on_renewed) {
          m_on_renewed(renewed->valid_until);
        }
        say_held_warnings();  // a server that refused this renewal, while the others renewed
        if (failing) {
          log_warning("renewing {} works again", escape_for_terminal(m_name));
          failing = false;
        }
        next += interval;
        if (next < Clock::now()) {
          next = Clock::now() + interval;
        }
        continue;
      }
      const auto& not_held = std::get<lock::NotHeld>(outcome);
      declare_lost(not_held.foreign ? fmt::format("the key of {} was replaced by a {} that redlock did not write",
                                                  escape_for_terminal(m_name), not_held.what)
                                    : fmt::format("{} is no longer held by this token (it expired or was deleted)",
                                                  escape_for_terminal(m_name)));
      return;
    } catch (const Error& e) {
      if (stop.requested()) {
        return;
      }
      if (!failing) {
        log_warning("renewing {} failed: {}; retrying", escape_for_terminal(m_name), e.what());
        failing = true;
      } else {
        log_debug("renewing {} failed again: {}", escape_for_terminal(m_name), e.what());
      }
      next = Clock::now() + retry;
    }
  }
}

}  // namespace redlock::exec
