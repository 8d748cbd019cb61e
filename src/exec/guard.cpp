#include "exec/guard.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <new>

#include "exec/spawn.hpp"

namespace redlock::exec {
namespace {

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
//
// A hard deadline (--max-runtime's end, with its grace) is kept beside the
// validity's: the timer is armed for the sooner of the two, and nothing
// moves the hard one.
struct GuardArgs {
  int pipe = -1;
  int timer = -1;  // a timerfd on CLOCK_BOOTTIME
  pid_t group = 0;
  long long deadline_ns = 0;          // 0: none (--on-lost ignore)
  long long hard_ns = 0;              // 0: none
  std::atomic<int>* fired = nullptr;  // guard_fired(), below
};
GuardArgs g_guard;
// What the guard killed the group for: 0 nothing, 1 the validity's end,
// 2 the hard deadline. It lives in a page shared with the guard, which a
// ThreadSanitizer build starts with a copy of redlock's memory (below).
std::atomic<int>& guard_fired() {
  static std::atomic<int>* fired = [] {
    void* page = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    static std::atomic<int> fallback{0};  // no page: a guard sharing redlock's memory still tells
    return page == MAP_FAILED ? &fallback : new (page) std::atomic<int>{0};
  }();
  return *fired;
}

// ThreadSanitizer keeps its state of each thread in thread-local storage:
// a guard that shared redlock's memory, and with it that state, would
// corrupt it (the guard died, and redlock's next word to it raised
// SIGPIPE). Under ThreadSanitizer the guard gets a copy of the memory
// instead, as a fork would, at the cost of copying the page tables.
#if defined(__SANITIZE_THREAD__)
constexpr int k_clone_flags = 0;
#else
constexpr int k_clone_flags = CLONE_VM;
#endif
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

// The sooner of two deadlines, where 0 is none.
long long sooner(long long a, long long b) {
  return a == 0 ? b : b == 0 ? a : std::min(a, b);
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
  long long validity_ns = g_guard.deadline_ns;
  const long long hard_ns = g_guard.hard_ns;
  arm(timer, sooner(validity_ns, hard_ns));
  while (true) {
    pollfd fds[2] = {{p, POLLIN, 0}, {timer, POLLIN, 0}};
    if (syscall(SYS_ppoll, fds, 2, nullptr, nullptr, 0) < 0) {
      continue;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      unsigned long long expirations = 0;
      syscall(SYS_read, timer, &expirations, sizeof(expirations));
      const bool hard = hard_ns != 0 && (validity_ns == 0 || hard_ns <= validity_ns);
      g_guard.fired->store(hard ? 2 : 1);
      syscall(SYS_kill, -g_guard.group, SIGKILL);  // the lock may be gone, or the time is up: so is CMD
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
      validity_ns = word;
      if (g_guard.fired->load() == 0) {
        arm(timer, sooner(validity_ns, hard_ns));
      }
    }
  }
  syscall(SYS_exit_group, 0);
  return 0;
}

}  // namespace

bool GroupGuard::start(pid_t group, std::optional<TimePoint> deadline, std::optional<TimePoint> hard_deadline) {
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
  g_guard = GuardArgs{p[0],
                      timer,
                      group,
                      deadline ? boot_clock_ns(*deadline) : 0,
                      hard_deadline ? boot_clock_ns(*hard_deadline) : 0,
                      &guard_fired()};
  g_guard.fired->store(0);
  pid_t guard;
  {
    AllSignalsBlocked blocked;  // and so they stay in the guard
    // No exit signal: its end must not read as news on redlock's signal
    // descriptor (reaped with __WALL).
    guard = clone(guard_main, g_guard_stack + sizeof(g_guard_stack), k_clone_flags, nullptr);
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
  return m_pid > 0 && guard_fired().load() == 1;
}

bool GroupGuard::fired_hard() const {
  return m_pid > 0 && guard_fired().load() == 2;
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

}  // namespace redlock::exec
