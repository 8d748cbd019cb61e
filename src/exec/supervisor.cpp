#include "exec/supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace redlock::exec {
namespace {

// The part of the child's life between fork and exec: only async-signal-safe
// calls, everything it needs prepared by the parent.
[[noreturn]] void become_command(char* const argv[], char* const envp[], pid_t parent, bool take_terminal) {
  setpgid(0, 0);
  if (take_terminal) {
    tcsetpgrp(STDIN_FILENO, getpid());  // SIGTTOU is still blocked here
  }
  // If redlock dies, CMD must not go on unlocked; and if it already died
  // between fork and here, the death signal was missed: check by hand.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) {
    _exit(128 + SIGKILL);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    sigaction(s, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Only 0, 1 and 2 are CMD's.
  syscall(SYS_close_range, 3U, ~0U, 0U);
  execvpe(argv[0], argv, envp);
  int err = errno;
  const char* prefix = "redlock: cannot run ";
  (void)!write(STDERR_FILENO, prefix, strlen(prefix));
  (void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
  const char* why = err == ENOENT ? ": command not found\n" : ": permission denied or not executable\n";
  if (err != ENOENT && err != EACCES && err != ENOEXEC && err != EISDIR) {
    why = ": cannot execute\n";
  }
  (void)!write(STDERR_FILENO, why, strlen(why));
  _exit(err == ENOENT ? 127 : 126);
}

// A small process that outlives redlock by an instant: it waits on a pipe
// that only redlock writes to. If redlock ends without saying "done" (even
// by SIGKILL, when PR_SET_PDEATHSIG only reaches CMD itself), the pipe closes
// and the guard SIGKILLs CMD's whole process group, so no grandchild goes on
// unlocked. Returns the guard's pid and the pipe's write end.
std::pair<pid_t, Fd> start_group_guard(pid_t group) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    return {-1, Fd()};
  }
  pid_t guard = fork();
  if (guard == 0) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);  // only SIGKILL or the pipe ends it
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3; ++fd) {
      dup2(devnull, fd);
    }
    if (p[0] > 3) {
      syscall(SYS_close_range, 3U, static_cast<unsigned>(p[0] - 1), 0U);
    }
    syscall(SYS_close_range, static_cast<unsigned>(p[0] + 1), ~0U, 0U);
    char c;
    ssize_t n;
    do {
      n = read(p[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      kill(-group, SIGKILL);
    }
    _exit(0);
  }
  close(p[0]);
  if (guard < 0) {
    close(p[1]);
    return {-1, Fd()};
  }
  return {guard, Fd(p[1])};
}

void stop_group_guard(pid_t guard, Fd& pipe) {
  if (guard <= 0) {
    return;
  }
  char done = 'd';
  (void)!write(pipe.get(), &done, 1);
  pipe.reset();
  int ws;
  while (waitpid(guard, &ws, 0) < 0 && errno == EINTR) {
  }
}

int decode(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    return 128 + WTERMSIG(wstatus);
  }
  return WEXITSTATUS(wstatus);
}

const char* signal_name(int sig) {
  const char* d = sigabbrev_np(sig);
  return d ? d : "?";
}

}  // namespace

Finished supervise(const Command& cmd, Renewer& renewer, const Policy& policy, SignalFd& signals) {
  std::vector<char*> argv;
  for (const auto& a : cmd.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : cmd.env) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);

  // An interactive terminal stays usable: CMD's group becomes the
  // terminal's foreground group while it runs (Ctrl-C reaches CMD).
  const bool take_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  sigset_t ttou;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  sigprocmask(SIG_BLOCK, &ttou, nullptr);

  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    throw Error(ExitStatus::k_unavailable, fmt::format("cannot fork: {}", std::strerror(errno)));
  }
  if (child == 0) {
    become_command(argv.data(), envp.data(), parent, take_terminal);
  }
  setpgid(child, child);  // also here, so that no signal can race the child's own setpgid
  if (take_terminal) {
    tcsetpgrp(STDIN_FILENO, child);
  }
  // Forked before the renewer's thread exists: the guard is a plain copy.
  auto [guard, guard_pipe] = start_group_guard(child);
  renewer.start();

  Finished done;
  // SIGKILL deadline after a SIGTERM for a lost lock; max() while none is due. (A
  // std::optional here trips GCC 12's -Wmaybe-uninitialized at -O2.)
  TimePoint kill_at = TimePoint::max();
  bool reaped = false;
  while (!reaped) {
    const auto now = Clock::now();
    TimePoint wake = now + std::chrono::hours(24);
    if (!done.lost) {
      // No confirmed renewal by validity - kill_after counts as lost.
      const TimePoint deadline = renewer.validity_end() - policy.kill_after;
      if (now >= deadline) {
        done.lost = true;
        done.lost_reason = "no renewal was confirmed before the lock's validity ran out (is Redis reachable?)";
      } else {
        wake = std::min(wake, deadline);
      }
    }
    if (done.lost && !done.lost_reason.empty()) {
      switch (policy.on_lost) {
        case OnLost::k_term:
          log_warning("lost the lock: {}; sending SIGTERM to the command (exit status 74)", done.lost_reason);
          kill(-child, SIGTERM);
          kill_at = now + policy.kill_after;
          break;
        case OnLost::k_kill:
          log_warning("lost the lock: {}; killing the command (exit status 74)", done.lost_reason);
          kill(-child, SIGKILL);
          break;
        case OnLost::k_ignore:
          log_warning("lost the lock: {}; the command goes on (--on-lost ignore; exit status 74)", done.lost_reason);
          break;
      }
      done.lost_reason.clear();  // acted upon; the flag `lost` stays
      renewer.stop();
    }
    if (kill_at != TimePoint::max()) {
      if (now >= kill_at) {
        log_warning("the command did not stop within --kill-after; sending SIGKILL");
        kill(-child, SIGKILL);
        kill_at = TimePoint::max();
      } else {
        wake = std::min(wake, kill_at);
      }
    }
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {renewer.lost_fd(), POLLIN, 0}};
    const auto ms = std::chrono::ceil<Millis>(wake - Clock::now()).count();
    int n = ::poll(fds, done.lost ? 1 : 2, static_cast<int>(std::clamp<long long>(ms, 0, 3600 * 1000)));
    if (n < 0 && errno != EINTR) {
      throw Error(ExitStatus::k_unavailable, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (!done.lost && (fds[1].revents & POLLIN)) {
      done.lost = true;
      done.lost_reason = renewer.lost_reason();
    }
    if (fds[0].revents & POLLIN) {
      while (int sig = signals.take()) {
        if (sig != SIGCHLD) {
          log_debug("forwarding SIG{} to the command", signal_name(sig));
          kill(-child, sig);
        }
      }
    }
    // Reap on every wake-up: SIGCHLD may have been merged with another signal.
    int wstatus = 0;
    pid_t r = waitpid(child, &wstatus, WNOHANG);
    if (r == child) {
      done.status = decode(wstatus);
      reaped = true;
    }
  }
  if (done.lost && !done.lost_reason.empty()) {
    log_warning("lost the lock: {}", done.lost_reason);  // noticed in the same instant CMD ended
  }
  renewer.stop();
  stop_group_guard(guard, guard_pipe);
  if (take_terminal) {
    tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  return done;
}

}  // namespace redlock::exec
