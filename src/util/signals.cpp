#include "util/signals.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iterator>

#include "util/log.hpp"

namespace redlock {

SignalFd::SignalFd(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) {
    sigaddset(&set, s);
  }
  sigprocmask(SIG_BLOCK, &set, nullptr);
  m_fd.reset(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
}

int SignalFd::take() {
  signalfd_siginfo info{};
  ssize_t n = read(m_fd.get(), &info, sizeof(info));
  return n == static_cast<ssize_t>(sizeof(info)) ? static_cast<int>(info.ssi_signo) : 0;
}

namespace {

constexpr int k_stops[] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t g_say_interrupted = 1;
// Each signal's line as the log writes it (text or JSON), made before the
// handler is installed: the handler may not format.
std::string g_lines[std::size(k_stops)];

// Ends by `sig`: its default action, unblocked, raised. Async-signal-safe
// (sigaction, sigprocmask, raise).
void raise_default(int sig) noexcept {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
}

// Async-signal-safe: write_stderr_at_once() (a write that never waits: a
// stderr nobody reads must not keep redlock from ending), the above and
// _exit(2) only.
void exit_on_stop(int sig) {
  if (g_say_interrupted != 0) {
    for (size_t i = 0; i < std::size(k_stops); ++i) {
      if (k_stops[i] == sig) {
        (void)write_stderr_at_once(g_lines[i]);
      }
    }
  }
  raise_default(sig);
  _exit(128 + sig);
}

}  // namespace

void end_by_signal(int sig) noexcept {
  (void)std::fflush(nullptr);
  raise_default(sig);
}

ExitOnStop::ExitOnStop() {
  g_say_interrupted = verbosity() == Verbosity::k_silent ? 0 : 1;
  for (size_t i = 0; i < std::size(k_stops); ++i) {
    g_lines[i] = line_as_written(std::string("interrupted by SIG") + sigabbrev_np(k_stops[i]), LogLevel::k_warning,
                                 128 + k_stops[i]);
  }
  struct sigaction action {};
  action.sa_handler = exit_on_stop;
  sigfillset(&action.sa_mask);
  sigset_t unblock;
  sigemptyset(&unblock);
  for (size_t i = 0; i < std::size(k_stops); ++i) {
    sigaction(k_stops[i], nullptr, &m_old[i]);
    // An ignored signal stays ignored (a background job's SIGINT).
    if (m_old[i].sa_handler != SIG_IGN) {
      sigaction(k_stops[i], &action, nullptr);
      sigaddset(&unblock, k_stops[i]);
    }
  }
  // One already pending (blocked into a SignalFd) is delivered here.
  sigprocmask(SIG_UNBLOCK, &unblock, &m_mask);
}

ExitOnStop::~ExitOnStop() {
  sigprocmask(SIG_SETMASK, &m_mask, nullptr);
  for (size_t i = 0; i < std::size(k_stops); ++i) {
    sigaction(k_stops[i], &m_old[i], nullptr);
  }
}

}  // namespace redlock
