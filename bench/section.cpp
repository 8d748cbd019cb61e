// The critical section of scripts/bench's contended measure, run under the
// lock by redlock exec or flock(1): appends one line "WORKER START END"
// (CLOCK_MONOTONIC nanoseconds) to FILE, sleeping MS milliseconds between
// the two readings. The line is one write(2) to an O_APPEND file, so lines
// of concurrent holders never mix.
//
//   redlock_bench_section FILE WORKER MS

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fputs("usage: redlock_bench_section FILE WORKER MS\n", stderr);
    return 64;
  }
  const long long start = now_ns();
  const long ms = std::atol(argv[3]);
  if (ms > 0) {
    timespec d{ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0) {
    }
  }
  const long long end = now_ns();
  char line[128];
  const int n = std::snprintf(line, sizeof(line), "%s %lld %lld\n", argv[2], start, end);
  const int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || n <= 0 || write(fd, line, static_cast<size_t>(n)) != n) {
    std::perror("redlock_bench_section");
    return 1;
  }
  close(fd);
  return 0;
}
