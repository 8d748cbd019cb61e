#include "exec/supervisor.hpp"

#include <dirent.h>
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
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "exec/wait_status.hpp"
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

const char* signal_name(int sig) {
  const char* d = sigabbrev_np(sig);
  return d ? d : "?";
}

// How many processes of group `pgid` still run. Zombies do not count: they
// run nothing, and one reparented to an init that is slow to reap (or never
// reaps) would keep kill(-pgid, 0) succeeding for as long as it lingers.
size_t live_members(pid_t pgid) {
  if (kill(-pgid, 0) != 0 && errno == ESRCH) {
    return 0;  // the common case, without a look at /proc
  }
  size_t live = 0;
  DIR* proc = opendir("/proc");
  if (!proc) {
    return 1;  // cannot tell: assume it still runs, SIGKILL will follow
  }
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') {
      continue;
    }
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    Fd fd(open(path, O_RDONLY | O_CLOEXEC));
    char buf[512];
    const ssize_t n = fd.get() < 0 ? -1 : read(fd.get(), buf, sizeof(buf) - 1);
    if (n <= 0) {
      continue;  // gone meanwhile
    }
    buf[n] = '\0';
    // "pid (comm) state ppid pgrp ...": comm may hold anything, even ")".
    const char* close = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (close && std::sscanf(close + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid && state != 'Z' &&
        state != 'X') {
      ++live;
    }
  }
  closedir(proc);
  return live;
}

// Where the lock stands, as far as the supervisor knows.
enum class Lease {
  k_held,      // renewed in time so far
  k_lost,      // found lost (lost_reason says why), not yet acted upon
  k_acted_on,  // lost, and CMD's group got the --on-lost policy
};

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

  // CMD's process group is `child` for as long as any member lives (the
  // kernel does not hand out a group's number while it has members), so
  // signals go to -child even after CMD itself has been reaped.
  Finished done;
  Lease lease = Lease::k_held;
  std::string lost_reason;
  // SIGKILL deadline after a SIGTERM; max() while none is due. (A
  // std::optional here trips GCC 12's -Wmaybe-uninitialized at -O2.)
  const TimePoint k_none = TimePoint::max();
  TimePoint kill_at = k_none;
  bool killed = false;      // SIGKILL was sent to the group
  bool reaped = false;      // CMD itself has exited
  bool group_gone = false;  // ... and so has every process left in its group
  const auto terminate = [&](TimePoint now) {
    kill(-child, SIGTERM);
    kill(-child, SIGCONT);  // a stopped process must wake up to die
    if (kill_at == k_none && !killed) {
      kill_at = now + policy.kill_after;
    }
  };
  while (!group_gone) {
    const auto now = Clock::now();
    TimePoint wake = now + std::chrono::hours(24);
    if (lease == Lease::k_held) {
      // No confirmed renewal by validity - kill_after counts as lost.
      const TimePoint deadline = renewer.validity_end() - policy.kill_after;
      if (now >= deadline) {
        lease = Lease::k_lost;
        lost_reason = "no renewal was confirmed before the lock's validity ran out (is Redis reachable?)";
      } else {
        wake = std::min(wake, deadline);
      }
    }
    if (lease == Lease::k_lost) {
      switch (policy.on_lost) {
        case OnLost::k_term:
          log_warning("lost the lock: {}; sending SIGTERM to the command (exit status 74)", lost_reason);
          terminate(now);
          break;
        case OnLost::k_kill:
          log_warning("lost the lock: {}; killing the command (exit status 74)", lost_reason);
          kill(-child, SIGKILL);
          killed = true;
          kill_at = k_none;
          break;
        case OnLost::k_ignore:
          log_warning("lost the lock: {}; the command goes on (--on-lost ignore; exit status 74)", lost_reason);
          break;
      }
      lease = Lease::k_acted_on;
      renewer.stop();
    }
    if (kill_at != k_none) {
      if (now >= kill_at) {
        log_warning("the command did not stop within --kill-after; sending SIGKILL to its process group");
        kill(-child, SIGKILL);
        killed = true;
        kill_at = k_none;
      } else {
        wake = std::min(wake, kill_at);
      }
    }
    if (reaped) {
      // Nothing says when the last of a group is gone: look again soon.
      wake = std::min(wake, now + Millis(20));
      if (killed) {
        kill(-child, SIGKILL);  // again, for any process forked meanwhile
      }
    }
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {renewer.lost_fd(), POLLIN, 0}};
    const auto ms = std::chrono::ceil<Millis>(wake - Clock::now()).count();
    int n = ::poll(fds, lease == Lease::k_held ? 2 : 1, static_cast<int>(std::clamp<long long>(ms, 0, 3600 * 1000)));
    if (n < 0 && errno != EINTR) {
      throw Error(ExitStatus::k_unavailable, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (lease == Lease::k_held && (fds[1].revents & POLLIN)) {
      lease = Lease::k_lost;
      lost_reason = renewer.lost_reason();
    }
    if (fds[0].revents & POLLIN) {
      while (int sig = signals.take()) {
        if (sig != SIGCHLD) {
          log_debug("forwarding SIG{} to the command's process group", signal_name(sig));
          kill(-child, sig);
        }
      }
    }
    if (!reaped) {
      // Reap on every wake-up: SIGCHLD may have been merged with another signal.
      int wstatus = 0;
      if (waitpid(child, &wstatus, WNOHANG) == child) {
        done.status = exit_status_of(wstatus);
        reaped = true;
        // What CMD left behind in its group must not outlive the lock:
        // it is terminated (SIGTERM, SIGKILL after --kill-after) while
        // the lock is still held and renewed.
        if (const size_t left = live_members(child); left > 0) {
          log_warning("the command exited but left {} process{} in its process group; {} before the lock is released",
                      left, left == 1 ? "" : "es",
                      killed              ? "waiting for them to die"
                      : kill_at != k_none ? "waiting for them, SIGKILL at --kill-after"
                                          : "sending SIGTERM (SIGKILL after --kill-after)");
          if (!killed) {
            terminate(Clock::now());
          }
        } else {
          group_gone = true;
        }
      }
    } else {
      group_gone = live_members(child) == 0;
    }
  }
  done.lost = lease != Lease::k_held;
  if (lease == Lease::k_lost) {
    log_warning("lost the lock: {}", lost_reason);  // noticed in the same instant the group ended
  }
  renewer.stop();
  stop_group_guard(guard, guard_pipe);
  if (take_terminal) {
    tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  return done;
}

}  // namespace redlock::exec
