#include "cli/take/take.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "cli/setup/arguments.hpp"
#include "cli/show/history_format.hpp"
#include "cli/take/wait_report.hpp"
#include "lock/wait_loop.hpp"
#include "util/log.hpp"
#include "util/text.hpp"
#include "util/token.hpp"

namespace redlock::cli {

std::vector<std::string> parse_names(const std::vector<std::string>& names) {
  if (names.empty()) {
    throw UsageError("a lock's name is needed");
  }
  if (names.size() > k_max_names) {
    throw UsageError(fmt::format("{} names is too many for one lock (at most {})", names.size(), k_max_names));
  }
  std::vector<std::string> sorted = names;
  for (const auto& n : sorted) {
    validate_name(n);
    // A name is shown to everyone (status, events): a password in one is a
    // mistake, such as a URL where a name was expected.
    if (const std::string shown = redact_secrets(n); shown != n) {
      throw UsageError(
          fmt::format("'{}' looks like it holds a password, which a lock's name must not: names are "
                      "shown to everyone (a server goes in --redis)",
                      escape_for_terminal(shown)));
    }
  }
  std::sort(sorted.begin(), sorted.end());
  if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end()) {
    throw UsageError(fmt::format("the name '{}' is given twice", escape_for_terminal(*twice)));
  }
  return sorted;
}

Take parse_take(const TakeOptions& o, bool shared) {
  Take t;
  t.names = parse_names(o.names);
  t.first = o.names.front();
  t.name = t.names.front();
  t.ttl = o.ttl;
  t.wait = o.nonblock ? std::optional<Millis>(Millis(0)) : o.wait;
  t.conflict_exit_code = o.conflict_exit_code;
  if (o.exclusive && (shared || o.limit != 1)) {
    throw UsageError(
        fmt::format("-x (--exclusive) takes the lock alone; it does not go with {}", shared ? "--shared" : "--limit"));
  }
  if (shared && o.limit != 1) {
    throw UsageError("--shared takes a reader's share of a readers/writer lock; it does not go with --limit");
  }
  t.claim.limit = o.limit;
  t.claim.mode = shared        ? lock::Claim::Mode::k_shared
                 : o.limit > 1 ? lock::Claim::Mode::k_semaphore
                               : lock::Claim::Mode::k_exclusive;
  t.reenter = token_from(o.token);
  t.fair = !o.unfair;
  t.jitter = o.jitter;
  t.stale_after = o.stale_after;
  if (o.max_waiters > 0 && o.unfair) {
    throw UsageError("--max-waiters bounds the line of waiters, which --unfair does not join");
  }
  t.claim.max_waiters = o.max_waiters;
  validate_text(o.note, "--note", k_max_note_bytes);
  t.note = redact_secrets(o.note);
  return t;
}

namespace {

// --jitter: sleeps a random time below `jitter` (systemd's
// RandomizedDelaySec=), so that the host whose cron starts first does not
// win every time. Returns the stop signal that cut it short, or 0.
int sleep_jitter(Millis jitter, SignalFd& signals) {
  if (jitter <= Millis(0)) {
    return 0;
  }
  const Millis delay = random_millis(0, jitter.count() - 1);
  log_debug("waiting {} before the first try (--jitter {})", format_duration(delay), format_duration(jitter));
  const TimePoint until = Clock::now() + delay;
  while (true) {
    const auto left = std::chrono::ceil<Millis>(until - Clock::now()).count();
    if (left <= 0) {
      return 0;
    }
    pollfd fd{signals.fd(), POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(std::min<long long>(left, 3'600'000))) > 0) {
      while (const int sig = signals.take()) {
        if (sig != SIGCHLD) {
          return sig;
        }
      }
    }
  }
}

// A suspended name: why, by whom, since and until when.
void report_suspended(const std::string& name, const lock::Suspension& s) {
  const std::string reason = s.reason.empty() ? std::string() : ": " + escape_for_terminal(s.reason);
  const std::string until = s.until_ms > 0
                                ? fmt::format("until {} ({} from now)", format_time(s.until_ms),
                                              format_duration(Millis(std::max(0LL, s.until_ms - s.now_ms))))
                                : fmt::format("until resumed (redlock resume {})", escape_for_terminal(name));
  log_notice("{} is suspended{} (by {}, pid {}, at {}); nothing is run {}", escape_for_terminal(name), reason,
             escape_for_terminal(s.host), escape_for_terminal(s.pid), format_time(s.since_ms), until);
}

// What the busy line says after the holder: how much longer it holds the
// lock, whether it seems stuck (`stale`), and the line of waiters.
std::string busy_details(const lock::Busy& busy, const Take& take, bool stale) {
  const HolderInfo holder = holder_of(busy);
  std::string more = holder.ttl_left > Millis(0) ? fmt::format(" for {} more", format_duration(holder.ttl_left)) : "";
  if (holder.kept) {
    more += " (it finished; --hold-at-least keeps the lock)";
  }
  if (stale) {
    more += fmt::format(", and has held it for {}, more than --stale-after {}: it may be stuck",
                        format_duration(*busy.held), format_duration(*take.stale_after));
  }
  if (busy.line_full) {
    more += fmt::format("; {} already waiting in line (--max-waiters {})", busy.ahead, take.claim.max_waiters);
  } else if (busy.ahead > 0) {
    more += fmt::format(", with {} waiting in line before you", busy.ahead);
  }
  return more;
}

}  // namespace

// It names the holder with its command (from the busy answer itself), and
// after a wait does not suggest --wait again.
ExitCode report_busy(const std::string& name, const lock::Busy& busy, const Take& take) {
  const std::optional<Millis>& waited = take.wait;
  const ExitCode conflict_exit_code = take.conflict_exit_code;
  // A holder past --stale-after may be stuck: that is news even under -q
  // (cron mails it from every host that finds it so), not under -qq.
  const bool stale = take.stale_after && busy.held && *busy.held > *take.stale_after;
  // The busy line is the command's last: its JSON carries the status.
  set_log_field("exit", std::to_string(conflict_exit_code.value()), true);
  if (verbosity() < (stale ? Verbosity::k_quiet : Verbosity::k_normal)) {
    return conflict_exit_code;  // -q: busy is not news
  }
  if (const auto& s = busy.suspended) {
    report_suspended(name, *s);
    return conflict_exit_code;
  }
  if (const auto& ok = busy.skipped) {
    log_notice("{} already ran ok on {} (pid {}) {} ago, at {}: not run again within --skip-if-ok-within",
               escape_for_terminal(name), escape_for_terminal(ok->host), escape_for_terminal(ok->pid),
               format_duration(Millis(std::max(0LL, ok->now_ms - ok->end_ms))), format_time(ok->end_ms));
    return conflict_exit_code;
  }
  const bool did_wait = waited && *waited > Millis(0);
  // Under --conflict-exit-code 0 a busy lock is no failure: nothing to try again.
  const bool advise = conflict_exit_code.value() != 0;
  if (busy.lost_race && busy.host.empty()) {
    log_notice("{} is contended: no quorum for anyone{}", escape_for_terminal(name),
               did_wait ? fmt::format(" (gave up after waiting {})", format_duration(*waited))
               : advise ? std::string("; try again or use --wait")
                        : std::string());
    return conflict_exit_code;
  }
  const std::string who = describe(holder_of(busy));
  const std::string more = busy_details(busy, take, stale);
  if (busy.line_full) {
    log_at(Verbosity::k_quiet, "{} is held{}{}", escape_for_terminal(name), who.empty() ? "" : " by " + who, more);
  } else if (did_wait) {
    log_at(Verbosity::k_quiet, "gave up waiting for {} after {}: it is still held{}{}", escape_for_terminal(name),
           format_duration(*waited), who.empty() ? "" : " by " + who, more);
  } else {
    log_at(Verbosity::k_quiet, "{} is held{}{}{}", escape_for_terminal(name), who.empty() ? "" : " by " + who, more,
           advise ? "; try later or use --wait" : "");
  }
  return conflict_exit_code;
}

namespace {

// What a waiting take says: from its first busy answer, who holds the lock
// and how long it may wait (WaitReport), then its progress lines.
class TakeListener final : public lock::WaitListener {
 public:
  TakeListener(const Take& take, KeepAlive* keep) : m_take(take), m_keep(keep) {}

  void busy(const lock::Busy& busy) override {
    if (m_waiting) {
      return;
    }
    m_waiting = true;
    if (verbosity() >= Verbosity::k_normal) {
      m_report.emplace(m_take.name, m_take.wait, holder_of(busy));
    }
  }
  [[nodiscard]] std::optional<TimePoint> next_tick() const override {
    std::optional<TimePoint> next = m_report ? m_report->next_tick() : std::nullopt;
    if (const auto due = m_keep != nullptr ? m_keep->due() : std::nullopt) {
      next = next ? std::min(*next, *due) : *due;
    }
    return next;
  }
  void tick() override {
    const TimePoint now = Clock::now();
    if (m_report && m_report->next_tick() && *m_report->next_tick() <= now) {
      m_report->tick();
    }
    if (const auto due = m_keep != nullptr ? m_keep->due() : std::nullopt; due && *due <= now) {
      m_keep->renew();
    }
  }

  std::optional<WaitReport>& report() { return m_report; }

 private:
  const Take& m_take;
  KeepAlive* m_keep;
  bool m_waiting = false;
  std::optional<WaitReport> m_report;
};

// A stop signal `sig` came with the grant: the lock goes back before
// redlock ends by it. The signal is taken by now, so a give-back that
// fails (Redis went away, or answered wrongly) must not end the command
// with its own status: the stop is what the caller asked for, and the TTL
// frees the lock.
void give_back_after_stop(lock::Locker& locker, const Take& take, const lock::Acquired& got, int sig) {
  try {
    const StopBound bound(locker);
    (void)locker.release(take.name, got.token, 0, got.count == 1 && take.claim.starts_run());
  } catch (const Error& e) {
    set_exit_field(128 + sig);
    log_warning("interrupted by SIG{}; {} could not be given back: {}; it frees itself within {}", sigabbrev_np(sig),
                escape_for_terminal(take.name), e.what(), format_duration(got.ttl));
    return;
  }
  set_exit_field(128 + sig);
  log_warning("interrupted by SIG{}; {} was given back", sigabbrev_np(sig), escape_for_terminal(take.name));
}

}  // namespace

ExitCode status_without_lock(const TakeOutcome& outcome) {
  if (const auto* conflict = std::get_if<Conflict>(&outcome)) {
    return conflict->status;
  }
  if (const auto* stopped = std::get_if<Stopped>(&outcome)) {
    return ExitCode::for_signal(stopped->signal);
  }
  throw std::logic_error("status_without_lock: the lock was taken");
}

TakeOutcome take_lock(lock::Locker& locker, const Take& take, const lock::Owner& asking, SignalFd& signals,
                      KeepAlive* keep) {
  lock::Owner owner = asking;
  owner.note = take.note;
  if (const int sig = sleep_jitter(take.jitter, signals)) {
    set_exit_field(128 + sig);
    log_warning("interrupted by SIG{} before the first try for {} (--jitter); nothing was taken", sigabbrev_np(sig),
                escape_for_terminal(take.name));
    return Stopped{sig};
  }
  // What a wait says starts with its first busy answer: the first try
  // already takes a place in line (one round trip, not a try and then
  // another to queue).
  TakeListener listener(take, keep);
  std::optional<WaitReport>& report = listener.report();
  const bool may_wait = !take.wait || *take.wait > Millis(0);
  auto outcome = lock::acquire_waiting(locker, take.name, take.ttl, take.reenter, owner, take.wait, signals.cancel(),
                                       take.claim, take.fair, may_wait ? &listener : nullptr);
  if (report) {
    if (std::holds_alternative<lock::Acquired>(outcome)) {
      report->acquired();
    } else {
      (void)report->stop();
    }
  }
  if (auto* stopped = std::get_if<lock::Interrupted>(&outcome)) {
    int sig = signals.take();
    {
      const StopBound bound(locker);
      locker.leave(take.name, stopped->queued_as);
    }
    set_exit_field(128 + sig);
    log_warning("interrupted by SIG{} while waiting for {}; nothing was taken", sigabbrev_np(sig),
                escape_for_terminal(take.name));
    return Stopped{sig};
  }
  if (auto* busy = std::get_if<lock::Busy>(&outcome)) {
    return Conflict{report_busy(take.name, *busy, take)};
  }
  auto got = std::get<lock::Acquired>(std::move(outcome));
  set_log_field("fence", std::to_string(got.fence), true);  // every JSON log line from now on
  for (int sig; (sig = signals.take()) != 0;) {
    if (sig != SIGCHLD) {
      give_back_after_stop(locker, take, got, sig);
      return Stopped{sig};
    }
  }
  return got;
}

void check_hold_at_least(Millis hold, const lock::Claim& claim) {
  if (hold > Millis(0) && claim.mode != lock::Claim::Mode::k_exclusive) {
    throw UsageError("--hold-at-least keeps a plain lock; it does not go with --limit or --shared");
  }
}

lock::Owner make_owner(long long pid, const std::vector<std::string>& argv) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) {
    std::strcpy(host, "unknown");
  }
  return lock::Owner{host, pid, recorded_command(argv), ""};
}

std::vector<std::string> process_argv(long long pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) {
      end = raw.size();
    }
    argv.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

}  // namespace redlock::cli
