#include "util/output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "util/log.hpp"

namespace redlock {

namespace {

size_t size_from_environment(const char* variable, size_t fallback) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  return *end == '\0' && value > 0 && value <= 100'000 ? value : fallback;
}

}  // namespace

Screen stdout_screen() {
  if (::isatty(STDOUT_FILENO) != 1) {
    return {};
  }
  winsize size{};
  const bool known = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0;
  return {size_from_environment("COLUMNS", known && size.ws_col > 0 ? size.ws_col : 80),
          size_from_environment("LINES", known && size.ws_row > 0 ? size.ws_row : 24)};
}

ExitCode reader_gone() {
  return sigpipe_ignored_at_start() ? ExitCode(ExitStatus::k_ok) : ExitCode::for_signal(SIGPIPE);
}

StoppableStdout::StoppableStdout() {
  std::fflush(stdout);  // what stdio holds goes first
  struct stat st {};
  if (fstat(STDOUT_FILENO, &st) != 0) {
    return;
  }
  if (S_ISSOCK(st.st_mode)) {
    m_socket = true;
  } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    // Opening the descriptor's /proc entry makes a new description of the
    // same pipe or terminal. If it cannot be had, writes block as before.
    m_own.reset(open("/proc/self/fd/1", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (m_own.valid()) {
      m_fd = m_own.get();
    }
  }
}

StoppableStdout::Outcome StoppableStdout::write(std::string_view text, const Cancel& stop) {
  while (!text.empty()) {
    const ssize_t n = m_socket ? send(m_fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL)
                               : ::write(m_fd, text.data(), text.size());
    if (n > 0) {
      text.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd fds[2] = {{m_fd, POLLOUT, 0}, {stop.fd(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) {
        return Outcome::k_failed;
      }
      if ((fds[1].revents & POLLIN) != 0) {
        return Outcome::k_stopped;
      }
      continue;  // room, or an error the next write tells
    }
    return Outcome::k_failed;
  }
  return Outcome::k_written;
}

}  // namespace redlock
