#include "exec/leftovers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "util/fd.hpp"
#include "util/text.hpp"

namespace redlock::exec {
namespace {

// One line of /proc/PID/stat: "pid (comm) state ppid pgrp ...".
struct Stat {
  pid_t pid = 0;
  std::string comm;
  char state = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

// Every process /proc shows, each read once (one that is gone meanwhile is
// left out).
template <typename Each>
void each_process(Each each) {
  DIR* proc = opendir("/proc");
  if (!proc) {
    return;
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
    // comm may hold anything, even ")": it ends at the last one.
    const char* open_paren = std::strchr(buf, '(');
    const char* close_paren = std::strrchr(buf, ')');
    Stat s;
    long ppid = 0;
    long pgrp = 0;
    if (!open_paren || !close_paren || close_paren < open_paren ||
        std::sscanf(close_paren + 1, " %c %ld %ld", &s.state, &ppid, &pgrp) != 3) {
      continue;
    }
    s.pid = static_cast<pid_t>(pid);
    s.comm.assign(open_paren + 1, close_paren);
    s.ppid = static_cast<pid_t>(ppid);
    s.pgrp = static_cast<pid_t>(pgrp);
    each(s);
  }
  closedir(proc);
}

bool runs(const Stat& s) {
  return s.state != 'Z' && s.state != 'X';
}

}  // namespace

bool adopt_orphans() {
  return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL) == 0;
}

size_t live_members(pid_t pgid) {
  if (kill(-pgid, 0) != 0 && errno == ESRCH) {
    return 0;  // the common case, without a look at /proc
  }
  // Zombies do not count: they run nothing, and one reparented to an init
  // that is slow to reap (or never reaps) would keep kill(-pgid, 0)
  // succeeding for as long as it lingers.
  size_t live = 0;
  bool looked = false;
  each_process([&](const Stat& s) {
    looked = true;
    if (s.pgrp == pgid && runs(s)) {
      ++live;
    }
  });
  return looked ? live : 1;  // cannot tell: assume it still runs, SIGKILL will follow
}

std::vector<Escaped> escaped_from(pid_t pgid, pid_t skip) {
  std::multimap<pid_t, Stat> children;  // by parent
  each_process([&](const Stat& s) { children.emplace(s.ppid, s); });
  std::vector<Escaped> out;
  std::vector<pid_t> parents{getpid()};
  // Breadth first: a parent is signalled before the children it might
  // otherwise leave to be adopted once it is gone.
  for (size_t i = 0; i < parents.size(); ++i) {
    const auto [first, last] = children.equal_range(parents[i]);
    for (auto it = first; it != last; ++it) {
      const Stat& s = it->second;
      if (s.pid == skip) {
        continue;
      }
      parents.push_back(s.pid);
      if (s.pgrp != pgid && runs(s)) {
        out.push_back(Escaped{s.pid, s.comm});
      }
    }
  }
  return out;
}

bool reap_adopted(pid_t child, bool child_reaped) {
  while (true) {
    // Without __WALL the guard (a clone child with no exit signal) is
    // neither waited for nor counted.
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return errno != ECHILD;
    }
    if (info.si_pid == 0) {
      return true;  // children, none ended
    }
    if (info.si_pid == child && !child_reaped) {
      return true;  // CMD's status is the supervisor's to take
    }
    int ws = 0;
    (void)waitpid(info.si_pid, &ws, WNOHANG);
  }
}

std::string describe(const std::vector<Escaped>& escaped, size_t most) {
  std::string out;
  for (size_t i = 0; i < escaped.size() && i < most; ++i) {
    out += fmt::format("{}{} pid {}", i == 0 ? "" : ", ", escape_for_terminal(escaped[i].name), escaped[i].pid);
  }
  if (escaped.size() > most) {
    out += fmt::format(" and {} more", escaped.size() - most);
  }
  return out;
}

}  // namespace redlock::exec
