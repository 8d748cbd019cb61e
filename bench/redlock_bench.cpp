// acquire+release round trips through the lock core, on 1 server and on 5
// (the Redlock algorithm), against local redis-servers this program starts.
// Prints one line per case and the 5-vs-1 ratio (goal: at most 1.5x).
//
//   build/bench/redlock_bench [--iterations N]

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lock/locker.hpp"

using namespace redlock;
using Clock = std::chrono::steady_clock;

namespace {

// Mean microseconds for one acquire + release over `servers`.
double measure(const std::vector<std::unique_ptr<test::RedisServer>>& servers, int iterations) {
  std::vector<redis::Endpoint> endpoints;
  for (const auto& s : servers) {
    endpoints.push_back(redis::parse_endpoint(s->url()));
  }
  lock::Locker locker(endpoints, lock::Options{});
  lock::Owner owner{"bench", 1, "redlock_bench", ""};
  auto once = [&] {
    auto got = std::get<lock::Acquired>(locker.try_acquire("bench", Millis(10000), "", owner));
    (void)locker.release("bench", got.token);
  };
  for (int i = 0; i < 50; ++i) {
    once();  // warm up: connections, script cache
  }
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    once();
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 2000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0) {
      iterations = std::max(1, std::atoi(argv[i + 1]));
    }
  }
  std::vector<std::unique_ptr<test::RedisServer>> five;
  for (int i = 0; i < 5; ++i) {
    five.push_back(std::make_unique<test::RedisServer>());
  }
  std::vector<std::unique_ptr<test::RedisServer>> one;
  one.push_back(std::make_unique<test::RedisServer>());

  double t1 = measure(one, iterations);
  double t5 = measure(five, iterations);
  // What five servers would cost asked one after another: the parallel
  // fan-out should beat it.
  double sequential = 0;
  for (auto& s : five) {
    std::vector<std::unique_ptr<test::RedisServer>> single;
    single.push_back(std::move(s));
    sequential += measure(single, iterations);
    s = std::move(single.front());
  }
  std::printf("acquire+release, 1 server:                  %8.1f us\n", t1);
  std::printf("acquire+release, 5 servers in parallel:     %8.1f us\n", t5);
  std::printf("acquire+release, 5 servers one after other: %8.1f us\n", sequential);
  std::printf(
      "5 servers / 1 server: %.2fx (goal: at most 1.50x) over %d iterations; "
      "all servers share this machine's %u cores with the client\n",
      t5 / t1, iterations, std::thread::hardware_concurrency());
  return 0;
}
