#include "redis/fanout.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace redlock::redis {
namespace {

enum class Mode { k_all, k_any };

int g_stop_fd = -1;

RunResult drive(std::span<Connection* const> conns, std::optional<TimePoint> until, int cancel_fd, Mode mode) {
  if (cancel_fd < 0) {
    cancel_fd = g_stop_fd;
  }
  std::vector<pollfd> fds;
  std::vector<Connection*> owners;
  while (true) {
    auto now = Clock::now();
    std::optional<TimePoint> next = until;
    fds.clear();
    owners.clear();
    bool all_settled = true;
    for (Connection* c : conns) {
      if (auto d = c->deadline(); d && *d <= now) {
        c->fail_timeout();
      }
      if (mode == Mode::k_any && (c->has_replies() || c->failure() || c->closed())) {
        return RunResult::k_woken;
      }
      if (!c->settled()) {
        all_settled = false;
      }
      short ev = c->wanted_events();
      if (ev != 0 && (mode == Mode::k_any || !c->settled())) {
        fds.push_back({c->fd(), ev, 0});
        owners.push_back(c);
        if (auto d = c->deadline(); d && (!next || *d < *next)) {
          next = *d;
        }
      }
    }
    if (mode == Mode::k_all && all_settled) {
      return RunResult::k_settled;
    }
    if (until && now >= *until) {
      return RunResult::k_deadline;
    }
    if (cancel_fd >= 0) {
      fds.push_back({cancel_fd, POLLIN, 0});
    }
    int timeout_ms = -1;
    if (next) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, 24 * 3600 * 1000));
    }
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return RunResult::k_deadline;
    }
    if (cancel_fd >= 0 && (fds.back().revents & POLLIN)) {
      for (Connection* c : conns) {
        if (!c->settled()) {
          c->flush();
          c->fail_cancelled();
        }
      }
      return RunResult::k_cancelled;
    }
    for (size_t i = 0; i < owners.size(); ++i) {
      if (fds[i].revents != 0) {
        owners[i]->on_events(fds[i].revents);
      }
    }
  }
}

}  // namespace

void set_stop_fd(int fd) {
  g_stop_fd = fd;
}

RunResult run_all(std::span<Connection* const> conns, int cancel_fd) {
  return drive(conns, std::nullopt, cancel_fd, Mode::k_all);
}

RunResult wait_any(std::span<Connection* const> conns, std::optional<TimePoint> until, int cancel_fd) {
  return drive(conns, until, cancel_fd, Mode::k_any);
}

Reply call(Connection& conn, const std::vector<std::string>& argv) {
  conn.queue(argv);
  Connection* one[] = {&conn};
  run_all(one);
  if (conn.failure()) {
    Failure f = *conn.failure();
    conn.reset();
    throw Error(f.status, f.message);
  }
  auto replies = conn.take_replies();
  return replies.empty() ? Reply{} : std::move(replies.back());
}

}  // namespace redlock::redis
