// Logs for log systems: --log-format json makes every line on stderr one
// JSON object; --syslog sends each line to syslog(3) as well, with its
// priority (received here on a socket of the test's own at /dev/log).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// Each line of `err`, parsed; a line that is not one JSON object fails.
std::vector<nlohmann::json> json_lines(const std::string& err) {
  std::vector<nlohmann::json> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << "not one JSON object: " << line;
    if (j.is_object()) {
      EXPECT_TRUE(j["time"].is_string()) << line;
      EXPECT_TRUE(j["level"].is_string()) << line;
      EXPECT_TRUE(j["message"].is_string()) << line;
      EXPECT_TRUE(j["host"].is_string()) << line;
      EXPECT_TRUE(j["pid"].is_number()) << line;
      out.push_back(j);
    }
  }
  return out;
}

std::string unreachable() {
  return "redis://127.0.0.1:" + std::to_string(free_port());
}

}  // namespace

TEST(JsonLogs, AFailureIsOneObjectWithItsNameAndExitStatus) {
  const Result r = run({"--log-format", "json", "acquire", "deploy"}, {{"REDLOCK_URL", unreachable()}});
  EXPECT_EQ(r.status, 69);
  const auto lines = json_lines(r.err);
  ASSERT_EQ(lines.size(), 1U) << r.err;
  EXPECT_EQ(lines[0]["level"], "error");
  EXPECT_EQ(lines[0]["name"], "deploy");
  EXPECT_EQ(lines[0]["exit"], 69);
  EXPECT_NE(lines[0]["message"].get<std::string>().find("127.0.0.1"), std::string::npos);
}

TEST(JsonLogs, TheLineThatSaysWhyExecEndsCarriesItsStatus) {
  // --max-runtime's 124 and a stop's 130 are said in a warning, not in a
  // failure: that line carries the exit status too.
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Result bounded = run({"--log-format", "json", "exec", "--max-runtime", "300ms", "job", "--", "sleep", "30"}, env);
  EXPECT_EQ(bounded.status, 124) << bounded.err;
  const auto lines = json_lines(bounded.err);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["exit"], 124) << bounded.err;
  EXPECT_NE(lines.back()["message"].get<std::string>().find("--max-runtime"), std::string::npos) << bounded.err;

  ASSERT_EQ(run({"acquire", "--ttl", "60s", "held"}, env).status, 0);
  Child waiter({"--log-format", "json", "exec", "--wait", "60s", "held", "--", "true"}, env);
  ASSERT_TRUE(await_waiters(redis, "held")) << waiter.err_so_far();
  waiter.signal(SIGINT);
  Result stopped = waiter.wait(Seconds(10));
  EXPECT_EQ(stopped.signal, SIGINT) << stopped.err;
  const auto waited = json_lines(stopped.err);
  ASSERT_FALSE(waited.empty());
  EXPECT_EQ(waited.back()["exit"], 130) << stopped.err;
}

TEST(JsonLogs, TheEnvironmentSetsItAndEveryLineOfARunIsJson) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}, {"REDLOCK_LOG_FORMAT", "json"}};
  ASSERT_EQ(run({"acquire", "--ttl", "30s", "held"}, env).status, 0);
  // Busy after a wait (its first line, its end), a command not found, a
  // usage error: each line one object.
  const Result busy = run({"acquire", "--wait", "300ms", "held"}, env);
  EXPECT_EQ(busy.status, 75);
  const auto busy_lines = json_lines(busy.err);
  ASSERT_GE(busy_lines.size(), 2U) << busy.err;
  EXPECT_EQ(busy_lines[0]["level"], "notice");
  EXPECT_EQ(busy_lines[0]["name"], "held");
  EXPECT_EQ(busy_lines.back()["exit"], 75) << "the line that ends it says how";

  const Result missing = run({"exec", "free", "--", "/no/such/command"}, env);
  EXPECT_EQ(missing.status, 127);
  const auto missing_lines = json_lines(missing.err);
  ASSERT_FALSE(missing_lines.empty()) << missing.err;
  EXPECT_NE(missing_lines[0]["message"].get<std::string>().find("cannot run /no/such/command: command not found"),
            std::string::npos);
  EXPECT_TRUE(missing_lines[0]["fence"].is_number()) << "held when it failed: " << missing.err;

  const Result usage = run({"acquire", "--ttl", "soon", "x"}, env);
  EXPECT_EQ(usage.status, 64);
  const auto usage_lines = json_lines(usage.err);
  ASSERT_EQ(usage_lines.size(), 1U) << usage.err;
  EXPECT_EQ(usage_lines[0]["exit"], 64);
}

TEST(JsonLogs, AnUnknownFormatIsUsageBeforeAnyTraffic) {
  const Env env{{"REDLOCK_URL", unreachable()}};
  EXPECT_EQ(run({"--log-format", "xml", "acquire", "x"}, env).status, 64);
  EXPECT_EQ(run({"acquire", "x"}, {{"REDLOCK_URL", unreachable()}, {"REDLOCK_LOG_FORMAT", "xml"}}).status, 64);
  EXPECT_EQ(run({"acquire", "x"}, {{"REDLOCK_URL", unreachable()}, {"REDLOCK_SYSLOG", "local9"}}).status, 64);
  EXPECT_EQ(run({"--syslog-facility", "nope", "acquire", "x"}, env).status, 64);
}

TEST(JsonLogs, TextStaysAsItWas) {
  const Result r = run({"acquire", "deploy"}, {{"REDLOCK_URL", unreachable()}});
  EXPECT_EQ(r.status, 69);
  EXPECT_EQ(r.err.rfind("redlock: ", 0), 0U) << r.err;
}

// syslog(3) writes to /dev/log, a path it cannot be given: where no syslog
// daemon listens (these machines have none), the test listens there itself.
class Syslog : public testing::Test {
 protected:
  void SetUp() override {
    struct stat st {};
    if (stat("/dev/log", &st) == 0) {
      GTEST_SKIP() << "/dev/log exists (a syslog daemon's): not taken over";
    }
    m_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(m_fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "/dev/log");
    if (bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      GTEST_SKIP() << "cannot listen at /dev/log: " << std::strerror(errno);
    }
    m_bound = true;
    timeval tv{5, 0};
    setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  void TearDown() override {
    if (m_bound) {
      unlink("/dev/log");
    }
    if (m_fd >= 0) {
      close(m_fd);
    }
  }
  // The next message, or "" after 5 s.
  std::string receive() const {
    char buf[4096];
    const ssize_t n = recv(m_fd, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  int m_fd = -1;
  bool m_bound = false;
};

TEST_F(Syslog, EachLineGoesThereWithItsPriority) {
  const Result r = run({"--syslog", "acquire", "deploy"}, {{"REDLOCK_URL", unreachable()}});
  EXPECT_EQ(r.status, 69);
  EXPECT_EQ(r.err.rfind("redlock: ", 0), 0U) << "stderr keeps its line: " << r.err;
  const std::string m = receive();
  // <PRI>: facility user (1) * 8 + err (3).
  EXPECT_EQ(m.rfind("<11>", 0), 0U) << m;
  // syslog(3)'s own format, which every syslog daemon reads.
  EXPECT_TRUE(std::regex_search(m, std::regex(R"(^<11>[A-Z][a-z]{2} [ 1-3][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} )"
                                              R"(redlock\[[0-9]+\]: [^\n]+$)")))
      << m;
  EXPECT_NE(m.find("127.0.0.1"), std::string::npos) << m;
}

TEST_F(Syslog, TheEnvironmentChoosesTheFacility) {
  const Result r = run({"acquire", "deploy"}, {{"REDLOCK_URL", unreachable()}, {"REDLOCK_SYSLOG", "local3"}});
  EXPECT_EQ(r.status, 69);
  // local3 (19) * 8 + err (3).
  const std::string m = receive();
  EXPECT_EQ(m.rfind("<155>", 0), 0U) << m;
  const Result flag = run({"--syslog-facility", "daemon", "--log-format", "json", "acquire", "deploy"},
                          {{"REDLOCK_URL", unreachable()}});
  EXPECT_EQ(flag.status, 69);
  EXPECT_EQ(receive().rfind("<27>", 0), 0U) << "daemon (3) * 8 + err (3)";
  EXPECT_EQ(json_lines(flag.err).size(), 1U) << flag.err;
}

// A log line never decides when a lock is released: a syslog daemon that
// stopped reading (its socket's queue full) and a stderr pipe nobody reads
// cost the lines, not the command's end.
namespace {

// Fills the datagram socket at `path` (bound, never read) until a sender
// that has sent nothing yet is refused: the queue itself is full, not one
// sender's buffer.
void fill_datagram_queue(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  for (int senders = 0; senders < 1000; ++senders) {
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
    int sent = 0;
    while (send(fd, "x", 1, MSG_DONTWAIT) == 1) {
      ++sent;
    }
    const int err = errno;
    close(fd);
    ASSERT_TRUE(err == EAGAIN || err == EWOULDBLOCK) << std::strerror(err);
    if (sent == 0) {
      return;
    }
  }
  FAIL() << path << " never filled up";
}

// A loop that SIGTERM does not end: only --kill-after's SIGKILL does.
const std::vector<std::string> k_stubborn{"sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// redlock runs in a mount namespace of its own (unshare -m) whose /dev is a
// tmpfs with the few device nodes it needs, and whose /dev/log is the
// test's datagram socket, bound elsewhere, mounted there, filled and never
// read.
class StalledSyslog : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "a /dev of its own (mount, mknod) needs root";
    }
    m_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(m_fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path().c_str());
    ASSERT_EQ(bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
    fill_datagram_queue(socket_path());
  }
  void TearDown() override {
    if (m_fd >= 0) {
      close(m_fd);
    }
  }
  [[nodiscard]] std::string socket_path() const { return m_dir.path() + "/log"; }

  // redlock `args` in the namespace. A /dev that cannot be made fails the
  // test loudly (exit 90 and a line), never passes for want of a stall.
  [[nodiscard]] std::unique_ptr<Child> start(const std::vector<std::string>& args, const Env& env) const {
    const std::string script =
        "sock=$1; shift\n"
        "mount -t tmpfs -o mode=0755 stalled /dev && mknod -m 666 /dev/null c 1 3 && "
        "mknod -m 666 /dev/zero c 1 5 && mknod -m 666 /dev/random c 1 8 && mknod -m 666 /dev/urandom c 1 9 && "
        ": >/dev/log && mount --bind \"$sock\" /dev/log || { echo 'no private /dev with a stalled /dev/log' >&2; "
        "exit 90; }\n"
        "exec \"$RL\" \"$@\"\n";
    Env with = env;
    with["RL"] = redlock_binary();
    return std::make_unique<Child>(concat({"-m", "/bin/sh", "-c", script, "sh", socket_path()}, args), with, "unshare");
  }

 private:
  TempDir m_dir;
  int m_fd = -1;
};

TEST_F(StalledSyslog, MaxRuntimeStillEndsTheCommandOnTimeAndFreesTheLock) {
  RedisServer redis;
  const auto c = start(
      concat({"--syslog", "exec", "--ttl", "6s", "--max-runtime", "1s", "--kill-after", "1s", "job", "--"}, k_stubborn),
      {{"REDLOCK_URL", redis.url()}});
  const Result r = c->wait(Seconds(15));
  ASSERT_NE(r.status, 90) << r.err;
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_LT(r.seconds, 5.0) << "SIGTERM at 1 s, SIGKILL at 2 s: " << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
  // The lines syslog did not take are counted and said once, at the end.
  EXPECT_NE(r.err.find(" could not be sent to syslog at once and w"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-runtime"), std::string::npos) << "stderr keeps every line: " << r.err;
}

TEST_F(StalledSyslog, SigtermEndsExecAtOnceAndFreesTheLock) {
  // --warn-after's line is written while the command runs; the SIGTERM
  // comes once it is on stderr (which is written first), while the line
  // goes to syslog.
  RedisServer redis;
  const auto c =
      start({"--syslog", "exec", "--warn-after", "300ms", "job", "--", "sleep", "30"}, {{"REDLOCK_URL", redis.url()}});
  ASSERT_TRUE(eventually([&] { return c->err_so_far().find("--warn-after") != std::string::npos || !c->alive(); }))
      << c->err_so_far();
  ASSERT_TRUE(c->alive()) << c->err_so_far();
  ASSERT_TRUE(key_exists(redis, lock_key("job")));
  sleep_for(0.2);
  c->signal(SIGTERM);
  const double sent = now_seconds();
  const Result r = c->wait(Seconds(15));
  EXPECT_EQ(r.status, 143) << r.err;
  EXPECT_LT(now_seconds() - sent, 3.0) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST_F(StalledSyslog, ACommandNotFoundIs127AtOnce) {
  RedisServer redis;
  const Result r =
      start({"--syslog", "exec", "job", "--", "/nonexistent"}, {{"REDLOCK_URL", redis.url()}})->wait(Seconds(15));
  ASSERT_NE(r.status, 90) << r.err;
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_LT(r.seconds, 3.0) << r.err;
  EXPECT_NE(r.err.find("cannot run /nonexistent: command not found"), std::string::npos) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

// stderr a pipe whose reader never reads (a log collector that hung): its
// buffer full before redlock starts.
TEST(StalledStderr, MaxRuntimeStillEndsTheCommandOnTimeAndFreesTheLock) {
  RedisServer redis;
  TempDir dir;
  const std::string fifo = dir.path() + "/err";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // Held open for reading (and so writable without blocking) by the test.
  const int held = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(held, 0) << std::strerror(errno);
  const std::string page(4096, 'x');
  while (write(held, page.data(), page.size()) > 0) {
  }
  while (write(held, "x", 1) == 1) {
  }
  ASSERT_EQ(errno, EAGAIN);
  const Env env{{"REDLOCK_URL", redis.url()}, {"RL", redlock_binary()}};
  Child c(concat({"-c", "f=$1; shift; exec \"$RL\" \"$@\" 2>\"$f\"", "sh", fifo, "--log-format", "json", "exec",
                  "--max-runtime", "1s", "--kill-after", "1s", "job", "--"},
                 k_stubborn),
          env, "/bin/sh");
  const Result r = c.wait(Seconds(15));
  close(held);
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}
