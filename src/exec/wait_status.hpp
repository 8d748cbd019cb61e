#pragma once

#include <sys/wait.h>

namespace redlock::exec {

// A waitpid() status as a shell reports it: the exit status, 128+N for a
// process killed by signal N, -1 for anything else (stopped, continued).
[[nodiscard]] constexpr int exit_status_of(int wstatus) {
  if (WIFEXITED(wstatus)) {
    return WEXITSTATUS(wstatus);
  }
  if (WIFSIGNALED(wstatus)) {
    return 128 + WTERMSIG(wstatus);
  }
  return -1;
}

}  // namespace redlock::exec
