#include "redis/fanout.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace redlock::redis {
namespace {

enum class Mode { k_all, k_any };

// What one poll() waits for: the connections' sockets, in the order of
// `owners`, then the Cancel's descriptor (if any); and the earliest deadline.
struct PollSet {
  std::vector<pollfd> fds;
  std::vector<Connection*> owners;
  std::optional<TimePoint> next;
  bool watching_cancel = false;

  void clear(std::optional<TimePoint> until) {
    fds.clear();
    owners.clear();
    next = until;
    watching_cancel = false;
  }

  void watch(Connection* c) {
    short ev = c->wanted_events();
    if (ev == 0) {
      return;
    }
    fds.push_back({c->fd(), ev, 0});
    owners.push_back(c);
    if (auto d = c->deadline(); d && (!next || *d < *next)) {
      next = *d;
    }
  }

  void watch_cancel(const Cancel& cancel) {
    if (cancel.fd() >= 0) {
      fds.push_back({cancel.fd(), POLLIN, 0});
      watching_cancel = true;
    }
  }

  [[nodiscard]] int timeout_ms(TimePoint now) const {
    if (!next) {
      return -1;
    }
    constexpr long long k_day_ms = std::chrono::milliseconds(std::chrono::hours(24)).count();
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
    return static_cast<int>(std::clamp<long long>(left, 0, k_day_ms));
  }

  [[nodiscard]] bool cancelled() const { return watching_cancel && (fds.back().revents & POLLIN) != 0; }

  // Hands each connection what poll() saw on its socket.
  void dispatch() const {
    for (size_t i = 0; i < owners.size(); ++i) {
      if (fds[i].revents != 0) {
        owners[i]->on_events(fds[i].revents);
      }
    }
  }
};

// Something for a wait_any() caller to look at: a reply, a failure, a close.
bool has_news(const Connection& c) {
  return c.has_replies() || c.failure() || c.closed();
}

enum class Survey { k_pending, k_woken, k_settled };

// Fails the connections whose phase timed out, then tells whether the wait
// is over (k_any: one has news; k_all: all settled) or gathers into `set`
// what the others wait for.
Survey survey(std::span<Connection* const> conns, TimePoint now, Mode mode, PollSet& set) {
  bool all_settled = true;
  for (Connection* c : conns) {
    if (auto d = c->deadline(); d && *d <= now) {
      c->fail_timeout();
    }
    if (mode == Mode::k_any && has_news(*c)) {
      return Survey::k_woken;
    }
    all_settled = all_settled && c->settled();
    if (mode == Mode::k_any || !c->settled()) {
      set.watch(c);
    }
  }
  return mode == Mode::k_all && all_settled ? Survey::k_settled : Survey::k_pending;
}

// A stop: what is queued still goes out (a release behind an acquire), but
// nobody waits for the answers.
void cancel_all(std::span<Connection* const> conns) {
  for (Connection* c : conns) {
    if (!c->settled()) {
      c->flush();
      c->fail_cancelled();
    }
  }
}

RunResult drive(std::span<Connection* const> conns, std::optional<TimePoint> until, const Cancel& cancel, Mode mode,
                const std::function<bool()>& enough = {}) {
  PollSet set;
  while (true) {
    auto now = Clock::now();
    set.clear(until);
    switch (survey(conns, now, mode, set)) {
      case Survey::k_woken:
        return RunResult::k_woken;
      case Survey::k_settled:
        return RunResult::k_settled;
      case Survey::k_pending:
        break;
    }
    if (enough && enough()) {
      return RunResult::k_woken;
    }
    if (until && now >= *until) {
      return RunResult::k_deadline;
    }
    set.watch_cancel(cancel);
    if (::poll(set.fds.data(), set.fds.size(), set.timeout_ms(now)) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return RunResult::k_deadline;
    }
    if (set.cancelled()) {
      cancel_all(conns);
      return RunResult::k_cancelled;
    }
    set.dispatch();
  }
}

}  // namespace

RunResult run_all(std::span<Connection* const> conns, const Cancel& cancel) {
  return drive(conns, std::nullopt, cancel, Mode::k_all);
}

RunResult run_until(std::span<Connection* const> conns, const std::function<bool()>& enough,
                    std::optional<TimePoint> until, const Cancel& cancel) {
  return drive(conns, until, cancel, Mode::k_all, enough);
}

RunResult wait_any(std::span<Connection* const> conns, std::optional<TimePoint> until, const Cancel& cancel) {
  return drive(conns, until, cancel, Mode::k_any);
}

void read_arrived(std::span<Connection* const> conns) {
  PollSet set;
  set.clear(std::nullopt);
  for (Connection* c : conns) {
    set.watch(c);
  }
  if (set.fds.empty()) {
    return;
  }
  int n;
  do {
    n = ::poll(set.fds.data(), set.fds.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    set.dispatch();
  }
}

Reply call(Connection& conn, const std::vector<std::string>& argv) {
  conn.queue(argv);
  Connection* one[] = {&conn};
  run_all(one, conn.cancel());
  if (conn.failure()) {
    Failure f = *conn.failure();
    conn.reset();
    throw Error(f.status, f.message);
  }
  auto replies = conn.take_replies();
  return replies.empty() ? Reply{} : std::move(replies.back());
}

}  // namespace redlock::redis
