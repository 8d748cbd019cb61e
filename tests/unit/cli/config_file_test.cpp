// The configuration file's lines (cli/setup/config_file.hpp): what is read, and
// the one line that names the file and line of what is wrong.

#include "cli/setup/config_file.hpp"

#include <gtest/gtest.h>

#include <string>

#include "util/exit_status.hpp"

namespace redlock::cli {
namespace {

TEST(ConfigFile, ReadsTheLongGlobalOptions) {
  const ConfigFile c = parse_config(
      "# the fleet's servers\n"
      "\n"
      "redis = redis://r1:6379,redis://r2:6379\n"
      "  redis=redis://r3:6379  \r\n"
      "prefix = jobs:\n"
      "password-file = /etc/redlock/password\n"
      "connect-timeout = 250ms\n"
      "timeout = 2s\n"
      "tls-ca = /etc/ssl/ca.pem\n"
      "tls-server-name = redis.internal\n"
      "insecure = no\n"
      "min-replicas = 1\n",
      "/etc/redlock.conf");
  EXPECT_EQ(c.path, "/etc/redlock.conf");
  ASSERT_EQ(c.redis.size(), 2u);
  EXPECT_EQ(c.redis[0], "redis://r1:6379,redis://r2:6379");
  EXPECT_EQ(c.redis[1], "redis://r3:6379");
  EXPECT_EQ(c.redis_line, 3);
  EXPECT_EQ(c.prefix, "jobs:");
  EXPECT_EQ(c.password_file, "/etc/redlock/password");
  EXPECT_EQ(c.connect_timeout, Millis(250));
  EXPECT_EQ(c.timeout, Millis(2000));
  EXPECT_EQ(c.tls_ca, "/etc/ssl/ca.pem");
  EXPECT_EQ(c.tls_server_name, "redis.internal");
  EXPECT_FALSE(c.insecure);
  EXPECT_EQ(c.min_replicas, 1);
}

// What editors and habits put in a file: a byte order mark before the first
// line, and a comment after a value (a '#' after a space or tab).
TEST(ConfigFile, ABomAndCommentsAfterAValueAreSkipped) {
  const ConfigFile c = parse_config(
      "\xEF\xBB\xBFredis = redis://r1:6379   # the fleet's server\n"
      "prefix = jobs#1:\t# a '#' inside a value stays\n"
      "timeout = 2s # seconds\n",
      "/etc/redlock.conf");
  ASSERT_EQ(c.redis.size(), 1u);
  EXPECT_EQ(c.redis[0], "redis://r1:6379");
  EXPECT_EQ(c.redis_line, 1);
  EXPECT_EQ(c.prefix, "jobs#1:");
  EXPECT_EQ(c.timeout, Millis(2000));
  EXPECT_THROW(parse_config("timeout = 2s#soon\n", "/etc/redlock.conf"), UsageError)
      << "no space before '#': part of the value";
}

TEST(ConfigFile, AnEmptyFileSetsNothing) {
  const ConfigFile c = parse_config("", "/dev/null");
  EXPECT_TRUE(c.redis.empty());
  EXPECT_FALSE(c.prefix);
  EXPECT_FALSE(c.timeout);
}

TEST(ConfigFile, ABadLineIsAUsageErrorNamingFileAndLine) {
  struct Row {
    const char* text;
    const char* said;
  };
  const Row rows[] = {
      {"# ok\nttl = 30s\n", "f.conf:2: unknown key 'ttl'"},
      {"redis\n", "f.conf:1: expected key = value"},
      {"\n\nprefix =\n", "f.conf:3: prefix has no value"},
      {"timeout = soon\n", "f.conf:1: "},
      {"timeout = 0\n", "f.conf:1: timeout must be at least 1ms"},
      {"min-replicas = -1\n", "f.conf:1: "},
      {"redis = http://x\n", "f.conf:1: "},
      {"redis = redis://:secret@r1:6379\n", "f.conf:1: a password may not be written in the configuration file"},
      {"password = secret\n", "f.conf:1: a password may not be written in the configuration file"},
      {"password-file = pw.txt\n", "f.conf:1: password-file must be an absolute path"},
      {"insecure = maybe\n", "f.conf:1: insecure is yes or no"},
      {"--redis = redis://r1\n", "f.conf:1: unknown key '--redis'"},
  };
  for (const auto& row : rows) {
    try {
      (void)parse_config(row.text, "f.conf");
      ADD_FAILURE() << "accepted: " << row.text;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(row.said, 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace redlock::cli
