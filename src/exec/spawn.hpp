#pragma once

// Starting CMD: a child that borrows redlock's memory until it execs (as
// posix_spawn does), in a process group of its own, given the terminal when
// redlock has it; and handing the terminal back and forth at job control.

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace redlock::exec {

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // the complete environment, KEY=VALUE
};

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
};

// Starts `cmd` in a process group of its own, which becomes the terminal's
// foreground group when redlock's is (Ctrl-C reaches CMD); SIGTTOU stays
// blocked in redlock from then on, so it can hand the terminal back. CMD
// gets SIGKILL if redlock dies, the signal dispositions redlock was started
// with, no signal blocked, and only descriptors 0, 1 and 2. When it
// returns, the child has exec'd CMD or exited (127 when CMD is not found,
// 126 when it cannot be run, said on stderr). Throws Error (69) when no
// process can be started.
[[nodiscard]] Spawned spawn(const Command& cmd);

// Gives the terminal back to redlock's process group if the group of
// `command` has it (not if the shell took it, after Ctrl-Z and bg).
void terminal_to_redlock(pid_t command);

// Gives the terminal to the group of `command` if redlock's group has it
// (redlock was continued in the foreground: fg).
void terminal_to_command(pid_t command);

}  // namespace redlock::exec
