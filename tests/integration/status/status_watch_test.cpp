// status --watch into a reader that stopped reading (`status --watch |
// less`, less showing its first page): the stop signals still end it.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// Bytes waiting in the pipe behind `fd`.
int queued(int fd) {
  int n = 0;
  return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

}  // namespace

TEST(StatusWatch, AStopSignalEndsAWatchWhoseReaderStoppedReading) {
  // The write blocked on the full pipe: Ctrl-C did nothing until the
  // reader quit, and the exit was then 74 instead of 0.
  RedisServer redis;
  TempDir dir;
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(run({"acquire", "--ttl", "60s", "watched-" + std::to_string(i)}, {{"REDLOCK_URL", redis.url()}}).status,
              0);
  }
  const std::string fifo = dir.path() + "/out";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  ASSERT_GT(fcntl(reader, F_SETPIPE_SZ, 4096), 0);
  for (const int sig : {SIGINT, SIGTERM}) {
    Child w({"-c", "exec \"$RL\" status --watch --interval 100ms >\"$FIFO\""},
            {{"REDLOCK_URL", redis.url()}, {"RL", redlock_binary()}, {"FIFO", fifo}}, "/bin/sh");
    // Full, and no longer filling: the write waits for a reader.
    int last = -1;
    ASSERT_TRUE(eventually(
        [&] {
          const int now = queued(reader);
          const bool still = now > 0 && now == last;
          last = now;
          sleep_for(0.3);
          return still;
        },
        Seconds(15)))
        << w.err_so_far();
    EXPECT_TRUE(w.alive());
    w.signal(sig);
    Result r = w.wait(Seconds(3));
    EXPECT_EQ(r.status, 0) << "SIG" << sigabbrev_np(sig) << ": " << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_LT(r.seconds, 20);
    // Empty the pipe for the next round.
    char buf[4096];
    while (read(reader, buf, sizeof(buf)) > 0) {
    }
  }
  close(reader);
}
