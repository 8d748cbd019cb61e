// The load generator of the scale section (bench/scale.py): many waiters
// on one lock, or many held locks, through the lock core over a few
// connections, sending what as many redlock processes would send.
//
//   redlock_load --url URLS --waiters N [--threads T] [--seconds S] [--name L]
//     N waiters join lock L's line (behind whoever is in it) and beat at the
//     cadence their place in line sets (lock/wait_loop's cadence_for), for S
//     seconds, spread over T threads of one connection per server each.
//     Prints "joined N" once all are in line, then one line of totals.
//   redlock_load --url URLS --hold N [--threads T]
//     Takes N locks (load-0 ... load-N-1) for ten minutes and exits.
//
// A simulated waiter does not subscribe to the release channel: whoever is
// woken by a release is a real redlock process at the head of the line.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "lock/locker.hpp"
#include "lock/wait_loop.hpp"
#include "redis/endpoint.hpp"
#include "util/exit_status.hpp"
#include "util/token.hpp"

using namespace redlock;

namespace {

struct Args {
  std::string url;
  long long waiters = 0;
  long long hold = 0;
  int threads = 4;
  double seconds = 30;
  std::string name = "L";
};

struct Waiter {
  TimePoint due;
  lock::Place place;
  bool operator>(const Waiter& other) const { return due > other.due; }
};

std::atomic<long long> g_joined{0};
std::atomic<long long> g_tries{0};
std::atomic<long long> g_errors{0};
std::atomic<long long> g_granted{0};

lock::Owner owner() {
  return lock::Owner{"load", static_cast<long long>(getpid()), "redlock_load", ""};
}

// One thread's share of the waiters: joins them one after another, then
// beats each when its period is up.
void run_waiters(const Args& a, long long count, TimePoint until) {
  lock::Locker locker(redis::parse_endpoint_list(a.url), lock::Options{});
  std::priority_queue<Waiter, std::vector<Waiter>, std::greater<>> due;
  for (long long i = 0; i < count; ++i) {
    lock::Place place;
    place.id = random_token();
    place.lease = lock::k_near_lease;
    place.ticket = locker.size() > 1 ? "clock" : "";
    due.push(Waiter{Clock::now(), place});
  }
  std::vector<bool> seen(static_cast<size_t>(count), false);
  long long first_beats = 0;
  while (!due.empty() && Clock::now() < until) {
    Waiter w = due.top();
    due.pop();
    std::this_thread::sleep_until(w.due);
    try {
      auto outcome = locker.try_acquire(a.name, Millis(60'000), "", owner(), lock::Claim{}, w.place);
      ++g_tries;
      if (std::holds_alternative<lock::Acquired>(outcome)) {
        ++g_granted;  // the lock freed and this simulated waiter was next: it lets go
        (void)locker.release(a.name, std::get<lock::Acquired>(outcome).token);
        continue;
      }
      const auto& busy = std::get<lock::Busy>(outcome);
      if (w.place.ticket == "clock" && busy.ticket > 0) {
        w.place.ticket = std::to_string(busy.ticket);
      }
      const lock::Cadence c = lock::cadence_for(busy.place);
      w.place.lease = c.lease;
      w.due = Clock::now() + c.period;
    } catch (const Error& e) {
      ++g_errors;
      w.due = Clock::now() + Millis(500);
    }
    if (first_beats < count) {
      ++first_beats;
      ++g_joined;
    }
    due.push(w);
  }
  // Leave the line as a waiter whose wait ran out would.
  while (!due.empty()) {
    try {
      locker.leave(a.name, due.top().place.id);
    } catch (const Error&) {
    }
    due.pop();
  }
}

void run_holds(const Args& a, long long from, long long to) {
  lock::Locker locker(redis::parse_endpoint_list(a.url), lock::Options{});
  for (long long i = from; i < to; ++i) {
    lock::Place one_try;
    one_try.fair = false;
    (void)locker.try_acquire("load-" + std::to_string(i), Millis(600'000), "", owner(), lock::Claim{}, one_try);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--url") {
      a.url = v;
    } else if (k == "--waiters") {
      a.waiters = std::atoll(v);
    } else if (k == "--hold") {
      a.hold = std::atoll(v);
    } else if (k == "--threads") {
      a.threads = std::max(1, std::atoi(v));
    } else if (k == "--seconds") {
      a.seconds = std::atof(v);
    } else if (k == "--name") {
      a.name = v;
    } else {
      std::fprintf(stderr, "redlock_load: unknown option %s\n", k.c_str());
      return 64;
    }
  }
  if (a.url.empty() || (a.waiters <= 0 && a.hold <= 0)) {
    std::fprintf(stderr, "usage: redlock_load --url URLS (--waiters N [--seconds S] | --hold N) [--threads T]\n");
    return 64;
  }
  std::vector<std::thread> threads;
  const long long total = a.hold > 0 ? a.hold : a.waiters;
  const long long share = (total + a.threads - 1) / a.threads;
  const TimePoint until = Clock::now() + std::chrono::duration_cast<Millis>(std::chrono::duration<double>(a.seconds));
  for (long long from = 0; from < total; from += share) {
    const long long to = std::min(total, from + share);
    if (a.hold > 0) {
      threads.emplace_back(run_holds, std::cref(a), from, to);
    } else {
      threads.emplace_back(run_waiters, std::cref(a), to - from, until);
    }
  }
  if (a.waiters > 0) {
    while (g_joined.load() < a.waiters && Clock::now() < until) {
      std::this_thread::sleep_for(Millis(20));
    }
    std::printf("joined %lld\n", g_joined.load());
    std::fflush(stdout);
  }
  for (auto& t : threads) {
    t.join();
  }
  if (a.waiters > 0) {
    std::printf("tries %lld errors %lld granted %lld\n", g_tries.load(), g_errors.load(), g_granted.load());
  }
  return 0;
}
