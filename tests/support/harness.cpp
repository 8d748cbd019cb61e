#include "harness.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "exec/wait_status.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/fanout.hpp"

extern char** environ;

namespace redlock::test {
namespace fs = std::filesystem;

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool process_alive(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) {
    return false;
  }
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

bool key_exists(const RedisServer& redis, const std::string& key) {
  return redis.cmd({"EXISTS", key}).integer == 1;
}

long long waiters(const RedisServer& redis, const std::string& name, const std::string& prefix) {
  redis::Reply reply = redis.cmd({"PUBSUB", "NUMSUB", lock_key(name, prefix) + ":released"});
  return reply.elements.size() == 2 ? reply.elements[1].integer : -1;
}

bool await_waiters(const RedisServer& redis, const std::string& name, long long n, Seconds limit,
                   const std::string& prefix) {
  return eventually([&] { return waiters(redis, name, prefix) >= n; }, limit);
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "redlock-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    throw std::runtime_error("mkdtemp failed");
  }
  m_path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

namespace {

// The environment for a child: ours minus REDLOCK_*, plus `env`.
std::vector<std::string> child_env(const Env& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (key.rfind("REDLOCK_", 0) == 0 || env.count(key)) {
      continue;
    }
    out.push_back(kv);
  }
  for (const auto& [k, v] : env) {
    if (!v.empty()) {
      out.push_back(k + "=" + v);
    }
  }
  return out;
}

[[noreturn]] void exec_child(const std::string& program, const std::vector<std::string>& args,
                             const std::vector<std::string>& env) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);
  // Tests may have blocked signals; the child starts clean.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGINT, SIG_DFL);
  signal(SIGQUIT, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  execvpe(program.c_str(), argv.data(), envp.data());
  _exit(127);
}

// waitpid with a limit; kills with SIGKILL when the limit passes. The
// child's peak resident set goes to `peak_rss_kb` if given, the signal
// that ended it (or 0) to `signal`.
int wait_with_limit(pid_t pid, Seconds limit, long* peak_rss_kb = nullptr, int* signal = nullptr) {
  auto end = std::chrono::steady_clock::now() + limit;
  int wstatus = 0;
  struct rusage usage {};
  const auto done = [&] {
    if (peak_rss_kb != nullptr) {
      *peak_rss_kb = usage.ru_maxrss;
    }
    if (signal != nullptr) {
      *signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    }
    return exec::exit_status_of(wstatus);
  };
  while (true) {
    pid_t r = wait4(pid, &wstatus, WNOHANG, &usage);
    if (r == pid) {
      return done();
    }
    if (r < 0 && errno != EINTR) {
      return -1;
    }
    if (std::chrono::steady_clock::now() >= end) {
      ::kill(pid, SIGKILL);
      wait4(pid, &wstatus, 0, &usage);
      return done();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

std::string redlock_binary() {
  if (const char* b = std::getenv("REDLOCK_TEST_BINARY")) {
    return b;
  }
  return REDLOCK_BINARY;
}

std::string redis_server_binary() {
  const char* b = std::getenv("REDLOCK_TEST_REDIS_SERVER");
  return b != nullptr && *b != '\0' ? b : "redis-server";
}

std::vector<std::string> debug_command_options() {
  static const bool since_7 = [] {
    // "Redis server v=7.0.15 sha=..." or "Valkey server v=8.0.1 ...".
    FILE* p = popen((redis_server_binary() + " --version").c_str(), "r");
    std::string out(256, '\0');
    out.resize(p != nullptr ? fread(out.data(), 1, out.size(), p) : 0);
    if (p != nullptr) {
      pclose(p);
    }
    const size_t at = out.find(" v=");
    return at == std::string::npos || std::atoi(out.c_str() + at + 3) >= 7;
  }();
  if (!since_7) {
    return {};
  }
  return {"--enable-debug-command", "yes"};
}

std::string redis_sentinel_binary() {
  const char* b = std::getenv("REDLOCK_TEST_REDIS_SENTINEL");
  return b != nullptr && *b != '\0' ? b : redis_server_binary();
}

RedisServer::RedisServer(Options options) : m_options(std::move(options)) {
  start();
}

RedisServer::~RedisServer() {
  if (m_pid > 0) {
    kill();
  }
}

std::string RedisServer::url() const {
  if (m_options.unix_socket) {
    return "unix://" + m_dir.path() + "/redis.sock";
  }
  return (m_options.tls_cert.empty() ? "redis://127.0.0.1:" : "rediss://127.0.0.1:") + std::to_string(m_port);
}

void RedisServer::start() {
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (m_port == 0 || attempt > 0) {
      m_port = m_options.unix_socket ? 0 : free_port();
    }
    std::vector<std::string> args = {"--port",       std::to_string(m_port),
                                     "--bind",       "127.0.0.1",
                                     "--save",       "",
                                     "--appendonly", "no",
                                     "--dir",        m_dir.path(),
                                     "--logfile",    m_dir.path() + "/redis.log",
                                     "--daemonize",  "no"};
    if (m_options.unix_socket) {
      args.insert(args.end(), {"--unixsocket", m_dir.path() + "/redis.sock", "--unixsocketperm", "700"});
    }
    if (!m_options.requirepass.empty()) {
      args.insert(args.end(), {"--requirepass", m_options.requirepass});
    }
    if (!m_options.tls_cert.empty()) {
      args.insert(args.end(),
                  {"--port", "0", "--tls-port", std::to_string(m_port), "--tls-cert-file", m_options.tls_cert,
                   "--tls-key-file", m_options.tls_key, "--tls-ca-cert-file", m_options.tls_ca, "--tls-auth-clients",
                   m_options.tls_client_cert.empty() ? "no" : "yes"});
    }
    args.insert(args.end(), m_options.extra.begin(), m_options.extra.end());
    const std::string program = redis_server_binary();
    pid_t pid = fork();
    if (pid == 0) {
      int devnull = open("/dev/null", O_RDWR);
      dup2(devnull, 0);
      dup2(devnull, 1);
      exec_child(program, args, child_env({}));
    }
    m_pid = pid;
    bool up = eventually(
        [&] {
          if (!process_alive(m_pid)) {
            return true;
          }
          try {
            return cmd({"PING"}).text() == "PONG" || !m_options.requirepass.empty();
          } catch (...) {
            return false;
          }
        },
        Seconds(10));
    if (up && process_alive(m_pid)) {
      return;
    }
    kill();
  }
  throw std::runtime_error("could not start redis-server");
}

void RedisServer::kill() {
  if (m_pid <= 0) {
    return;
  }
  ::kill(m_pid, SIGKILL);
  ::kill(m_pid, SIGCONT);
  int ws;
  waitpid(m_pid, &ws, 0);
  m_pid = -1;
}

void RedisServer::stop() {
  if (m_pid <= 0) {
    return;
  }
  ::kill(m_pid, SIGCONT);
  ::kill(m_pid, SIGTERM);
  wait_with_limit(m_pid, Seconds(3));
  m_pid = -1;
}

void RedisServer::pause() {
  ::kill(m_pid, SIGSTOP);
}
void RedisServer::resume() {
  ::kill(m_pid, SIGCONT);
}

redis::Reply RedisServer::cmd(const std::vector<std::string>& argv) const {
  redis::Endpoint ep = redis::parse_endpoint(url());
  if (!m_options.requirepass.empty()) {
    ep.password = m_options.requirepass;
  }
  std::shared_ptr<redis::TlsContext> tls;
  if (!m_options.tls_cert.empty()) {
    tls = redis::TlsContext::create(
        redis::TlsOptions{m_options.tls_ca, m_options.tls_client_cert, m_options.tls_client_key, "", false});
  }
  redis::Connection conn(ep, redis::Timeouts{Millis(2000), Millis(5000)}, tls);
  return redis::call(conn, argv);
}

long long RedisServer::calls(const std::string& command) const {
  std::string info = cmd({"INFO", "commandstats"}).str;
  std::string needle = "cmdstat_" + command + ":calls=";
  auto at = info.find(needle);
  if (at == std::string::npos) {
    return 0;
  }
  return std::stoll(info.substr(at + needle.size()));
}

long long RedisServer::time_us() const {
  redis::Reply r = cmd({"TIME"});
  return std::stoll(r.elements.at(0).str) * 1'000'000 + std::stoll(r.elements.at(1).str);
}

long long RedisServer::commands_run() const {
  std::istringstream in(cmd({"INFO", "commandstats"}).str);
  long long total = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cmdstat_", 0) != 0 || line.rfind("cmdstat_info:", 0) == 0) {
      continue;
    }
    auto at = line.find(":calls=");
    if (at != std::string::npos) {
      total += std::stoll(line.substr(at + 7));
    }
  }
  return total;
}

Result run(const std::vector<std::string>& args, const Env& env, Seconds limit) {
  Child child(args, env);
  return child.wait(limit);
}

Child::Child(const std::vector<std::string>& args, const Env& env, std::optional<std::string> program) {
  std::string out = m_dir.path() + "/out";
  std::string err = m_dir.path() + "/err";
  m_start = std::chrono::steady_clock::now();
  auto e = child_env(env);
  m_pid = fork();
  if (m_pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int r = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(o, 1);
    dup2(r, 2);
    // Only 0, 1 and 2 reach the program.
    for (int fd = 3; fd < 1024; ++fd) {
      close(fd);
    }
    exec_child(program.value_or(redlock_binary()), args, e);
  }
}

Child::~Child() {
  if (!m_result && m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    int ws;
    waitpid(m_pid, &ws, 0);
  }
}

void Child::signal(int sig) const {
  ::kill(m_pid, sig);
}

bool Child::alive() {
  if (m_result) {
    return false;
  }
  int ws;
  struct rusage usage {};
  pid_t r = wait4(m_pid, &ws, WNOHANG, &usage);
  if (r == m_pid) {
    m_result = Result{exec::exit_status_of(ws),
                      read_file(m_dir.path() + "/out"),
                      read_file(m_dir.path() + "/err"),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(),
                      usage.ru_maxrss,
                      WIFSIGNALED(ws) ? WTERMSIG(ws) : 0};
    return false;
  }
  return true;
}

Result Child::wait(Seconds limit) {
  if (!m_result) {
    long peak_rss_kb = 0;
    int signal = 0;
    int status = wait_with_limit(m_pid, limit, &peak_rss_kb, &signal);
    m_result = Result{status,
                      read_file(m_dir.path() + "/out"),
                      read_file(m_dir.path() + "/err"),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(),
                      peak_rss_kb,
                      signal};
  }
  return *m_result;
}

std::string Child::err_so_far() const {
  return read_file(m_dir.path() + "/err");
}
std::string Child::out_so_far() const {
  return read_file(m_dir.path() + "/out");
}

std::unique_ptr<Child> with_gone_reader(const std::vector<std::string>& args, const Env& env, const TempDir& dir,
                                        bool sigpipe_ignored) {
  // The reader closes its end, then says so; only then does redlock start.
  const std::string script = std::string(sigpipe_ignored ? "trap '' PIPE; " : "") +
                             "d=$1; shift; "
                             "( while [ ! -e \"$d/gone\" ]; do sleep 0.01; done; \"$RL\" \"$@\"; echo \"rc=$?\" >&2 ) "
                             "| { exec 0<&-; : >\"$d/gone\"; }";
  std::vector<std::string> sh{"-c", script, "sh", dir.path()};
  sh.insert(sh.end(), args.begin(), args.end());
  Env with = env;
  with["RL"] = redlock_binary();
  return std::make_unique<Child>(sh, with, "/bin/sh");
}

}  // namespace redlock::test
