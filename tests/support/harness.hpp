#pragma once

// Test support: our own redis-servers and the built redlock binary, driven
// as real processes. Servers bind 127.0.0.1 (or a Unix socket in a temp dir)
// and are stopped by the PID we started; nothing here touches port 6379.

#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lock/keys.hpp"
#include "redis/reply.hpp"

namespace redlock::test {

using Seconds = std::chrono::duration<double>;

// A private temporary directory, removed with its contents at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

class RedisServer {
 public:
  struct Options {
    std::string requirepass{};         // --requirepass
    bool unix_socket = false;          // listen on a socket in a temp dir instead of TCP
    std::vector<std::string> extra{};  // more redis-server arguments
    // TLS only (rediss://): PEM files for the server and the CA that signed
    // it; with `tls_client_cert`/`tls_client_key` the server demands client
    // certificates and cmd() presents these.
    std::string tls_cert{}, tls_key{}, tls_ca{}, tls_client_cert{}, tls_client_key{};
  };
  RedisServer() : RedisServer(Options{}) {}
  explicit RedisServer(Options options);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] pid_t pid() const { return m_pid; }
  // redis://127.0.0.1:PORT, rediss://… or unix:///…/redis.sock (never with the password)
  [[nodiscard]] std::string url() const;

  void stop();    // SIGTERM (SIGKILL after 3 s), wait for it
  void kill();    // SIGKILL at once, wait for it
  void start();   // (re)start on the same port, empty
  void pause();   // SIGSTOP
  void resume();  // SIGCONT
  [[nodiscard]] bool running() const { return m_pid > 0; }

  // One command over a fresh connection (with the password), for
  // assertions. Throws on connection failure.
  redis::Reply cmd(const std::vector<std::string>& argv) const;
  // INFO commandstats calls for one command (e.g. "evalsha"), 0 if never.
  [[nodiscard]] long long calls(const std::string& command) const;
  // Every command the server has run so far (INFO commandstats), except the
  // INFO commands that ask.
  [[nodiscard]] long long commands_run() const;
  // The server's clock (TIME) in microseconds: fences are never below it.
  [[nodiscard]] long long time_us() const;

 private:
  Options m_options;
  TempDir m_dir;
  int m_port = 0;
  pid_t m_pid = -1;
};

struct Result {
  int status = -1;  // exit status, or 128+N when killed by signal N
  std::string out;
  std::string err;
  double seconds = 0;
  long peak_rss_kb = 0;  // the process's peak resident set (ru_maxrss), in KiB
  int signal = 0;        // N when signal N ended it (status is then 128+N), else 0
};

using Env = std::map<std::string, std::string>;

// The redlock binary under test.
[[nodiscard]] std::string redlock_binary();

// The server every test starts: $REDLOCK_TEST_REDIS_SERVER (a path, or a
// name looked up in PATH: scripts/compat points it at each server it
// built), else redis-server.
[[nodiscard]] std::string redis_server_binary();
// The options that let a test server run DEBUG (Redis 7.0 disables it by
// default; before 7.0 it is on and the option does not exist).
[[nodiscard]] std::vector<std::string> debug_command_options();
// The program a Sentinel test starts with --sentinel:
// $REDLOCK_TEST_REDIS_SENTINEL, else the server's (redis-server and
// valkey-server both run as a sentinel with --sentinel).
[[nodiscard]] std::string redis_sentinel_binary();

// Runs redlock with `args` (the binary is prepended) and `env` added to
// (an empty value removes a variable from) the environment; REDLOCK_*
// variables of the test's own environment are never passed on. Kills it
// after `limit`.
Result run(const std::vector<std::string>& args, const Env& env = {}, Seconds limit = Seconds(60));

// A redlock (or any program, if `program` is set) running in the
// background, with stdout/stderr captured to files.
class Child {
 public:
  Child(const std::vector<std::string>& args, const Env& env = {}, std::optional<std::string> program = {});
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  [[nodiscard]] pid_t pid() const { return m_pid; }
  void signal(int sig) const;
  // Waits for exit (killing after `limit`): status, output, and seconds since start.
  Result wait(Seconds limit = Seconds(60));
  // True while the process has not exited (not waited for).
  [[nodiscard]] bool alive();
  // Current stderr contents so far.
  [[nodiscard]] std::string err_so_far() const;
  [[nodiscard]] std::string out_so_far() const;

 private:
  TempDir m_dir;
  pid_t m_pid = -1;
  std::optional<Result> m_result;
  std::chrono::steady_clock::time_point m_start;
};

// Runs redlock `args` (through /bin/sh) with its standard output a pipe
// whose reader has gone before redlock starts, as `redlock ... | head -1`
// once head has its line: the first write meets a closed pipe. Its stderr
// is redlock's, then "rc=N" (N: redlock's status, 141 for SIGPIPE). With
// `sigpipe_ignored`, redlock starts with SIGPIPE ignored. `dir` holds the
// file that tells the reader is gone.
[[nodiscard]] std::unique_ptr<Child> with_gone_reader(const std::vector<std::string>& args, const Env& env,
                                                      const TempDir& dir, bool sigpipe_ignored = false);

// Polls `pred` every 10 ms until it is true or `limit` passes; returns its last value.
template <typename Pred>
bool eventually(Pred pred, Seconds limit = Seconds(5)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (true) {
    if (pred()) {
      return true;
    }
    if (std::chrono::steady_clock::now() >= end) {
      return false;
    }
    struct timespec ts {
      0, 10'000'000
    };
    nanosleep(&ts, nullptr);
  }
}

// The one fixed pause the tests take, for the few places where there is no
// event to wait for (letting a process settle into a sleep, a renewal
// period passing). Anything observable is awaited with eventually().
inline void sleep_for(double seconds) {
  struct timespec ts {
    static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<double>(static_cast<time_t>(seconds))) * 1e9)
  };
  nanosleep(&ts, nullptr);
}

// The key of lock `name` (redlock-safety(7), KEYS): the only place the tests
// spell it.
inline std::string lock_key(const std::string& name, const std::string& prefix = "redlock:") {
  return lock::lock_key(prefix, name);
}

// True if `key` exists on `redis`.
[[nodiscard]] bool key_exists(const RedisServer& redis, const std::string& key);

// How many clients wait for lock `name` on `redis`: the subscribers of its
// release channel (-1 if the server did not answer).
[[nodiscard]] long long waiters(const RedisServer& redis, const std::string& name,
                                const std::string& prefix = "redlock:");

// Waits until at least `n` clients wait for lock `name` on `redis`; false
// after `limit`. This is how a test knows a waiter is in place, never by a
// fixed sleep.
[[nodiscard]] bool await_waiters(const RedisServer& redis, const std::string& name, long long n = 1,
                                 Seconds limit = Seconds(5), const std::string& prefix = "redlock:");

// A loopback port that nothing listened on a moment ago.
[[nodiscard]] int free_port();

// Seconds since an arbitrary origin, on the monotonic clock.
[[nodiscard]] double now_seconds();

// True if process `pid` exists and is not a zombie.
[[nodiscard]] bool process_alive(pid_t pid);

// Reads a whole file ("" if missing).
[[nodiscard]] std::string read_file(const std::string& path);

}  // namespace redlock::test
