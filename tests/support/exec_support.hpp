#pragma once

// Helpers shared by the exec tests (tests/integration, tests/faults): CMD is
// usually a small sh script that reports what it saw through files in a temp
// dir ($D in its environment), so that redlock's own stdout stays observable.

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace redlock::test {

inline void write_file(const std::string& path, const std::string& content, mode_t mode = 0644) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
  chmod(path.c_str(), mode);
}

inline bool file_exists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

// Waits until `path` holds a complete line (sh's `echo $$ >file` may be seen
// half-done) and returns it as a PID, or -1 after `limit`.
inline pid_t wait_for_pid(const std::string& path, Seconds limit = Seconds(5)) {
  std::string text;
  bool ok = eventually(
      [&] {
        text = read_file(path);
        return !text.empty() && text.back() == '\n';
      },
      limit);
  return ok ? static_cast<pid_t>(std::stol(text)) : -1;
}

// Seconds until `path` exists (polled every 10 ms), or a negative value after `limit`.
inline double seconds_until_file(const std::string& path, Seconds limit) {
  double start = now_seconds();
  if (!eventually([&] { return file_exists(path); }, limit)) {
    return -1;
  }
  return now_seconds() - start;
}

// Seconds until process `pid` is gone (or a zombie), or a negative value after `limit`.
inline double seconds_until_gone(pid_t pid, Seconds limit) {
  double start = now_seconds();
  if (!eventually([&] { return !process_alive(pid); }, limit)) {
    return -1;
  }
  return now_seconds() - start;
}

// Live (not zombie) processes, from /proc, whose parent and process group
// pass keep(ppid, pgrp).
template <typename Keep>
std::vector<pid_t> live_processes(Keep keep) {
  std::vector<pid_t> out;
  DIR* proc = opendir("/proc");
  if (!proc) {
    return out;
  }
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') {
      continue;
    }
    std::string stat = read_file(std::string("/proc/") + e->d_name + "/stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos) {
      continue;
    }
    // After "pid (comm) ": state ppid pgrp ...
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && state != 'Z' &&
        keep(ppid, pgrp)) {
      out.push_back(static_cast<pid_t>(pid));
    }
  }
  closedir(proc);
  return out;
}

// The state letter of process `pid` in /proc ('T' stopped, 'S' asleep...),
// 0 if it is gone.
inline char process_state(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  char state = 0;
  if (close == std::string::npos || std::sscanf(stat.c_str() + close + 1, " %c", &state) != 1) {
    return 0;
  }
  return state;
}

// Live processes whose process group is `pgid`.
inline std::vector<pid_t> group_members(pid_t pgid) {
  return live_processes([pgid](long /*ppid*/, long pgrp) { return pgrp == pgid; });
}

// Live children of `parent`.
inline std::vector<pid_t> live_children(pid_t parent) {
  return live_processes([parent](long ppid, long /*pgrp*/) { return ppid == parent; });
}

// True if process `pid` ignores signal `sig` (SigIgn in /proc/PID/status).
inline bool ignores_signal(pid_t pid, int sig) {
  std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  auto at = status.find("SigIgn:");
  if (at == std::string::npos) {
    return false;
  }
  unsigned long long mask = std::stoull(status.substr(at + 7), nullptr, 16);
  return (mask >> (sig - 1)) & 1ULL;
}

// Kills, at the end of a test, the process groups of CMDs (and the
// processes) whose PIDs the test learnt from files, so that a failing test
// leaves no sleeping grandchildren behind. Only PIDs of processes this
// test started are ever added.
class Reaper {
 public:
  Reaper() = default;
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  ~Reaper() {
    for (pid_t pid : m_groups) {
      ::kill(-pid, SIGKILL);
    }
    for (pid_t pid : m_pids) {
      if (process_alive(pid)) {
        ::kill(pid, SIGKILL);
      }
    }
  }
  void group(pid_t pgid) {
    if (pgid > 0) {
      m_groups.push_back(pgid);
    }
  }
  void pid(pid_t pid) {
    if (pid > 0) {
      m_pids.push_back(pid);
    }
  }

 private:
  std::vector<pid_t> m_groups;
  std::vector<pid_t> m_pids;
};

// The first line of a CMD script that records SIGTERM in $D/term and exits 0,
// so that a 74 can only come from redlock.
inline const std::string k_term_trap = "trap 'echo term > \"$D/term\"; exit 0' TERM\n";

// CMD for the loss tests: k_term_trap, then writes its PID and a
// grandchild's PID and waits.
inline const std::string k_term_recorder = k_term_trap +
                                           "sleep 30 & echo $! > \"$D/grandchild\"\n"
                                           "echo $$ > \"$D/pid\"\n"
                                           "wait\n";

// Script lines that start a background process ignoring SIGTERM, its PID in
// $D/stubborn. It ignores SIGTERM before anyone can learn its PID (a
// subshell's trap could come after a quick SIGTERM), and the script waits
// for that.
inline const std::string k_stubborn_child =
    "sh -c 'trap \"\" TERM; echo $$ > \"$D/stubborn.tmp\"; mv \"$D/stubborn.tmp\" \"$D/stubborn\"; exec sleep 131' &\n"
    "while [ ! -e \"$D/stubborn\" ]; do sleep 0.01; done\n";

// The clients subscribed to lock `name`'s revoke channel on `redis`: an
// exec that holds it listens there once its command has run a moment.
inline long long revoke_listeners(const RedisServer& redis, const std::string& name) {
  const std::string channel = redlock::lock::keys_for("redlock:", name).revoke_channel;
  const redlock::redis::Reply r = redis.cmd({"PUBSUB", "NUMSUB", channel});
  return r.elements.size() == 2 ? r.elements[1].integer : -1;
}

// Waits until `n` execs listen for a revoke of `name`.
inline bool await_revoke_listeners(const RedisServer& redis, const std::string& name, long long n = 1) {
  return eventually([&] { return revoke_listeners(redis, name) >= n; }, Seconds(10));
}

// A redis-server, a temp dir (given to CMD as $D) and a Reaper for one test.
struct ExecFixture {
  RedisServer redis;
  TempDir dir;
  Reaper reaper;
  Env env() const { return Env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}}; }
  std::string path(const std::string& name) const { return dir.path() + "/" + name; }
  std::string script(const std::string& body) const {
    write_file(path("cmd.sh"), body);
    return path("cmd.sh");
  }
};

}  // namespace redlock::test
