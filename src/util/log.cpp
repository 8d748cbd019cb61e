#include "util/log.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "util/text.hpp"

namespace redlock {

Verbosity& verbosity() {
  static Verbosity v = Verbosity::k_normal;
  return v;
}

namespace {

bool g_sigpipe_ignored_at_start = false;

// How stderr is written without waiting: what it is decides how, found
// once (a stalled reader must cost lines, never redlock's own progress).
enum class StderrKind : int {
  k_unknown,   // not looked at yet
  k_socket,    // a journald stream, a socketpair: send() with MSG_DONTWAIT
  k_pipe,      // a pipe or FIFO: pwritev2() with RWF_NOWAIT
  k_terminal,  // written through a non-blocking description of its own
  k_plain,     // a file, /dev/null: write() never waits for a reader
};
std::atomic<StderrKind> g_stderr_kind{StderrKind::k_unknown};
// The terminal of stderr opened anew with O_NONBLOCK, or -1: O_NONBLOCK on
// descriptor 2 itself would be set for CMD and the shell too.
std::atomic<int> g_terminal_fd{-1};

// Lines that stderr or syslog could not take at once, not said yet.
std::atomic<unsigned long> g_dropped_stderr{0};
std::atomic<unsigned long> g_dropped_syslog{0};

StderrKind stderr_kind_now() noexcept {
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) {
    return StderrKind::k_plain;
  }
  if (S_ISSOCK(st.st_mode)) {
    return StderrKind::k_socket;
  }
  if (S_ISFIFO(st.st_mode)) {
    return StderrKind::k_pipe;
  }
  if (S_ISCHR(st.st_mode) && isatty(STDERR_FILENO) == 1) {
    return StderrKind::k_terminal;
  }
  return StderrKind::k_plain;
}

StderrKind stderr_kind() noexcept {
  StderrKind kind = g_stderr_kind.load(std::memory_order_acquire);
  if (kind == StderrKind::k_unknown) {  // protect_standard_streams() was not run (a unit test)
    kind = stderr_kind_now();
    g_stderr_kind.store(kind, std::memory_order_release);
  }
  return kind;
}

// One write of `text` to stderr that does not wait: the bytes taken, or -1
// (errno EAGAIN when a reader has stopped reading). Async-signal-safe.
ssize_t write_without_waiting(std::string_view text) noexcept {
  switch (stderr_kind()) {
    case StderrKind::k_socket:
      return send(STDERR_FILENO, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    case StderrKind::k_pipe: {
      iovec iov{const_cast<char*>(text.data()), text.size()};
      const ssize_t n = pwritev2(STDERR_FILENO, &iov, 1, -1, RWF_NOWAIT);
      if (n >= 0 || errno != EOPNOTSUPP) {
        return n;
      }
      // A kernel without RWF_NOWAIT for pipes: a line of up to PIPE_BUF
      // bytes fits whole where poll() finds room.
      pollfd p{STDERR_FILENO, POLLOUT, 0};
      if (poll(&p, 1, 0) != 1 || (p.revents & POLLOUT) == 0) {
        errno = EAGAIN;
        return -1;
      }
      return write(STDERR_FILENO, text.data(), std::min(text.size(), size_t{PIPE_BUF}));
    }
    case StderrKind::k_terminal: {
      const int fd = g_terminal_fd.load(std::memory_order_relaxed);
      if (fd >= 0) {
        return write(fd, text.data(), text.size());
      }
      pollfd p{STDERR_FILENO, POLLOUT, 0};
      if (poll(&p, 1, 0) != 1 || (p.revents & POLLOUT) == 0) {
        errno = EAGAIN;
        return -1;
      }
      return write(STDERR_FILENO, text.data(), text.size());
    }
    case StderrKind::k_unknown:
    case StderrKind::k_plain:
      break;
  }
  return write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace

bool sigpipe_ignored_at_start() noexcept {
  return g_sigpipe_ignored_at_start;
}

void protect_standard_streams() noexcept {
  g_sigpipe_ignored_at_start = signal(SIGPIPE, SIG_IGN) == SIG_IGN;
  for (int fd = 0; fd < 3; ++fd) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      // Not O_CLOEXEC: CMD inherits the same "closed" stream.
      int held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
      if (held >= 0 && held != fd) {
        dup2(held, fd);
        close(held);
      }
    }
  }
  const StderrKind kind = stderr_kind_now();
  if (kind == StderrKind::k_terminal) {
    // Where this cannot be opened, poll() says whether there is room.
    g_terminal_fd.store(open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC),
                        std::memory_order_relaxed);
  }
  g_stderr_kind.store(kind, std::memory_order_release);
}

bool write_stderr_at_once(std::string_view text) noexcept {
  const bool line = !text.empty() && text.back() == '\n';
  const size_t size = text.size();
  while (!text.empty()) {
    const ssize_t n = write_without_waiting(text);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int err = n < 0 ? errno : EAGAIN;
      // A line cut short still ends, so that the next one starts a line.
      if (line && text.size() < size) {
        (void)write_without_waiting("\n");
      }
      errno = err;
      return false;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void write_stderr(std::string_view text) noexcept {
  if (!write_stderr_at_once(text) && errno == EAGAIN) {
    g_dropped_stderr.fetch_add(1, std::memory_order_relaxed);
  }
}

namespace {

std::mutex g_secrets_mutex;
std::vector<std::string> g_secrets;  // longest first

}  // namespace

void keep_secret(std::string_view secret) noexcept {
  if (secret.empty()) {
    return;
  }
  try {
    std::lock_guard<std::mutex> guard(g_secrets_mutex);
    for (const auto& s : g_secrets) {
      if (s == secret) {
        return;
      }
    }
    g_secrets.emplace_back(secret);
    std::stable_sort(g_secrets.begin(), g_secrets.end(),
                     [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  } catch (...) {
  }
}

namespace {

std::string masked(std::string_view text, size_t shortest) {
  std::string out(text);
  std::lock_guard<std::mutex> guard(g_secrets_mutex);
  for (const auto& secret : g_secrets) {
    if (secret.size() < shortest) {
      continue;
    }
    for (size_t at = out.find(secret); at != std::string::npos; at = out.find(secret, at)) {
      out.replace(at, secret.size(), k_redacted);
      at += std::string_view(k_redacted).size();
    }
  }
  return out;
}

}  // namespace

std::string mask_secrets(std::string_view server_text) {
  return masked(server_text, 1);
}

std::string one_line(std::string_view text) {
  // A short password ("1", "redis") would also be found in hosts, ports and
  // words of redlock's own: those are masked where a server's words enter a
  // message (mask_secrets()); this catches longer ones anywhere.
  return escape_controls(masked(text, k_masked_anywhere));
}

namespace {

LogSinks g_sinks;
std::mutex g_fields_mutex;
// JSON members ("\"key\":value") every JSON line carries, in the order set.
std::vector<std::pair<std::string, std::string>> g_fields;

// `text` as a JSON string, quotes included. Bytes that are not UTF-8 were
// escaped by one_line() already; control characters are escaped here.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::k_error:
      return "error";
    case LogLevel::k_warning:
      return "warning";
    case LogLevel::k_notice:
      return "notice";
    case LogLevel::k_debug:
      return "debug";
  }
  return "warning";
}

int priority_of(LogLevel level) {
  switch (level) {
    case LogLevel::k_error:
      return LOG_ERR;
    case LogLevel::k_warning:
      return LOG_WARNING;
    case LogLevel::k_notice:
      return LOG_NOTICE;
    case LogLevel::k_debug:
      return LOG_DEBUG;
  }
  return LOG_WARNING;
}

// The time now, as 2026-12-02T13:45:01.123Z.
std::string utc_now() {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32] = {};
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms % 1000);
}

// The JSON object of one line: time, level, message, then the fields
// known (host and pid always, name and fence where set), then `exit`.
std::string json_line(std::string_view shown, LogLevel level, std::optional<int> exit) {
  static const std::string host = [] {
    char name[256] = {};
    return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string();
  }();
  std::string out = fmt::format("{{\"time\":\"{}\",\"level\":\"{}\",\"message\":{},\"host\":{},\"pid\":{}", utc_now(),
                                level_name(level), json_string(shown), json_string(host), getpid());
  {
    std::lock_guard<std::mutex> guard(g_fields_mutex);
    for (const auto& [key, value] : g_fields) {
      if (!(exit && key == "exit")) {
        out += fmt::format(",{}:{}", json_string(key), value);
      }
    }
  }
  if (exit) {
    out += fmt::format(",\"exit\":{}", *exit);
  }
  return out + "}\n";
}

std::string as_written(std::string_view shown, LogLevel level, std::optional<int> exit) {
  if (g_sinks.format == LogFormat::k_json) {
    return json_line(shown, level, exit);
  }
  return "redlock: " + std::string(shown) + "\n";
}

// /dev/log, written as syslog(3) writes it but never waiting: a daemon
// that stopped reading (its queue full) costs the lines it does not take,
// counted, never the command's progress. One datagram a line; connected
// at the first line, and again once when the daemon went away.
class SyslogSocket {
 public:
  enum class Sent { k_sent, k_full, k_failed };

  Sent send(std::string_view datagram) {
    std::lock_guard<std::mutex> guard(m_mutex);
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (m_fd < 0 && !connect_now()) {
        return Sent::k_failed;  // no daemon: as with syslog(3), the line is lost
      }
      ssize_t n = 0;
      do {
        n = ::send(m_fd, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      if (n >= 0) {
        return Sent::k_sent;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
        return Sent::k_full;
      }
      // Refused or reset: a daemon restarted makes its socket anew.
      close(m_fd);
      m_fd = -1;
    }
    return Sent::k_failed;
  }

 private:
  bool connect_now() {
    m_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0) {
      return false;
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", k_path);
    if (connect(m_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(m_fd);
      m_fd = -1;
      return false;
    }
    return true;
  }

  static constexpr const char* k_path = "/dev/log";
  std::mutex m_mutex;
  int m_fd = -1;
};

SyslogSocket g_syslog;

// A line as syslog(3) sends it with LOG_PID: "<PRI>Mmm dd hh:mm:ss
// redlock[PID]: message", the time local, the month in English.
std::string syslog_datagram(std::string_view shown, LogLevel level) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  static constexpr const char* k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return fmt::format("<{}>{} {:2} {:02}:{:02}:{:02} redlock[{}]: {}", g_sinks.facility | priority_of(level),
                     k_months[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, getpid(), shown);
}

std::string dropped_words(unsigned long n, std::string_view where) {
  return fmt::format("{} line{} could not be {} at once and {} dropped", n, n == 1 ? "" : "s", where,
                     n == 1 ? "was" : "were");
}

// Sends a line to syslog; a line the daemon does not take is counted, and
// the count said on the next line it takes.
void to_syslog(std::string_view shown, LogLevel level) {
  switch (g_syslog.send(syslog_datagram(shown, level))) {
    case SyslogSocket::Sent::k_sent:
      break;
    case SyslogSocket::Sent::k_full:
      g_dropped_syslog.fetch_add(1, std::memory_order_relaxed);
      return;
    case SyslogSocket::Sent::k_failed:
      return;
  }
  if (const unsigned long n = g_dropped_syslog.exchange(0); n > 0) {
    const std::string notice = dropped_words(n, "sent to syslog") + " before this one";
    if (g_syslog.send(syslog_datagram(notice, LogLevel::k_warning)) == SyslogSocket::Sent::k_full) {
      g_dropped_syslog.fetch_add(n, std::memory_order_relaxed);  // still to be said
    }
  }
}

// Writes a line to stderr; one that stderr does not take is counted, and
// the count said after the next line it takes.
void to_stderr(const std::string& written) {
  if (!write_stderr_at_once(written)) {
    if (errno == EAGAIN) {
      g_dropped_stderr.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  if (const unsigned long n = g_dropped_stderr.exchange(0); n > 0) {
    const std::string notice = dropped_words(n, "written to stderr") + " before the one above";
    if (!write_stderr_at_once(as_written(notice, LogLevel::k_warning, std::nullopt))) {
      g_dropped_stderr.fetch_add(n, std::memory_order_relaxed);
    }
  }
}

void emit(std::string_view shown, LogLevel level, std::optional<int> exit) {
  to_stderr(as_written(shown, level, exit));
  if (g_sinks.syslog) {
    to_syslog(shown, level);
  }
}

}  // namespace

void set_log_sinks(const LogSinks& sinks) noexcept {
  g_sinks = sinks;
}

const LogSinks& log_sinks() noexcept {
  return g_sinks;
}

void say_dropped_lines() noexcept {
  try {
    if (verbosity() < Verbosity::k_quiet) {
      return;
    }
    // syslog's count goes to stderr; stderr's to syslog, and to stderr
    // once more (a reader may have come back).
    if (const unsigned long n = g_dropped_syslog.exchange(0); n > 0) {
      to_stderr(as_written(dropped_words(n, "sent to syslog"), LogLevel::k_warning, std::nullopt));
    }
    if (const unsigned long n = g_dropped_stderr.exchange(0); n > 0) {
      const std::string words = dropped_words(n, "written to stderr");
      if (g_sinks.syslog) {
        (void)g_syslog.send(syslog_datagram(words, LogLevel::k_warning));
      }
      (void)write_stderr_at_once(as_written(words, LogLevel::k_warning, std::nullopt));
    }
  } catch (...) {
  }
}

std::optional<int> syslog_facility_named(std::string_view name) {
  static constexpr std::pair<std::string_view, int> k_facilities[] = {
      {"user", LOG_USER},         {"daemon", LOG_DAEMON}, {"cron", LOG_CRON},     {"auth", LOG_AUTH},
      {"authpriv", LOG_AUTHPRIV}, {"syslog", LOG_SYSLOG}, {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1},
      {"local2", LOG_LOCAL2},     {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4}, {"local5", LOG_LOCAL5},
      {"local6", LOG_LOCAL6},     {"local7", LOG_LOCAL7}};
  for (const auto& [n, f] : k_facilities) {
    if (n == name) {
      return f;
    }
  }
  return std::nullopt;
}

void set_log_field(const std::string& key, const std::string& value, bool number) noexcept {
  try {
    std::string shown = number ? value : json_string(one_line(value));
    std::lock_guard<std::mutex> guard(g_fields_mutex);
    for (auto& [k, v] : g_fields) {
      if (k == key) {
        v = std::move(shown);
        return;
      }
    }
    g_fields.emplace_back(key, std::move(shown));
  } catch (...) {
  }
}

void set_exit_field(int status) noexcept {
  set_log_field("exit", fmt::format("{}", status), true);
}

std::string line_as_written(std::string_view text, LogLevel level, std::optional<int> exit) {
  return as_written(one_line(text), level, exit);
}

void write_shown_line(std::string_view shown, LogLevel level) noexcept {
  try {
    emit(shown, level, std::nullopt);
  } catch (...) {
  }
}

void write_line(std::string_view text, LogLevel level) noexcept {
  try {
    emit(one_line(text), level, std::nullopt);
  } catch (...) {
  }
}

void write_exit_line(std::string_view text, int status, LogLevel level) noexcept {
  try {
    emit(one_line(text), level, status);
  } catch (...) {
  }
}

namespace {

std::mutex g_held_mutex;
std::vector<std::string> g_held;  // lines, without "redlock: " and '\n'

std::vector<std::string> take_held() noexcept {
  std::vector<std::string> out;
  try {
    std::lock_guard<std::mutex> guard(g_held_mutex);
    out.swap(g_held);
  } catch (...) {
  }
  return out;
}

}  // namespace

void hold_warning(std::string line) noexcept {
  try {
    std::lock_guard<std::mutex> guard(g_held_mutex);
    g_held.push_back(std::move(line));
  } catch (...) {
  }
}

void say_held_warnings() noexcept {
  const std::vector<std::string> held = take_held();
  if (verbosity() >= Verbosity::k_quiet) {  // -qq prints nothing at all
    for (const auto& line : held) {
      write_line(line);
    }
  }
}

void drop_held_warnings() noexcept {
  const std::vector<std::string> held = take_held();
  if (verbosity() >= Verbosity::k_verbose) {
    for (const auto& line : held) {
      write_line(line);
    }
  }
}

bool write_stdout(std::string_view text) noexcept {
  bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  ok = std::fflush(stdout) == 0 && ok;
  return ok && !std::ferror(stdout);
}

}  // namespace redlock
