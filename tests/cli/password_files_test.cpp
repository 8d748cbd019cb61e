// Files named by --password-file, $REDLOCK_PASSWORD_FILE, --tls-ca and
// --tls-cert may be pipes: <(pass show redis) must work, and one that nobody
// writes to must not keep redlock from ending at a stop signal. A password
// file is read up to its first line only.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace redlock::test;

namespace {

bool one_line(const std::string& err) {
  return std::count(err.begin(), err.end(), '\n') == 1 && err.rfind("redlock: ", 0) == 0;
}

// True once `pid` sleeps in open() of a FIFO, waiting for a writer.
bool waits_for_a_writer(pid_t pid) {
  return read_file("/proc/" + std::to_string(pid) + "/wchan") == "wait_for_partner";
}

}  // namespace

TEST(PasswordAndTlsFiles, AStopSignalEndsAWaitOnAFifoThatNobodyWritesTo) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Nothing listens on the endpoints: redlock never gets that far.
  const std::string tcp = "redis://127.0.0.1:1";
  const std::string tls = "rediss://127.0.0.1:1";
  struct Case {
    std::string what;
    std::vector<std::string> args;
    Env env;
    int sig;
  };
  const std::vector<Case> cases = {
      {"--password-file", {"-r", tcp, "--password-file", fifo, "status"}, {}, SIGTERM},
      {"$REDLOCK_PASSWORD_FILE", {"-r", tcp, "exec", "x", "--", "true"}, {{"REDLOCK_PASSWORD_FILE", fifo}}, SIGINT},
      {"--tls-ca", {"-r", tls, "--tls-ca", fifo, "acquire", "x"}, {}, SIGHUP},
      {"--tls-cert", {"-r", tls, "--tls-cert", fifo, "--tls-key", fifo, "status"}, {}, SIGTERM},
  };
  for (const auto& c : cases) {
    Child redlock(c.args, c.env);
    ASSERT_TRUE(eventually([&] { return waits_for_a_writer(redlock.pid()); })) << c.what << redlock.err_so_far();
    redlock.signal(c.sig);
    Result r = redlock.wait(Seconds(5));
    EXPECT_EQ(r.signal, c.sig) << c.what << ": " << r.err;
    EXPECT_LT(r.seconds, 4) << c.what;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(std::string("interrupted by SIG") + sigabbrev_np(c.sig)), std::string::npos) << r.err;
  }
}

TEST(PasswordAndTlsFiles, UnderQqAStopEndsTheWaitWithoutALine) {
  // -qq: no line, the status alone.
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Child redlock({"-qq", "-r", "redis://127.0.0.1:1", "--password-file", fifo, "status"});
  ASSERT_TRUE(eventually([&] { return waits_for_a_writer(redlock.pid()); })) << redlock.err_so_far();
  redlock.signal(SIGTERM);
  Result r = redlock.wait(Seconds(5));
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(PasswordAndTlsFiles, APasswordFromAPipeIsRead) {
  RedisServer::Options o;
  o.requirepass = "piped-pw";
  RedisServer redis(o);
  Env env{{"RL", redlock_binary()}, {"REDLOCK_URL", redis.url()}};
  Child substituted({"-c", "exec \"$RL\" --password-file <(printf 'piped-pw\\nsecond line\\n') status"}, env, "bash");
  Result r = substituted.wait(Seconds(10));
  EXPECT_EQ(r.status, 0) << r.err;
  Child piped({"-c", "printf 'piped-pw' | \"$RL\" --password-file /dev/stdin status"}, env, "sh");
  Result p = piped.wait(Seconds(10));
  EXPECT_EQ(p.status, 0) << p.err;
}

TEST(PasswordAndTlsFiles, AFileWhoseFirstLineIsLongerThanAPasswordIsRefused) {
  TempDir dir;
  const Env nowhere{{"REDLOCK_URL", "redis://127.0.0.1:1"}};
  const std::string long_line = dir.path() + "/long";
  {
    std::ofstream out(long_line);
    out << std::string(1 << 20, 'a');
  }
  Result r = run({"status", "--password-file", long_line}, nowhere, Seconds(10));
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("--password-file '" + long_line +
                       "' does not hold a password: its first line is longer than 4096 bytes"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(r.status, 64);
  // /dev/zero never ends: it is not read without limit.
  Env from_env = nowhere;
  from_env["REDLOCK_PASSWORD_FILE"] = "/dev/zero";
  Result zero = run({"status"}, from_env, Seconds(10));
  EXPECT_EQ(zero.status, 64) << zero.err;
  EXPECT_NE(zero.err.find("$REDLOCK_PASSWORD_FILE '/dev/zero' does not hold a password"), std::string::npos)
      << zero.err;
  EXPECT_LT(zero.seconds, 5);
  // A long second line is not the password's business.
  const std::string two_lines = dir.path() + "/two";
  {
    std::ofstream out(two_lines);
    out << "pw\n" << std::string(1 << 20, 'b');
  }
  Result two = run({"status", "--password-file", two_lines}, nowhere, Seconds(10));
  EXPECT_EQ(two.status, 69) << two.err;
}
