// What redlock records and prints never shows a secret: URL passwords with
// any characters, NAME=value settings and --password-style options. And the
// recorded command is valid UTF-8 of at most 1024 bytes, cut between
// characters (status reads it back as JSON).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/text.hpp"

using redlock::escape_for_terminal;
using redlock::is_valid_utf8;
using redlock::make_valid_utf8;
using redlock::recorded_command;
using redlock::redact_command;
using redlock::redact_secrets;
using redlock::redact_url_passwords;
using redlock::truncate_utf8;

namespace {

struct Row {
  std::string in;
  std::string out;
};

}  // namespace

TEST(RedactUrlPasswords, HidesEveryUrlPasswordWhateverItHolds) {
  const std::vector<Row> rows = {
      {"redlock -r redis://:s3cret@h:6379 acquire x", "redlock -r redis://:***@h:6379 acquire x"},
      {"a rediss://bob:p@ss@h/2 b unix:///tmp/s.sock redis://pw@h",
       "a rediss://bob:***@h/2 b unix:///tmp/s.sock redis://***@h"},
      {"redis+sentinel://:x@s1,s2/m", "redis+sentinel://:***@s1,s2/m"},
      {"redis://:it's@h", "redis://:***@h"},
      {"redis://:say\"hi\"@h", "redis://:***@h"},
      {"redis://:two words@h x", "redis://:***@h x"},
      {"redis://:a/b@h/0", "redis://:***@h/0"},
      {"redis://u:p'1@h,redis://v:p\"2@k", "redis://u:***@h,redis://v:***@k"},
      {"redis://h:6379 acquire x", "redis://h:6379 acquire x"},
      {"unix:///tmp/redis.sock?db=1", "unix:///tmp/redis.sock?db=1"},
      {"redis+sentinel://s1,s2/m?sentinel_password=hunter2", "redis+sentinel://s1,s2/m?sentinel_password=***"},
      {"redis+sentinel://s/m?sentinel_password=two words", "redis+sentinel://s/m?sentinel_password=***"},
      {"redis+sentinel://:pw@s1/m/2?sentinel_password=p@ss,redis://h",
       "redis+sentinel://:***@s1/m/2?sentinel_password=***,redis://h"},
      {"redis+sentinel://s/m?sentinel_password=a%26b&sentinel_password=c'd'",
       "redis+sentinel://s/m?sentinel_password=***&sentinel_password=***"},
      {"'redis+sentinel://s/m?Sentinel_Password=x'", "'redis+sentinel://s/m?Sentinel_Password=***"},
      {"", ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.in);
    EXPECT_EQ(redact_url_passwords(row.in), row.out);
  }
}

TEST(RedactSecrets, HidesSecretSettingsAndOptionValuesInAScript) {
  const std::vector<Row> rows = {
      {"REDLOCK_PASSWORD=S3cr3t redlock acquire x", "REDLOCK_PASSWORD=*** redlock acquire x"},
      {"PGPASSWORD='a b c' psql", "PGPASSWORD=*** psql"},
      {"export API_TOKEN=\"x y\"; run", "export API_TOKEN=*** run"},
      {"aws_secret_access_key=abc env", "aws_secret_access_key=*** env"},
      {"Db_Pass=x ./job", "Db_Pass=*** ./job"},
      {"SSH_KEY=k ./job", "SSH_KEY=*** ./job"},
      {"redis-cli -a hunter2 ping", "redis-cli -a *** ping"},
      {"redis-cli --pass hunter2 ping", "redis-cli --pass *** ping"},
      {"redis-server --requirepass 'p w' --port 1", "redis-server --requirepass *** --port 1"},
      {"tool --password=hunter2 run", "tool --password=*** run"},
      {"redis-cli --no-auth-warning -a hunter2 ping", "redis-cli --no-auth-warning *** *** ping"},
      {"run -r redis://:pw@h x", "run -r redis://:***@h x"},
      {"NAME=value other=1 ./job a=b", "NAME=value other=1 ./job a=b"},
      {"ls -l /tmp", "ls -l /tmp"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.in);
    EXPECT_EQ(redact_secrets(row.in), row.out);
  }
}

TEST(RedactCommand, HidesWholeArgumentsAfterSecretOptionsAndAssignments) {
  struct CommandRow {
    std::vector<std::string> argv;
    std::string out;
  };
  const std::vector<CommandRow> rows = {
      // A NAME=value argument may hold spaces (env "SECRET=a b" job): all of it is hidden.
      {{"sh", "-c", "REDLOCK_PASSWORD=S3cr3t redlock acquire x"}, "sh -c REDLOCK_PASSWORD=***"},
      {{"sh", "-c", "cd /srv && REDLOCK_PASSWORD=S3cr3t redlock acquire x"},
       "sh -c cd /srv && REDLOCK_PASSWORD=*** redlock acquire x"},
      {{"redis-cli", "-a", "two words", "ping"}, "redis-cli -a *** ping"},
      {{"redis-cli", "--password", "p'q\"r", "ping"}, "redis-cli --password *** ping"},
      {{"env", "SECRET=with space", "job"}, "env SECRET=*** job"},
      {{"job", "--token=abc def"}, "job --token=***"},
      {{"redlock", "-r", "redis://:it's a secret@h", "acquire", "x"}, "redlock -r redis://:***@h acquire x"},
      {{"job", "[1,2]", "plain"}, "job [1,2] plain"},
      {{"exec", "x", "--", "-", "---", "--="}, "exec x -- - --- --="},
      {{}, ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.out);
    EXPECT_EQ(redact_command(row.argv), row.out);
  }
}

TEST(RedactCommand, NeverLeavesAnyPieceOfThePassword) {
  const std::string pw = "Pa$$ 'w\"0rd/@x";
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"redlock", "-r", "redis://:" + pw + "@h", "status"},
           {"redlock", "-r", "redis://user:" + pw + "@h:1/0", "status"},
           {"redis-cli", "-a", pw},
           {"redis-cli", "--pass", pw},
           {"x", "--password=" + pw},
           {"env", "REDIS_PASSWORD=" + pw, "x"},
           {"redlock", "-r", "redis+sentinel://s1,s2/m?sentinel_password=" + pw, "status"},
           {"redlock", "-r", "redis+sentinel://u:" + pw + "@s1/m?sentinel_password=" + pw, "status"},
       }) {
    std::string out = redact_command(argv);
    SCOPED_TRACE(out);
    for (const std::string& piece : {std::string("Pa$$"), std::string("0rd"), std::string("'w")}) {
      EXPECT_EQ(out.find(piece), std::string::npos);
    }
  }
}

TEST(MakeValidUtf8, ReplacesEachInvalidByteWithTheReplacementCharacter) {
  EXPECT_EQ(make_valid_utf8("ok"), "ok");
  EXPECT_EQ(make_valid_utf8("a\xff"
                            "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(make_valid_utf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(make_valid_utf8("\xe2\x82\xac"), "\xe2\x82\xac");
  EXPECT_TRUE(is_valid_utf8(make_valid_utf8("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80")));
}

TEST(TruncateUtf8, CutsBetweenCharacters) {
  EXPECT_EQ(truncate_utf8("abc", 5), "abc");
  EXPECT_EQ(truncate_utf8("abc", 2), "ab");
  EXPECT_EQ(truncate_utf8("a\xe2\x82\xac", 3), "a");  // the euro sign would need 4
  EXPECT_EQ(truncate_utf8("a\xe2\x82\xac", 4), "a\xe2\x82\xac");
  EXPECT_EQ(truncate_utf8("\xf0\x9f\x92\xa1", 3), "");
}

TEST(RecordedCommand, IsValidUtf8OfAtMost1024BytesCutBetweenCharacters) {
  std::string euros;
  for (int i = 0; i < 400; ++i) {
    euros += "\xe2\x82\xac";  // 1200 bytes; a cut at 1024 would split one
  }
  EXPECT_EQ(recorded_command({"sh", "-c", "x", "\xff\xfe"}), "sh -c x \xef\xbf\xbd\xef\xbf\xbd");
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"a", euros},
           {"ab", euros},
           {std::string(1023, 'x'), "\xff"},
           {std::string(2000, '\x80')},
       }) {
    std::string out = recorded_command(argv);
    SCOPED_TRACE(escape_for_terminal(out.substr(0, 40)));
    EXPECT_TRUE(is_valid_utf8(out));
    EXPECT_LE(out.size(), 1024u);
    EXPECT_GE(out.size(), 1021u);  // only the last, partial character is dropped
  }
  EXPECT_EQ(recorded_command({"sh", "-c", "PASSWORD=x"}), "sh -c PASSWORD=***");
}
