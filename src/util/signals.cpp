#include "util/signals.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

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

}  // namespace redlock
