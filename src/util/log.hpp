#pragma once

#include <fmt/format.h>

#include <cstdio>

namespace redlock {

// -q: 0, default: 1, -v: 2. Set once by main() before anything logs.
enum class Verbosity { k_quiet = 0, k_normal = 1, k_verbose = 2 };
Verbosity& verbosity();

// A line on stderr, prefixed "redlock: ", unless -q.
template <typename... Args>
void log_warning(fmt::format_string<Args...> f, Args&&... args) {
  if (verbosity() >= Verbosity::k_normal) {
    fmt::print(stderr, "redlock: {}\n", fmt::format(f, std::forward<Args>(args)...));
  }
}

// A line on stderr only with -v.
template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (verbosity() >= Verbosity::k_verbose) {
    fmt::print(stderr, "redlock: {}\n", fmt::format(f, std::forward<Args>(args)...));
  }
}

}  // namespace redlock
