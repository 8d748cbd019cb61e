#pragma once

#include <signal.h>

#include <initializer_list>

#include "util/cancel.hpp"
#include "util/fd.hpp"

namespace redlock {

// Blocks the given signals and delivers them through a signalfd instead, so
// a poll loop can wait on them alongside sockets. Construct it before any
// thread starts (threads inherit the mask) and before fork. The signals
// stay blocked for the life of the process: a pending one never kills
// redlock half-way through releasing a lock.
class SignalFd {
 public:
  explicit SignalFd(std::initializer_list<int> signals);
  [[nodiscard]] int fd() const { return m_fd.get(); }
  // A Cancel that comes with any of the signals (while one is pending).
  [[nodiscard]] Cancel cancel() const { return Cancel(m_fd.get()); }
  // The next pending signal number, or 0 if none is pending (never blocks).
  [[nodiscard]] int take();

 private:
  Fd m_fd;
};

// While it lives, SIGINT, SIGTERM and SIGHUP (those not ignored) end redlock
// at once, even inside a blocking open() or read(): "redlock: interrupted by
// SIGN" on stderr (unless -qq), then redlock ends by that signal. For steps that wait on what no
// poll loop can watch, such as a FIFO named by --password-file or --tls-ca
// that nobody writes to (OpenSSL opens those by name). Nothing is taken yet
// then, so there is nothing to release. Afterwards the signals are blocked
// again and handled as before.
class ExitOnStop;

// Ends redlock by stop signal `sig`, as timeout(1) does once its command is
// gone: standard output flushed, the signal's default action restored and
// unblocked, and the signal raised. A supervisor (systemd) reads a clean
// stop, a shell 128+N. Returns only if the process survived it.
void end_by_signal(int sig) noexcept;

class ExitOnStop {
 public:
  ExitOnStop();
  ~ExitOnStop();
  ExitOnStop(const ExitOnStop&) = delete;
  ExitOnStop& operator=(const ExitOnStop&) = delete;

 private:
  sigset_t m_mask{};            // the mask before
  struct sigaction m_old[3]{};  // SIGINT's, SIGTERM's and SIGHUP's actions before
};

}  // namespace redlock
