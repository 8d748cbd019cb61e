#pragma once

// Starting CMD: a child that borrows redlock's memory until it execs (as
// posix_spawn does), in a process group of its own, given the terminal when
// redlock has it; and handing the terminal back and forth at job control.
// "The terminal" is redlock's controlling terminal, whatever its standard
// input is (</dev/null, a pipe, a here-doc): Ctrl-Z and Ctrl-C come from it.

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "util/fd.hpp"

namespace redlock::exec {

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // the complete environment, KEY=VALUE
};

// Where the command `name` is in redlock's PATH, as execvp(3) would run
// it: the first entry where it is a regular file redlock may execute. ''
// when `name` has a slash, when it is not found, or when a lookup fails
// for another reason than its absence: the child's execvp then searches
// PATH itself and fails as it always did. One stat() and one access() a
// directory, where each execve() execvp tries in a directory without it
// copies the arguments and the environment first.
[[nodiscard]] std::string find_in_path(const std::string& name);

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

// CMD, started.
struct Spawned {
  pid_t pid = -1;         // also its process group's id
  bool terminal = false;  // its group was made the terminal's foreground group
  bool started = true;    // it was exec'd (false: not found or not executable, 127 or 126)
};

// Redlock's controlling terminal, open (-1 when it has none: cron, a
// service, ssh without a terminal).
[[nodiscard]] Fd controlling_terminal();

// Starts `cmd` in a process group of its own, which becomes the foreground
// group of `tty` (the controlling terminal, -1 for none) when redlock's is
// (Ctrl-C and Ctrl-Z reach CMD); with a terminal, SIGTTOU stays blocked in
// redlock from then on, so it can hand the terminal back. CMD
// gets SIGKILL if redlock dies, the signal dispositions redlock was started
// with, no signal blocked, and only descriptors 0, 1 and 2. When it
// returns, the child has exec'd CMD or exited (127 when CMD is not found,
// 126 when it cannot be run, said on stderr). Throws Error (69) when no
// process can be started.
[[nodiscard]] Spawned spawn(const Command& cmd, int tty);

// Gives terminal `tty` back to redlock's process group if the group of
// `command` has it (not if the shell took it, after Ctrl-Z and bg).
void terminal_to_redlock(int tty, pid_t command);

// Gives terminal `tty` to the group of `command` if redlock's group has it
// (redlock is in the foreground: fg); whether it did.
bool terminal_to_command(int tty, pid_t command);

// Stops redlock's whole process group with job-control signal `sig`
// (SIGTSTP, SIGTTIN, SIGTTOU), as the terminal would have had the command
// been in it, so that the shell, a script or an outer exec sees the job
// stopped; returns once redlock is continued, or at once if the group
// cannot stop (an orphaned group discards these signals). Call it from the
// thread that may take `sig` (the renewer's blocks them).
void stop_group(int sig);

// SIGCONT, read through a descriptor while the object lives: how redlock
// learns it was continued (fg, bg), stopped or not. SIGCONT still
// continues the process while it is blocked.
class Continued {
 public:
  Continued();
  ~Continued();
  Continued(const Continued&) = delete;
  Continued& operator=(const Continued&) = delete;
  [[nodiscard]] int fd() const { return m_fd.get(); }
  // Whether a SIGCONT came since the last call (all pending are taken).
  [[nodiscard]] bool take();

 private:
  Fd m_fd;
  bool m_was_blocked = false;
};

}  // namespace redlock::exec
