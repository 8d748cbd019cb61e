#pragma once

// N independent redis-servers of our own, for the Redlock tests;
// env() lists them all in REDLOCK_URL.

#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"

namespace redlock::test {

struct Servers {
  explicit Servers(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      all.push_back(std::make_unique<RedisServer>());
    }
  }
  [[nodiscard]] std::string urls() const {
    std::string out;
    for (const auto& s : all) {
      out += (out.empty() ? "" : ",") + s->url();
    }
    return out;
  }
  [[nodiscard]] Env env() const { return {{"REDLOCK_URL", urls()}}; }
  // How many running servers hold the lock NAME (default prefix).
  [[nodiscard]] long long holders(const std::string& name) const {
    long long n = 0;
    for (const auto& s : all) {
      if (s->running() && s->cmd({"EXISTS", lock_key(name)}).integer == 1) {
        ++n;
      }
    }
    return n;
  }
  RedisServer& operator[](size_t i) { return *all[i]; }
  std::vector<std::unique_ptr<RedisServer>> all;
};

}  // namespace redlock::test
