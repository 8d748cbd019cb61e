#include "cli/take/wait_report.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

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
    out += fmt::format(" ({})", escape_command(cmd));
  }
  if (h.others > 0) {
    out += fmt::format(" and {} other{}", h.others, h.others == 1 ? "" : "s");
  }
  return out;
}

namespace {

// Stderr as WaitReport draws on it. With --log-format json or --syslog
// its lines ("redlock: …\n") go through the log like any other, and there
// is no live line: a log has no cursor to move back.
class StderrScreen final : public ReportScreen {
 public:
  [[nodiscard]] TimePoint now() const override { return Clock::now(); }
  [[nodiscard]] bool terminal() const override { return plain() && isatty(STDERR_FILENO) == 1; }
  [[nodiscard]] size_t columns() const override {
    winsize size{};
    return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
  }
  void write(std::string_view text) noexcept override {
    if (plain()) {
      write_stderr(text);
      return;
    }
    constexpr std::string_view k_start = "redlock: ";
    if (text.substr(0, k_start.size()) == k_start && !text.empty() && text.back() == '\n') {
      write_shown_line(text.substr(k_start.size(), text.size() - k_start.size() - 1), LogLevel::k_notice);
    }
  }

 private:
  static bool plain() { return log_sinks().format == LogFormat::k_text && !log_sinks().syslog; }
};

// Whole seconds: a live line that changes every second reads best without tenths.
std::string seconds(Millis d) {
  return format_duration(std::chrono::duration_cast<std::chrono::seconds>(d));
}

}  // namespace

ReportScreen& stderr_screen() {
  static StderrScreen screen;
  return screen;
}

WaitReport::WaitReport(std::string name, std::optional<Millis> wait, HolderInfo holder, ReportScreen& screen,
                       ReportPeriods periods)
    : m_name(std::move(name)),
      m_wait(wait),
      m_holder(std::move(holder)),
      m_screen(screen),
      m_periods(periods),
      m_start(screen.now()),
      m_tty(screen.terminal()) {
  const std::string who = describe(m_holder);
  std::string lease;
  if (m_holder.kept) {
    lease =
        fmt::format(" for {} more (it finished; --hold-at-least keeps the lock)", format_duration(m_holder.ttl_left));
  } else if (m_holder.ttl_left > Millis(0)) {
    lease = fmt::format(" for at most {} more unless renewed", format_duration(m_holder.ttl_left));
  }
  say(fmt::format("{} is held{}{}; waiting {}", escape_for_terminal(m_name), who.empty() ? "" : " by " + who, lease,
                  m_wait ? "up to " + format_duration(*m_wait) : std::string("for as long as it takes (--wait inf)")));
  if (verbosity() >= Verbosity::k_normal) {
    m_next = m_start + period();
  }
}

// A line as log_notice writes it, but on the report's screen.
void WaitReport::say(const std::string& line) noexcept {
  if (verbosity() < Verbosity::k_normal) {
    return;
  }
  try {
    m_screen.write("redlock: " + one_line(line) + "\n");
  } catch (...) {  // a line is not worth dying for
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

void WaitReport::tick() {
  if (!m_next) {
    return;
  }
  const TimePoint now = m_screen.now();
  const auto elapsed = std::chrono::duration_cast<Millis>(now - m_start);
  try {
    if (m_tty) {
      // One column short of the width: a line that fills it would wrap the
      // cursor to the next row on some terminals, and each redraw add a row.
      const size_t width = m_screen.columns();
      m_screen.write(
          fmt::format("\r{}\033[K", fit_columns("redlock: " + progress(elapsed), width > 1 ? width - 1 : 0)));
    } else {
      m_screen.write(fmt::format("redlock: still {}\n", progress(elapsed)));
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
    m_screen.write("\r\033[K");
  }
  m_next.reset();
  return std::chrono::duration_cast<Millis>(m_screen.now() - m_start);
}

void WaitReport::acquired() {
  const Millis waited = stop();
  say(fmt::format("acquired {} after {}", escape_for_terminal(m_name), format_duration(waited)));
}

}  // namespace redlock::cli
