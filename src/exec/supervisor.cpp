#include "exec/supervisor.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "exec/wait_status.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace redlock::exec {
namespace {

// What the child needs between clone and exec, prepared by the parent.
struct Launch {
  char* const* argv;
  char* const* envp;
  pid_t parent;
  bool take_terminal;
  const char* shown;  // argv[0] as a line on stderr may show it (escaped)
};

// The part of the child's life between clone and exec. It shares redlock's
// memory (CLONE_VM | CLONE_VFORK, as posix_spawn does) while redlock waits
// for the exec: only async-signal-safe calls, nothing allocated, nothing
// written but the stack it was given. When the exec fails it returns the
// exit status, and clone() ends the child with a raw exit system call: no
// _exit(), whose noreturn call a sanitized build announces to ASan, which
// cannot place the borrowed stack and warns on CMD's stderr.
int become_command(void* arg) {
  const auto& l = *static_cast<const Launch*>(arg);
  setpgid(0, 0);
  if (l.take_terminal) {
    tcsetpgrp(STDIN_FILENO, getpid());  // SIGTTOU is still blocked here
  }
  // If redlock dies, CMD must not go on unlocked; and if it already died
  // between clone and here, the death signal was missed: check by hand.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != l.parent) {
    return 128 + SIGKILL;
  }
  // CMD gets the signal dispositions redlock was started with, as from
  // flock(1) or nohup: a signal ignored then stays ignored; caught ones are
  // reset by execve (redlock catches none: its signals come through a
  // signalfd; a sanitized build's fault handlers would run only if this
  // child crashed before its exec). The one redlock changed, SIGPIPE, goes
  // back before any signal is unblocked (they all are blocked since before
  // the clone).
  if (!sigpipe_ignored_at_start()) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Only 0, 1 and 2 are CMD's.
  syscall(SYS_close_range, 3U, ~0U, 0U);
  execvpe(l.argv[0], l.argv, l.envp);
  const int err = errno;
  const int status = err == ENOENT ? 127 : 126;
  if (verbosity() == Verbosity::k_silent) {  // -qq: the status alone says it
    return status;
  }
  const char* prefix = "redlock: cannot run ";
  (void)!write(STDERR_FILENO, prefix, strlen(prefix));
  (void)!write(STDERR_FILENO, l.shown, strlen(l.shown));
  // strerror() is not safe here (it may look up a locale): the reasons that
  // tell the user what to change, by hand.
  const char* why = ": cannot execute\n";
  switch (err) {
    case ENOENT:
      why = ": command not found\n";
      break;
    case EACCES:
    case ENOEXEC:
    case EISDIR:
      why = ": permission denied or not executable\n";
      break;
    case E2BIG:
      why = ": argument list too long (with the environment)\n";
      break;
    case ENAMETOOLONG:
      why = ": file name too long\n";
      break;
    case ETXTBSY:
      why = ": text file busy (it is being written)\n";
      break;
    case ELOOP:
      why = ": too many levels of symbolic links\n";
      break;
    case ENOMEM:
      why = ": out of memory\n";
      break;
    default:
      break;
  }
  (void)!write(STDERR_FILENO, why, strlen(why));
  return status;
}

// Every signal blocked for the life of the object: a handler of redlock's
// must never run in a child that shares its memory.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &m_saved);
  }
  ~AllSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &m_saved, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t m_saved{};
};

// Starts CMD without copying redlock: the child borrows redlock's memory on
// a stack of its own until it execs (or exits), and redlock waits until
// then. Nothing of redlock is duplicated, so this costs the same whatever
// redlock's size. Returns the child's pid, or -1 with errno set.
pid_t spawn_command(const Launch& launch, const std::vector<std::string>& argv) {
  // execvpe keeps a copy of each PATH candidate, and of argv for a script
  // without #!, on this stack.
  size_t bytes = size_t{64} * 1024 + (argv.size() + 2) * sizeof(char*);
  if (const char* path = std::getenv("PATH")) {
    bytes += 2 * strlen(path);
  }
  for (const auto& a : argv) {
    bytes += a.size();
  }
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bytes = (bytes + page - 1) / page * page;
  void* stack = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    return -1;
  }
  pid_t child;
  {
    AllSignalsBlocked blocked;
    child = clone(become_command, static_cast<char*>(stack) + bytes, CLONE_VM | CLONE_VFORK | SIGCHLD,
                  const_cast<Launch*>(&launch));
  }
  const int err = errno;
  munmap(stack, bytes);
  errno = err;
  return child;
}

// The group guard: a small process that outlives redlock by an instant. It
// waits on a pipe that only redlock writes to. If redlock ends without
// saying "done" (even by SIGKILL, when PR_SET_PDEATHSIG only reaches CMD
// itself), the pipe closes and the guard SIGKILLs CMD's whole process group,
// so no grandchild goes on unlocked. It leads a process group of its own:
// a SIGKILL to redlock's group (timeout -s KILL, kill -9 %job) must not take
// the guard with it.
//
// It also keeps the lock's deadline: redlock tells it the end of the lock's
// validity at the start and after each confirmed renewal, and if that end
// comes before the next word, the guard SIGKILLs the group. A redlock that
// is stopped (SIGSTOP, a debugger, a frozen machine's slow half) renews
// nothing and acts on nothing; CMD must not run on past the lock for that.
//
// Each word is 8 bytes (a pipe writes those whole): the validity's end in
// nanoseconds on CLOCK_BOOTTIME, or 0 for "done, the group is gone". The
// deadline is a timer on that clock: unlike the monotonic clock it counts
// the time a suspended machine slept, as the servers' TTLs do, so a
// deadline passed during a suspend fires as the machine wakes.
//
// It runs in redlock's memory (CLONE_VM, no copy of anything) on a stack of
// its own that lives as long as the memory does, so it costs a few
// microseconds instead of a fork. It only makes raw system calls; all
// signals stay blocked (only SIGKILL or the pipe ends it). Of those calls
// only the kill() can fail, and only once redlock is gone: the errno it
// may set is nobody else's then.
struct GuardArgs {
  int pipe = -1;
  int timer = -1;  // a timerfd on CLOCK_BOOTTIME
  pid_t group = 0;
  long long deadline_ns = 0;  // 0: none (--on-lost ignore)
};
GuardArgs g_guard;
std::atomic<bool> g_guard_fired{false};  // the guard killed the group at the deadline
alignas(64) char g_guard_stack[16 * 1024];

// `t` (steady_clock, which is CLOCK_MONOTONIC) on CLOCK_BOOTTIME.
long long boot_clock_ns(TimePoint t) {
  timespec boot{};
  clock_gettime(CLOCK_BOOTTIME, &boot);
  const long long since_boot = static_cast<long long>(boot.tv_sec) * 1'000'000'000LL + boot.tv_nsec;
  return t.time_since_epoch().count() + (since_boot - Clock::now().time_since_epoch().count());
}

// Arms the guard's timer for `deadline_ns` (absolute), or disarms it (0).
void arm(int timer, long long deadline_ns) {
  itimerspec when{};
  when.it_value.tv_sec = deadline_ns / 1'000'000'000LL;
  when.it_value.tv_nsec = deadline_ns % 1'000'000'000LL;
  syscall(SYS_timerfd_settime, timer, TFD_TIMER_ABSTIME, &when, nullptr);
}

// Closes every descriptor but `a` and `b` (a < b).
void close_all_but(unsigned a, unsigned b) {
  if (a > 0) {
    syscall(SYS_close_range, 0U, a - 1, 0U);
  }
  if (b > a + 1) {
    syscall(SYS_close_range, a + 1, b - 1, 0U);
  }
  syscall(SYS_close_range, b + 1, ~0U, 0U);
}

int guard_main(void* /*unused*/) {
  syscall(SYS_setpgid, 0, 0);  // and redlock does the same, whichever runs first
  const int p = g_guard.pipe;
  const int timer = g_guard.timer;
  // Only these two stay open: a guard holding redlock's standard streams or
  // sockets would keep them open after redlock.
  close_all_but(static_cast<unsigned>(std::min(p, timer)), static_cast<unsigned>(std::max(p, timer)));
  arm(timer, g_guard.deadline_ns);
  while (true) {
    pollfd fds[2] = {{p, POLLIN, 0}, {timer, POLLIN, 0}};
    if (syscall(SYS_ppoll, fds, 2, nullptr, nullptr, 0) < 0) {
      continue;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      unsigned long long expirations = 0;
      syscall(SYS_read, timer, &expirations, sizeof(expirations));
      g_guard_fired.store(true);
      syscall(SYS_kill, -g_guard.group, SIGKILL);  // the lock may be gone: so is CMD
      arm(timer, 0);
    }
    if ((fds[0].revents & (POLLIN | POLLHUP)) == 0) {
      continue;
    }
    long long word = 0;
    long n = 0;
    do {
      n = syscall(SYS_read, p, &word, sizeof(word));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      syscall(SYS_kill, -g_guard.group, SIGKILL);  // redlock is gone
      break;
    }
    if (n == static_cast<long>(sizeof(word))) {
      if (word == 0) {
        break;  // done
      }
      arm(timer, word);
    }
  }
  syscall(SYS_exit_group, 0);
  return 0;
}

}  // namespace

bool GroupGuard::start(pid_t group, std::optional<TimePoint> deadline) {
  stop();
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    return false;
  }
  const int timer = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
  if (timer < 0) {
    close(p[0]);
    close(p[1]);
    return false;
  }
  g_guard = GuardArgs{p[0], timer, group, deadline ? boot_clock_ns(*deadline) : 0};
  g_guard_fired.store(false);
  pid_t guard;
  {
    AllSignalsBlocked blocked;  // and so they stay in the guard
    // No exit signal: its end must not read as news on redlock's signal
    // descriptor (reaped with __WALL).
    guard = clone(guard_main, g_guard_stack + sizeof(g_guard_stack), CLONE_VM, nullptr);
    if (guard > 0) {
      (void)setpgid(guard, guard);  // out of redlock's group before any signal can reach it
    }
  }
  close(p[0]);
  close(timer);
  if (guard < 0) {
    close(p[1]);
    return false;
  }
  m_pid = guard;
  m_pipe = Fd(p[1]);
  m_keeps_deadline = deadline.has_value();
  return true;
}

bool GroupGuard::fired() const {
  return m_pid > 0 && g_guard_fired.load();
}

void GroupGuard::extend(TimePoint deadline) {
  if (!m_keeps_deadline || m_said_done.load()) {
    return;
  }
  const long long word = boot_clock_ns(deadline);
  (void)!write(m_pipe.get(), &word, sizeof(word));
}

void GroupGuard::done() {
  if (m_pipe.get() < 0 || m_said_done.exchange(true)) {
    return;
  }
  const long long word = 0;
  (void)!write(m_pipe.get(), &word, sizeof(word));
}

void GroupGuard::stop() {
  if (m_pid <= 0) {
    return;
  }
  done();
  int ws;
  while (waitpid(m_pid, &ws, __WALL) < 0 && errno == EINTR) {
  }
  m_pid = -1;
  m_pipe.reset();
  m_said_done = false;
}

namespace {

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

// One poll loop over the stop signals and the renewer's "lost" descriptor,
// with deadlines for the lock's validity and for SIGKILL after SIGTERM.
// CMD's process group is `child` for as long as any member lives (the kernel
// does not hand out a group's number while it has members), so signals go to
// -child even after CMD itself has been reaped.
class Supervisor {
 public:
  Supervisor(pid_t child, Renewer& renewer, const Policy& policy, SignalFd& signals, bool terminal)
      : m_child(child), m_renewer(renewer), m_policy(policy), m_signals(signals), m_terminal(terminal) {}

  Finished run() {
    while (!m_group_gone) {
      const auto now = Clock::now();
      TimePoint wake = now + std::chrono::hours(24);
      check_renewer(now, wake);
      check_validity(now, wake);
      act_on_loss(now);
      check_kill_deadline(now, wake);
      if (m_reaped) {
        // Nothing says when the last of a group is gone: look again soon.
        wake = std::min(wake, now + Millis(20));
        if (m_killed) {
          kill(-m_child, SIGKILL);  // again, for any process forked meanwhile
        }
      }
      wait_until(wake);
      reap();
    }
    // The group ended past the deadline before this loop could see it: a
    // stopped redlock, whose guard killed the group when the validity ran out.
    if (m_lease == Lease::k_held && Clock::now() >= m_renewer.validity_end() - m_policy.kill_after) {
      m_lease = Lease::k_lost;
      m_lost_reason = "no renewal was confirmed before the lock's validity ran out (redlock itself was stopped)";
    }
    m_done.lost = m_lease != Lease::k_held;
    if (m_lease == Lease::k_lost) {
      log_warning("lost the lock: {}", m_lost_reason);  // noticed in the same instant the group ended
    }
    return m_done;
  }

 private:
  // The renewer's thread starts when it is soon needed (see start_by()):
  // a command that ends in milliseconds never creates it.
  void check_renewer(TimePoint now, TimePoint& wake) {
    if (m_renewer.started() || m_lease != Lease::k_held) {
      return;
    }
    if (now >= m_renewer.start_by()) {
      m_renewer.start();
    } else {
      wake = std::min(wake, m_renewer.start_by());
    }
  }

  // No confirmed renewal by validity - kill_after counts as lost.
  void check_validity(TimePoint now, TimePoint& wake) {
    if (m_lease != Lease::k_held) {
      return;
    }
    const TimePoint deadline = m_renewer.validity_end() - m_policy.kill_after;
    if (now >= deadline) {
      m_lease = Lease::k_lost;
      m_lost_reason =
          "no renewal was confirmed before the lock's validity ran out (is Redis reachable? was redlock stopped?)";
    } else {
      wake = std::min(wake, deadline);
    }
  }

  void act_on_loss(TimePoint now) {
    if (m_lease != Lease::k_lost) {
      return;
    }
    switch (m_policy.on_lost) {
      case OnLost::k_term:
        log_warning("lost the lock: {}; sending SIGTERM to the command (exit status 74)", m_lost_reason);
        terminate(now);
        break;
      case OnLost::k_kill:
        log_warning("lost the lock: {}; killing the command (exit status 74)", m_lost_reason);
        kill_group();
        break;
      case OnLost::k_ignore:
        log_warning("lost the lock: {}; the command goes on (--on-lost ignore; exit status 74)", m_lost_reason);
        break;
    }
    m_lease = Lease::k_acted_on;
    m_renewer.stop();
  }

  void check_kill_deadline(TimePoint now, TimePoint& wake) {
    if (m_kill_at == k_none) {
      return;
    }
    if (now >= m_kill_at) {
      log_warning("the command did not stop within --kill-after; sending SIGKILL to its process group");
      kill_group();
    } else {
      wake = std::min(wake, m_kill_at);
    }
  }

  void terminate(TimePoint now) {
    kill(-m_child, SIGTERM);
    kill(-m_child, SIGCONT);  // a stopped process must wake up to die
    if (m_kill_at == k_none && !m_killed) {
      m_kill_at = now + m_policy.kill_after;
    }
  }

  void kill_group() {
    kill(-m_child, SIGKILL);
    m_killed = true;
    m_kill_at = k_none;
  }

  // Waits for a signal, the renewer's verdict, or `wake`; forwards signals.
  void wait_until(TimePoint wake) {
    const bool held = m_lease == Lease::k_held;
    pollfd fds[2] = {{m_signals.fd(), POLLIN, 0}, {m_renewer.lost_fd(), POLLIN, 0}};
    const auto ms = std::chrono::ceil<Millis>(wake - Clock::now()).count();
    const int n = ::poll(fds, held ? 2 : 1, static_cast<int>(std::clamp<long long>(ms, 0, 3600LL * 1000)));
    if (n < 0 && errno != EINTR) {
      throw Error(ExitStatus::k_unavailable, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (held && (fds[1].revents & POLLIN)) {
      m_lease = Lease::k_lost;
      m_lost_reason = m_renewer.lost_reason();
    }
    if (fds[0].revents & POLLIN) {
      while (const int sig = m_signals.take()) {
        if (sig != SIGCHLD) {
          log_debug("forwarding SIG{} to the command's process group", signal_name(sig));
          kill(-m_child, sig);
          if (sig != SIGUSR1 && sig != SIGUSR2) {
            kill(-m_child, SIGCONT);  // a stopped command must wake up to act on a stop signal
          }
        }
      }
    }
  }

  // Reaps CMD on every wake-up (SIGCHLD may have been merged with another
  // signal), and then watches for the rest of its group to be gone.
  void reap() {
    if (m_reaped) {
      m_group_gone = live_members(m_child) == 0;
      return;
    }
    int wstatus = 0;
    if (waitpid(m_child, &wstatus, WNOHANG | WUNTRACED) != m_child) {
      return;
    }
    if (WIFSTOPPED(wstatus)) {
      suspend_with(WSTOPSIG(wstatus));
      return;
    }
    m_done.status = exit_status_of(wstatus);
    m_reaped = true;
    // What CMD left behind in its group must not outlive the lock: it is
    // terminated (SIGTERM, SIGKILL after --kill-after) while the lock is
    // still held and renewed.
    const size_t left = live_members(m_child);
    if (left == 0) {
      m_group_gone = true;
      return;
    }
    // After a loss there is no lock left to release: only the processes.
    log_warning("the command exited but left {} process{} in its process group; {}{}", left, left == 1 ? "" : "es",
                m_killed              ? "waiting for them to die"
                : m_kill_at != k_none ? "waiting for them, SIGKILL at --kill-after"
                                      : "sending SIGTERM (SIGKILL after --kill-after)",
                m_lease == Lease::k_held ? " before the lock is released" : "");
    if (!m_killed) {
      terminate(Clock::now());
    }
  }

  // Job control: Ctrl-Z stops CMD, whose group has the terminal, and the
  // shell waits for redlock. So redlock hands the terminal back to its own
  // group and stops too: the shell shows the job stopped and gives its
  // prompt back. Once continued (fg or bg), it gives CMD the terminal again
  // if it is in the foreground, and continues CMD. While redlock is stopped
  // nothing renews the lock; past its validity the guard ends CMD's group.
  // A CMD stopped otherwise (kill -STOP) stays as it is.
  void suspend_with(int sig) {
    if (!m_terminal || (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)) {
      return;
    }
    log_debug("the command was stopped by SIG{}; stopping too", signal_name(sig));
    // The terminal goes back to redlock's group only if the command had it:
    // a command stopped reading in the background (after bg) must not take
    // it from the shell.
    if (tcgetpgrp(STDIN_FILENO) == m_child) {
      tcsetpgrp(STDIN_FILENO, getpgrp());  // SIGTTOU is blocked
    }
    // The whole of redlock's group stops, as the terminal would have stopped
    // it had the command been in it: a script that runs redlock, or an outer
    // redlock exec, sees a job-control stop too. Only this thread takes
    // SIGTSTP (the renewer's blocks it), so this returns once continued.
    killpg(getpgrp(), SIGTSTP);
    if (tcgetpgrp(STDIN_FILENO) == getpgrp()) {
      tcsetpgrp(STDIN_FILENO, m_child);  // continued in the foreground (fg)
    }
    kill(-m_child, SIGCONT);
  }

  // SIGKILL deadline after a SIGTERM; max() while none is due. (A
  // std::optional here trips GCC 12's -Wmaybe-uninitialized at -O2.)
  static constexpr TimePoint k_none = TimePoint::max();

  pid_t m_child;
  Renewer& m_renewer;
  const Policy& m_policy;
  SignalFd& m_signals;
  bool m_terminal;  // CMD's group was made the terminal's foreground group
  Finished m_done;
  Lease m_lease = Lease::k_held;
  std::string m_lost_reason;
  TimePoint m_kill_at = k_none;
  bool m_killed = false;      // SIGKILL was sent to the group
  bool m_reaped = false;      // CMD itself has exited
  bool m_group_gone = false;  // ... and so has every process left in its group
};

}  // namespace

Finished supervise(const Command& cmd, Renewer& renewer, const Policy& policy, SignalFd& signals, GroupGuard& guard) {
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

  // When this returns, the child has exec'd CMD or exited: it made itself a
  // process group and, with a terminal, the foreground one.
  const std::string shown = one_line(cmd.argv.front());
  const pid_t child = spawn_command(Launch{argv.data(), envp.data(), getpid(), take_terminal, shown.c_str()}, cmd.argv);
  if (child < 0) {
    throw Error(ExitStatus::k_unavailable, fmt::format("cannot start the command: {}", std::strerror(errno)));
  }
  // Started before the renewer's thread exists (the supervisor starts it
  // when it is soon needed). Under --on-lost ignore the command may run on
  // past the lock, so the guard keeps no deadline.
  if (policy.on_lost == OnLost::k_ignore) {
    (void)guard.start(child, std::nullopt);
  } else if (guard.start(child, renewer.validity_end())) {
    renewer.on_renewed([&guard](TimePoint end) { guard.extend(end); });
  }
  Finished done = Supervisor(child, renewer, policy, signals, take_terminal).run();
  guard.done();  // the group is gone
  if (guard.fired() && !done.lost) {
    // A renewal once redlock ran again may have found the key still there;
    // the command was killed all the same, and for this.
    log_warning("lost the lock: redlock was stopped past the lock's validity, and its guard killed the command");
    done.lost = true;
  }
  renewer.stop();
  // Back to redlock's group, unless someone else has the terminal now (the
  // shell, after Ctrl-Z and bg).
  if (take_terminal && tcgetpgrp(STDIN_FILENO) == child) {
    tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  return done;
}

}  // namespace redlock::exec
