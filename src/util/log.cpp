#include "util/log.hpp"

#include <fcntl.h>
#include <signal.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
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
}

void write_stderr(std::string_view text) noexcept {
  while (!text.empty()) {
    ssize_t n = write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;
    }
    text.remove_prefix(static_cast<size_t>(n));
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

void emit(std::string_view shown, LogLevel level, std::optional<int> exit) {
  write_stderr(as_written(shown, level, exit));
  if (g_sinks.syslog) {
    // The priority goes with each line; the facility was given to openlog().
    syslog(priority_of(level), "%.*s", static_cast<int>(shown.size()), shown.data());
  }
}

}  // namespace

void set_log_sinks(const LogSinks& sinks) noexcept {
  g_sinks = sinks;
  if (sinks.syslog) {
    openlog("redlock", LOG_PID, sinks.facility);
  }
}

const LogSinks& log_sinks() noexcept {
  return g_sinks;
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
