// The configuration file, from the outside: where it is found, what it
// sets, that flags beat the environment which beats it, and that a bad line
// is 64 naming the file and line before any traffic.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "harness.hpp"

using namespace redlock::test;

namespace {

std::string write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

bool one_line(const std::string& err) {
  return std::count(err.begin(), err.end(), '\n') == 1 && err.rfind("redlock: ", 0) == 0;
}

bool holds(const RedisServer& redis, const std::string& key) {
  return redis.cmd({"EXISTS", key}).integer == 1;
}

}  // namespace

TEST(ConfigFileCli, TheFileNamesTheServersAndPrefix) {
  RedisServer redis;
  TempDir dir;
  const std::string conf =
      write_file(dir.path() + "/redlock.conf", "# fleet\nredis = " + redis.url() + "\nprefix = jobs:\ntimeout = 2s\n");
  Result r = run({"-v", "acquire", "--ttl", "1m", "nightly"}, {{"REDLOCK_CONFIG", conf}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(holds(redis, "jobs:{nightly}"));
  EXPECT_NE(r.err.find("servers: " + redis.url() + " (from " + conf + ":2)"), std::string::npos) << r.err;
  // status's "no locks" line names the server in use.
  Result st = run({"status"}, {{"REDLOCK_CONFIG", conf}, {"REDLOCK_PREFIX", "other:"}});
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.err.find("no locks under the prefix 'other:' on " + redis.url()), std::string::npos) << st.err;
}

TEST(ConfigFileCli, FlagsBeatTheEnvironmentWhichBeatsTheFile) {
  RedisServer from_file, from_env, from_flag;
  TempDir dir;
  const std::string conf = write_file(dir.path() + "/c", "redis = " + from_file.url() + "\nprefix = file:\n");
  const Env env{{"REDLOCK_CONFIG", conf}, {"REDLOCK_URL", from_env.url()}};
  ASSERT_EQ(run({"acquire", "a"}, env).status, 0);
  EXPECT_TRUE(holds(from_env, "file:{a}"));
  EXPECT_FALSE(holds(from_file, "file:{a}"));
  ASSERT_EQ(run({"-r", from_flag.url(), "--prefix", "flag:", "acquire", "b"}, env).status, 0);
  EXPECT_TRUE(holds(from_flag, "flag:{b}"));
  Env prefixed = env;
  prefixed["REDLOCK_PREFIX"] = "env:";
  ASSERT_EQ(run({"acquire", "c"}, prefixed).status, 0);
  EXPECT_TRUE(holds(from_env, "env:{c}"));
}

TEST(ConfigFileCli, TheUsersFileIsReadWhenNoneIsNamed) {
  RedisServer redis;
  TempDir home;
  ASSERT_EQ(mkdir((home.path() + "/.config").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((home.path() + "/.config/redlock").c_str(), 0755), 0);
  write_file(home.path() + "/.config/redlock/config", "redis = " + redis.url() + "\n");
  ASSERT_EQ(run({"acquire", "x"}, {{"HOME", home.path()}, {"XDG_CONFIG_HOME", ""}}).status, 0);
  EXPECT_TRUE(holds(redis, "redlock:{x}"));
}

TEST(ConfigFileCli, APasswordFileNamedThereIsRead) {
  RedisServer redis(RedisServer::Options{.requirepass = "s3cret-pw"});
  TempDir dir;
  const std::string pw = write_file(dir.path() + "/pw", "s3cret-pw\n", 0600);
  const std::string conf = write_file(dir.path() + "/c", "redis = " + redis.url() + "\npassword-file = " + pw + "\n");
  Result r = run({"acquire", "x"}, {{"REDLOCK_CONFIG", conf}});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(ConfigFileCli, ABadLineIs64NamingFileAndLineBeforeAnyTraffic) {
  RedisServer redis;
  TempDir dir;
  const long long before = redis.commands_run();
  struct Case {
    std::string text;
    std::string said;
  };
  const Case cases[] = {
      {"redis = " + redis.url() + "\nttl = 30s\n", ":2: unknown key 'ttl'"},
      {"redis = " + redis.url() + "\n\ntimeout = soon\n", ":3: "},
      {"redis = redis://:hunter2-pw@127.0.0.1:1\n", ":1: a password may not be written"},
      {"redis = " + redis.url() + "\nlog-format = xml\n", ":2: "},
      {"syslog = maybe\n", ":1: syslog is yes or no"},
      {"syslog-facility = nowhere\n", ":1: "},
  };
  for (const auto& c : cases) {
    const std::string conf = write_file(dir.path() + "/bad.conf", c.text);
    Result r = run({"acquire", "x"}, {{"REDLOCK_CONFIG", conf}});
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(conf + c.said), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
  }
  Result missing = run({"status"}, {{"REDLOCK_CONFIG", dir.path() + "/none"}});
  EXPECT_EQ(missing.status, 64) << missing.err;
  EXPECT_NE(missing.err.find(dir.path() + "/none"), std::string::npos) << missing.err;
  EXPECT_EQ(redis.commands_run(), before);
}

TEST(ConfigFileCli, TheLogKeysSayWhereLinesGoUnderTheEnvironmentAndFlags) {
  RedisServer redis;
  TempDir dir;
  const std::string conf =
      write_file(dir.path() + "/c", "redis = " + redis.url() + "\nlog-format = json\nsyslog = no\n");
  ASSERT_EQ(run({"acquire", "--ttl", "1m", "held"}, {{"REDLOCK_CONFIG", conf}}).status, 0);
  // A busy line, as the file asks: JSON.
  Result json = run({"acquire", "held"}, {{"REDLOCK_CONFIG", conf}});
  EXPECT_EQ(json.status, 75) << json.err;
  EXPECT_EQ(json.err.rfind("{\"time\":", 0), 0) << json.err;
  EXPECT_NE(json.err.find("\"level\":"), std::string::npos) << json.err;
  // The environment beats the file, a flag beats both.
  Result env = run({"acquire", "held"}, {{"REDLOCK_CONFIG", conf}, {"REDLOCK_LOG_FORMAT", "text"}});
  EXPECT_EQ(env.status, 75);
  EXPECT_EQ(env.err.rfind("redlock: ", 0), 0) << env.err;
  Result flag = run({"--log-format", "text", "acquire", "held"}, {{"REDLOCK_CONFIG", conf}});
  EXPECT_EQ(flag.status, 75);
  EXPECT_EQ(flag.err.rfind("redlock: ", 0), 0) << flag.err;
  // A usage error is written as the file asks too.
  Result usage = run({"acquire", "held", "--ttl", "soon"}, {{"REDLOCK_CONFIG", conf}});
  EXPECT_EQ(usage.status, 64);
  EXPECT_EQ(usage.err.rfind("{\"time\":", 0), 0) << usage.err;
}

// Read once a call: a FIFO gives its text to the first open only (a second
// would wait for a writer that never comes), as a file read three times a
// call used to.
TEST(ConfigFileCli, TheFileIsReadOnceACall) {
  RedisServer redis;
  TempDir dir;
  const std::string fifo = dir.path() + "/redlock.conf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  std::thread writer([&] {
    const std::string text = "redis = " + redis.url() + "\nprefix = jobs:\n";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int fd = -1;
    while ((fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // until redlock opens it to read
    }
    if (fd >= 0) {
      (void)!write(fd, text.data(), text.size());
      close(fd);
    }
  });
  Result r = run({"acquire", "--ttl", "1m", "nightly"}, {{"REDLOCK_CONFIG", fifo}}, Seconds(10));
  writer.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(holds(redis, "jobs:{nightly}"));
}

// A server that cannot be reached: the line says where its URL came from,
// so that the fix is made where it was named.
TEST(ConfigFileCli, AnUnreachableServerIsNamedWithWhereItsUrlCameFrom) {
  TempDir dir;
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port());
  const std::string conf = write_file(dir.path() + "/redlock.conf", "# fleet\nredis = " + url + "\n");
  Result from_file = run({"status"}, {{"REDLOCK_CONFIG", conf}});
  EXPECT_EQ(from_file.status, 69) << from_file.err;
  EXPECT_NE(from_file.err.find("the URL came from " + conf + ":2"), std::string::npos) << from_file.err;
  Result from_env = run({"status"}, {{"REDLOCK_CONFIG", conf}, {"REDLOCK_URL", url}});
  EXPECT_EQ(from_env.status, 69) << from_env.err;
  EXPECT_NE(from_env.err.find("the URL came from $REDLOCK_URL"), std::string::npos) << from_env.err;
  Result from_flag = run({"-r", url, "status"}, {{"REDLOCK_CONFIG", conf}});
  EXPECT_NE(from_flag.err.find("the URL came from --redis"), std::string::npos) << from_flag.err;
  EXPECT_TRUE(one_line(from_flag.err)) << from_flag.err;
}
