#include "util/log.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <string>
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

void write_line(std::string_view text) noexcept {
  try {
    write_stderr("redlock: " + one_line(text) + "\n");
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
