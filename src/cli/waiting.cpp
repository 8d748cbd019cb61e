#include "cli/waiting.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

HolderInfo holder_of(const lock::Busy& busy) {
  HolderInfo h{busy.host, busy.pid, busy.cmd, busy.ttl_left, 0, busy.kept};
  if (busy.holders > 1) {
    h.others = static_cast<size_t>(busy.holders - 1);
  }
  return h;
}

std::string describe(const HolderInfo& h) {
  if (h.host.empty()) {
    return "";
  }
  std::string cmd = h.cmd;
  if (cmd.size() > 60) {
    cmd = truncate_utf8(cmd, 57) + "...";  // the whole line is in `redlock status`
  }
  std::string out = fmt::format("{} pid {}", escape_for_terminal(h.host), escape_for_terminal(h.pid));
  if (!cmd.empty()) {
    out += fmt::format(" ({})", escape_for_terminal(cmd));
  }
  if (h.others > 0) {
    out += fmt::format(" and {} other{}", h.others, h.others == 1 ? "" : "s");
  }
  return out;
}

namespace {

constexpr std::chrono::seconds k_tty_period{1};
constexpr std::chrono::seconds k_log_period{60};

// Whole seconds: a live line that changes every second reads best without tenths.
std::string seconds(Millis d) {
  return format_duration(std::chrono::duration_cast<std::chrono::seconds>(d));
}

}  // namespace

WaitReport::WaitReport(std::string name, std::optional<Millis> wait, HolderInfo holder)
    : m_name(std::move(name)),
      m_wait(wait),
      m_holder(std::move(holder)),
      m_start(std::chrono::steady_clock::now()),
      m_tty(isatty(STDERR_FILENO) == 1) {
  const std::string who = describe(m_holder);
  std::string lease;
  if (m_holder.kept) {
    lease =
        fmt::format(" for {} more (it finished; --hold-at-least keeps the lock)", format_duration(m_holder.ttl_left));
  } else if (m_holder.ttl_left > Millis(0)) {
    lease = fmt::format(" for at most {} more unless renewed", format_duration(m_holder.ttl_left));
  }
  log_notice("{} is held{}{}; waiting {}", escape_for_terminal(m_name), who.empty() ? "" : " by " + who, lease,
             m_wait ? "up to " + format_duration(*m_wait) : std::string("for as long as it takes (--wait inf)"));
  if (verbosity() >= Verbosity::k_normal) {
    m_next = m_start + period();
  }
}

std::string WaitReport::progress(Millis elapsed) const {
  const std::string who = describe(m_holder);
  // "5s of 30s", or "5s so far" when the wait has no limit (--wait inf).
  const std::string waited = m_wait ? fmt::format("{} of {}", seconds(elapsed), format_duration(*m_wait))
                                    : fmt::format("{} so far", seconds(elapsed));
  return fmt::format("waiting for {}: {}{}", escape_for_terminal(m_name), waited,
                     who.empty() ? "" : ", held by " + who);
}

std::chrono::steady_clock::duration WaitReport::period() const {
  return m_tty ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(k_tty_period)
               : std::chrono::duration_cast<std::chrono::steady_clock::duration>(k_log_period);
}

void WaitReport::tick() {
  if (!m_next) {
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed = std::chrono::duration_cast<Millis>(now - m_start);
  try {
    if (m_tty) {
      write_stderr(fmt::format("\rredlock: {}\033[K", progress(elapsed)));
    } else {
      write_stderr(fmt::format("redlock: still {}\n", progress(elapsed)));
    }
  } catch (const std::exception&) {  // a progress line is not worth dying for
  }
  // The next line a period after this one's time; a wait that woke late
  // (a slow try) skips the lines it missed rather than writing them at once.
  *m_next += period();
  while (*m_next <= now) {
    *m_next += period();
  }
}

Millis WaitReport::stop() {
  if (m_next && m_tty) {
    write_stderr("\r\033[K");
  }
  m_next.reset();
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - m_start);
}

}  // namespace redlock::cli
