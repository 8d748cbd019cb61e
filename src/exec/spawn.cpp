#include "exec/spawn.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace redlock::exec {
namespace {

// What the child needs between clone and exec, prepared by the parent.
struct Launch {
  const char* file;  // what to exec: argv[0], or where it was found in PATH
  char* const* argv;
  char* const* envp;
  pid_t parent;
  int tty;       // the terminal to take, -1 for none
  bool* failed;  // set when the exec fails (the parent's, shared memory)
  int* error;    // and why (errno)
};

// Whether `path` names a file by its path (not a command looked up in
// PATH) that is there: an ENOENT for it means its #! interpreter is missing.
// Async-signal-safe.
bool file_there(const char* path) {
  return strchr(path, '/') != nullptr && access(path, F_OK) == 0;
}

// Why an exec of `path` failed, in words that tell the user what to change
// (not strerror()'s), with ": " before and a newline after.
const char* exec_failure(int err, const char* path) {
  switch (err) {
    case ENOENT:
      return file_there(path) ? ": its interpreter (the #! line) was not found\n" : ": command not found\n";
    case EACCES:
    case ENOEXEC:
    case EISDIR:
      return ": permission denied or not executable\n";
    case E2BIG:
      return ": argument list too long (with the environment)\n";
    case ENAMETOOLONG:
      return ": file name too long\n";
    case ETXTBSY:
      return ": text file busy (it is being written)\n";
    case ELOOP:
      return ": too many levels of symbolic links\n";
    case ENOMEM:
      return ": out of memory\n";
    default:
      return ": cannot execute\n";
  }
}

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
  if (l.tty >= 0) {
    tcsetpgrp(l.tty, getpid());  // SIGTTOU is still blocked here
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
  execvpe(l.file, l.argv, l.envp);
  const int err = errno;
  const int status = err == ENOENT ? 127 : 126;
  *l.failed = true;  // seen by redlock once this child exits (CLONE_VFORK)
  *l.error = err;
  return status;
}

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

}  // namespace

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (name.empty() || name.find('/') != std::string::npos || path == nullptr) {
    return "";
  }
  std::string_view rest(path);
  while (true) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    // An empty entry is the current directory, as for execvp.
    std::string candidate = fmt::format("{}/{}", dir.empty() ? std::string_view(".") : dir, name);
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0) {
      if (S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
      // A directory, or a file redlock may not execute: execvp goes on.
    } else if (errno != ENOENT && errno != ENOTDIR && errno != EACCES && errno != ESTALE && errno != ENODEV &&
               errno != ETIMEDOUT) {
      return "";  // where execvp would stop: it does, and says why
    }
    if (colon == std::string_view::npos) {
      return "";
    }
    rest.remove_prefix(colon + 1);
  }
}

Fd controlling_terminal() {
  return Fd(open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
}

Spawned spawn(const Command& cmd, int tty) {
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
  // terminal's foreground group while it runs (Ctrl-C and Ctrl-Z reach
  // CMD), whatever redlock's standard input is.
  const bool take_terminal = tty >= 0 && tcgetpgrp(tty) == getpgrp();
  if (tty >= 0) {
    sigset_t ttou;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, nullptr);
  }

  // When this returns, the child has exec'd CMD or exited: it made itself a
  // process group and, with a terminal, the foreground one.
  bool failed = false;
  int error = 0;
  const std::string found = find_in_path(cmd.argv.front());
  const char* file = found.empty() ? argv.front() : found.c_str();
  const pid_t child = spawn_command(
      Launch{file, argv.data(), envp.data(), getpid(), take_terminal ? tty : -1, &failed, &error}, cmd.argv);
  if (child < 0) {
    throw Error(ExitStatus::k_unavailable, fmt::format("cannot start the command: {}", std::strerror(errno)));
  }
  // Said by redlock, not by the child: redlock waits for the child (it
  // shares redlock's memory until its exec), and a line is written through
  // the log, which may allocate and never waits.
  if (failed && verbosity() != Verbosity::k_silent) {
    const std::string shown = cmd.argv.front().empty() ? "''" : one_line(cmd.argv.front());
    std::string why = exec_failure(error, cmd.argv.front().c_str());
    why.pop_back();
    write_shown_line("cannot run " + shown + why, LogLevel::k_error);
  }
  return Spawned{child, take_terminal, !failed};
}

void terminal_to_redlock(int tty, pid_t command) {
  if (tty >= 0 && tcgetpgrp(tty) == command) {
    tcsetpgrp(tty, getpgrp());  // SIGTTOU is blocked
  }
}

bool terminal_to_command(int tty, pid_t command) {
  return tty >= 0 && tcgetpgrp(tty) == getpgrp() && tcsetpgrp(tty, command) == 0;
}

void stop_group(int sig) {
  // SIGTTOU is blocked since the terminal was first handed over; the stop
  // must be taken by this thread, the one that unblocks it.
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigset_t saved;
  pthread_sigmask(SIG_UNBLOCK, &one, &saved);
  killpg(getpgrp(), sig);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

Continued::Continued() {
  sigset_t cont;
  sigemptyset(&cont);
  sigaddset(&cont, SIGCONT);
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &cont, &before);
  m_was_blocked = sigismember(&before, SIGCONT) == 1;
  m_fd.reset(signalfd(-1, &cont, SFD_NONBLOCK | SFD_CLOEXEC));
}

Continued::~Continued() {
  (void)take();
  if (!m_was_blocked) {
    sigset_t cont;
    sigemptyset(&cont);
    sigaddset(&cont, SIGCONT);
    pthread_sigmask(SIG_UNBLOCK, &cont, nullptr);
  }
}

bool Continued::take() {
  bool any = false;
  signalfd_siginfo info{};
  while (read(m_fd.get(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    any = true;
  }
  return any;
}

}  // namespace redlock::exec
