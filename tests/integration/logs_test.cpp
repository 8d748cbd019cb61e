// Logs for log systems: --log-format json makes every line on stderr one
// JSON object; --syslog sends each line to syslog(3) as well, with its
// priority (received here on a socket of the test's own at /dev/log).

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
  EXPECT_NE(m.find(" redlock["), std::string::npos) << m;
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
