#pragma once

// Helpers shared by the exec tests: CMD is usually a small sh script that
// reports what it saw through files in a temp dir ($D in its environment),
// so that redlock's own stdout stays observable.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace redlock::test {

inline std::string lock_key(const std::string& name, const std::string& prefix = "redlock:") {
  return prefix + "{" + name + "}";
}

inline bool key_exists(const RedisServer& redis, const std::string& key) {
  return redis.cmd({"EXISTS", key}).integer == 1;
}

inline void write_file(const std::string& path, const std::string& content, mode_t mode = 0644) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
  chmod(path.c_str(), mode);
}

inline bool file_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

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

}  // namespace redlock::test
