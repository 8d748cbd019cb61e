#include "exec/keeper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "util/exit_status.hpp"
#include "util/fd.hpp"

namespace redlock::exec {

namespace {

// Writes all of `text` to `fd`; false when it cannot.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// In the keeper: nothing of the caller's is kept open. 0, 1 and 2 become
// /dev/null; every other descriptor but `keep` is closed.
void drop_descriptors(int keep) {
  const int null = open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) {
    if (null >= 0 && null != fd) {
      (void)dup2(null, fd);
    }
  }
  const int first = std::max(3, keep + 1);
  if (keep >= 3) {
    (void)close_range(3, static_cast<unsigned>(keep - 1), 0);
  }
  (void)close_range(static_cast<unsigned>(first), ~0U, 0);
}

// Whether `pid` is a process still running (a zombie has ended).
bool running(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) {
    return false;
  }
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

// A descriptor that becomes readable when `pid` exits, or an invalid one
// when the kernel has none to give (then the loop looks every 100 ms).
Fd watch_fd(pid_t pid) {
  // By its number: glibc 2.36's <sys/pidfd.h> declares it without C linkage.
  return Fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
}

// FNV-1a, 64 bits: a stable name for a token that does not reveal it.
std::string token_hash(const std::string& token) {
  uint64_t h = 14695981039346656037ULL;
  for (const unsigned char c : token) {
    h = (h ^ c) * 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

// The user's own directory of keeper files, made if need be; nullopt
// when there is none that is safely the user's.
std::optional<std::string> keeper_dir(bool make) {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string dir = runtime != nullptr && runtime[0] == '/' ? std::string(runtime) + "/redlock"
                                                                  : fmt::format("/tmp/redlock-{}", getuid());
  if (make && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::nullopt;
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022) != 0) {
    return std::nullopt;
  }
  return dir;
}

std::string keeper_file(const std::string& dir, const std::string& token, pid_t keeper) {
  return fmt::format("{}/keeper-{}-{}", dir, token_hash(token), keeper);
}

// Whether `pid` is a keeper (and not a process that got its pid since).
bool is_keeper(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cmdline.find(std::string("\0--while-pid", 12)) != std::string::npos;
}

// What a signal the keeper was sent asks of it (none: it was taken already).
std::optional<KeptEnd> signalled(SignalFd& signals) {
  const int sig = signals.take();
  if (sig == 0) {
    return std::nullopt;
  }
  return sig == SIGUSR1 ? KeptEnd::k_handed_over : KeptEnd::k_stopped;
}

}  // namespace

pid_t start_keeper(const std::function<int()>& body) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    throw Error(ExitStatus::k_unavailable, fmt::format("cannot start the keeper: {}", std::strerror(errno)));
  }
  const Fd read_end(report[0]);
  Fd write_end(report[1]);
  std::fflush(nullptr);
  const pid_t first = fork();
  if (first < 0) {
    throw Error(ExitStatus::k_unavailable, fmt::format("cannot start the keeper: {}", std::strerror(errno)));
  }
  if (first == 0) {
    // A session of its own, then a child of that session's leader, which
    // exits: the keeper is nobody's child but init's (or a subreaper's),
    // and can never take a terminal.
    (void)setsid();
    const pid_t keeper = fork();
    if (keeper != 0) {
      (void)write_all(write_end.get(), std::string_view(reinterpret_cast<const char*>(&keeper), sizeof(keeper)));
      _exit(keeper > 0 ? 0 : 1);
    }
    drop_descriptors(-1);
    (void)!chdir("/");
    _exit(body());
  }
  write_end.reset();
  pid_t keeper = -1;
  ssize_t got = 0;
  do {
    got = read(read_end.get(), &keeper, sizeof(keeper));
  } while (got < 0 && errno == EINTR);
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof(keeper)) || keeper <= 0) {
    throw Error(ExitStatus::k_unavailable, "cannot start the keeper: fork failed");
  }
  return keeper;
}

KeptEnd keep_while(pid_t watched, const Renewer& renewer, SignalFd& signals) {
  const Fd exited = watch_fd(watched);
  if (!exited.valid() && !running(watched)) {
    return KeptEnd::k_watched_gone;
  }
  while (true) {
    const TimePoint now = Clock::now();
    const TimePoint until = renewer.validity_end();
    if (now >= until) {
      return KeptEnd::k_lost;  // renewals were not confirmed in time
    }
    long long wait_ms = std::chrono::duration_cast<Millis>(until - now).count() + 1;
    if (!exited.valid()) {
      wait_ms = std::min<long long>(wait_ms, 100);
    }
    pollfd fds[3] = {{signals.fd(), POLLIN, 0}, {renewer.lost_fd(), POLLIN, 0}, {exited.get(), POLLIN, 0}};
    const int n = poll(fds, exited.valid() ? 3 : 2, static_cast<int>(std::min<long long>(wait_ms, 60'000)));
    if (n < 0 && errno != EINTR) {
      return KeptEnd::k_stopped;
    }
    if (const std::optional<KeptEnd> end = (fds[0].revents & POLLIN) != 0 ? signalled(signals) : std::nullopt) {
      return *end;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      return KeptEnd::k_lost;
    }
    if (exited.valid() ? (fds[2].revents & (POLLIN | POLLHUP)) != 0 : !running(watched)) {
      return KeptEnd::k_watched_gone;
    }
  }
}

void tell_lost(pid_t watched, const std::string& line) {
  const Fd err(open(fmt::format("/proc/{}/fd/2", watched).c_str(), O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK));
  if (err.valid()) {
    (void)write_all(err.get(), line);
  }
  (void)kill(getpgid(watched) == watched ? -watched : watched, SIGTERM);
}

void note_keeper(const std::string& token, pid_t keeper) {
  const std::optional<std::string> dir = keeper_dir(true);
  const std::string path = dir ? keeper_file(*dir, token, keeper) : std::string();
  const Fd fd(dir ? open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600) : -1);
  if (!fd.valid()) {
    throw Error(ExitStatus::k_unavailable,
                fmt::format("cannot note the keeper for release to find ({}): {}",
                            dir ? path : fmt::format("no private directory at $XDG_RUNTIME_DIR or /tmp"),
                            dir ? std::strerror(errno) : "set XDG_RUNTIME_DIR"));
  }
}

void forget_keeper(const std::string& token, pid_t keeper) {
  if (const std::optional<std::string> dir = keeper_dir(false)) {
    (void)unlink(keeper_file(*dir, token, keeper).c_str());
  }
}

int stop_keepers(const std::string& token) {
  const std::optional<std::string> dir = keeper_dir(false);
  if (!dir) {
    return 0;
  }
  DIR* d = opendir(dir->c_str());
  if (d == nullptr) {
    return 0;
  }
  const std::string prefix = fmt::format("keeper-{}-", token_hash(token));
  std::vector<pid_t> keepers;
  while (const dirent* e = readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.starts_with(prefix)) {
      keepers.push_back(static_cast<pid_t>(std::atoll(e->d_name + prefix.size())));
    }
  }
  closedir(d);
  int ended = 0;
  for (const pid_t keeper : keepers) {
    if (keeper > 0 && running(keeper) && is_keeper(keeper)) {
      const Fd gone = watch_fd(keeper);
      if (kill(keeper, SIGUSR1) == 0) {
        ++ended;
        const TimePoint end = Clock::now() + Millis(2000);
        while (running(keeper) && Clock::now() < end) {
          pollfd p{gone.get(), POLLIN, 0};
          (void)poll(&p, gone.valid() ? 1 : 0, 20);
        }
      }
    }
    forget_keeper(token, keeper);
  }
  return ended;
}

}  // namespace redlock::exec
