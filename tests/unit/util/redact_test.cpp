// What redlock records and prints never shows a secret: URL passwords with
// any characters, NAME=value settings and --password-style options. And the
// recorded command is valid UTF-8 of at most 64 bytes, cut between
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

// The known forms, one row each: a program's arguments as exec records
// them, and the same command line inside a script (sh -c '...').
struct FormRow {
  std::vector<std::string> argv;
  std::string recorded;  // redact_command(argv)
  std::string script;    // redact_secrets(argv as one line of shell words)
  std::string scripted;  // what it becomes
};

const std::vector<FormRow> k_known_forms = {
    // mysql and its family: -pSECRET (-p alone asks, the next word is the database)
    {{"mysql", "-uroot", "-pS3cr3t", "db"},
     "mysql -uroot -p*** db",
     "mysql -uroot -pS3cr3t db",
     "mysql -uroot -p*** db"},
    {{"/usr/bin/mysqldump", "-pS3cr3t", "db"},
     "/usr/bin/mysqldump -p*** db",
     "mysqldump -p'S3 cr3t' db",
     "mysqldump -p*** db"},
    {{"mariadb", "-p", "db"}, "mariadb -p db", "mariadb -p db", "mariadb -p db"},
    {{"sudo", "-u", "app", "mysql", "-pS3cr3t"},
     "sudo -u app mysql -p***",
     "sudo -u app mysql -pS3cr3t",
     "sudo -u app mysql -p***"},
    {{"mysql", "--password", "S3cr3t"}, "mysql --password ***", "MYSQL_PWD=S3cr3t mysql", "MYSQL_PWD=*** mysql"},
    // sshpass: -p SECRET and -pSECRET
    {{"sshpass", "-p", "S3cr3t", "ssh", "host"},
     "sshpass -p *** ssh host",
     "sshpass -p 'S3 cr3t' ssh host",
     "sshpass -p *** ssh host"},
    {{"sshpass", "-pS3cr3t", "ssh", "host"},
     "sshpass -p*** ssh host",
     "sshpass -pS3cr3t ssh host",
     "sshpass -p*** ssh host"},
    // curl: headers that carry a key or a token, user:password, cookies
    {{"curl", "-H", "X-Api-Key: S3cr3t", "https://h/"},
     "curl -H X-Api-Key: *** https://h/",
     "curl -H 'X-Api-Key: S3cr3t' https://h/",
     "curl -H 'X-Api-Key: ***' https://h/"},
    {{"curl", "-H", "Authorization: Bearer S3cr3t", "https://h/"},
     "curl -H Authorization: *** https://h/",
     "curl -H \"Authorization: Bearer S3cr3t\" https://h/",
     "curl -H \"Authorization: ***\" https://h/"},
    {{"curl", "--header=Authorization: Basic S3cr3t"},
     "curl --header=Authorization: ***",
     "curl --header='Authorization: Basic S3cr3t'",
     "curl --header='Authorization: ***'"},
    {{"curl", "-H", "Private-Token:S3cr3t", "-H", "Accept: text/plain"},
     "curl -H Private-Token:*** -H Accept: text/plain",
     "curl -H Private-Token:S3cr3t -H 'Accept: text/plain'",
     "curl -H Private-Token:*** -H 'Accept: text/plain'"},
    {{"curl", "-u", "bob:S3cr3t", "https://h/"},
     "curl -u bob:*** https://h/",
     "curl -ubob:S3cr3t https://h/",
     "curl -ubob:*** https://h/"},
    {{"curl", "--user=bob:S3cr3t"},
     "curl --user=bob:***",
     "curl --proxy-user 'bob:S3 cr3t'",
     "curl --proxy-user 'bob:***'"},
    {{"curl", "-u", "bob", "https://h/"}, "curl -u bob https://h/", "curl -u bob https://h/", "curl -u bob https://h/"},
    {{"curl", "-b", "sid=S3cr3t", "https://h/"},
     "curl -b *** https://h/",
     "curl --cookie 'sid=S3cr3t' https://h/",
     "curl --cookie *** https://h/"},
    {{"curl", "-E", "client.pem:S3cr3t", "https://h/"},
     "curl -E client.pem:*** https://h/",
     "curl --cert client.pem:S3cr3t https://h/",
     "curl --cert client.pem:*** https://h/"},
    {{"curl", "-d", "{\"password\": \"S3cr3t\", \"user\": \"bob\"}", "https://h/"},
     "curl -d {\"password\": *** https://h/",
     "curl -d '{\"password\":\"S3cr3t\"}' https://h/",
     "curl -d '{\"password\":***' https://h/"},
    {{"curl", "https://h/v1?api_key=S3cr3t&page=2"},
     "curl https://h/v1?api_key=***&page=2",
     "curl 'h/v1?page=2&access_token=S3cr3t'",
     "curl 'h/v1?page=2&access_token=***'"},
    {{"wget", "--header=X-Auth-Token: S3cr3t", "https://h/"},
     "wget --header=X-Auth-Token: *** https://h/",
     "wget --http-password=S3cr3t https://h/",
     "wget --http-password=*** https://h/"},
    // --token=…-style options of common tools, and settings
    {{"kubectl", "--token=S3cr3t", "get", "pods"},
     "kubectl --token=*** get pods",
     "gh --with-token S3cr3t",
     "gh --with-token ***"},
    {{"az", "login", "--client-secret", "S3cr3t"},
     "az login --client-secret ***",
     "vault login -method=userpass password=S3cr3t",
     "vault login -method=userpass password=***"},
    {{"npm", "--//registry.npmjs.org/:_authToken=S3cr3t", "publish"},
     "npm --//registry.npmjs.org/:_authToken=*** publish",
     "docker login --password-stdin",
     "docker login --password-stdin"},
    {{"git", "-c", "http.extraHeader=AUTHORIZATION: basic S3cr3t", "fetch"},
     "git -c http.extraHeader=AUTHORIZATION: *** fetch",
     "git -c 'http.extraHeader=AUTHORIZATION: basic S3cr3t' fetch",
     "git -c 'http.extraHeader=AUTHORIZATION: ***' fetch"},
    {{"mount", "-o", "username=bob,password=S3cr3t", "//h/s", "/mnt"},
     "mount -o username=bob,password=*** //h/s /mnt",
     "env CREDENTIALS=S3cr3t job",
     "env CREDENTIALS=*** job"},
    // other programs whose options do not say they carry a secret
    {{"mongosh", "-u", "bob", "-p", "S3cr3t"}, "mongosh -u bob -p ***", "mongodump -pS3cr3t", "mongodump -p***"},
    {{"ldapsearch", "-x", "-w", "S3cr3t"}, "ldapsearch -x -w ***", "ldapmodify -wS3cr3t", "ldapmodify -w***"},
    {{"sqlcmd", "-U", "sa", "-P", "S3cr3t"}, "sqlcmd -U sa -P ***", "bcp t out f -PS3cr3t", "bcp t out f -P***"},
    {{"smbclient", "-U", "bob%S3cr3t", "//h/s"},
     "smbclient -U bob%*** //h/s",
     "smbclient --user=bob%S3cr3t //h/s",
     "smbclient --user=bob%*** //h/s"},
    {{"lftp", "-u", "bob,S3cr3t", "h"}, "lftp -u bob,*** h", "lftp -u bob,S3cr3t h", "lftp -u bob,*** h"},
    {{"zip", "-P", "S3cr3t", "a.zip", "f"}, "zip -P *** a.zip f", "7z a -pS3cr3t a.7z f", "7z a -p*** a.7z f"},
    {{"openssl", "enc", "-k", "S3cr3t"},
     "openssl enc -k ***",
     "openssl enc -pass pass:S3cr3t",
     "openssl enc -pass ***"},
};

TEST(RedactCommand, HidesTheSecretsOfEveryKnownForm) {
  for (const auto& row : k_known_forms) {
    SCOPED_TRACE(row.recorded);
    EXPECT_EQ(redact_command(row.argv), row.recorded);
    EXPECT_EQ(redact_secrets(row.script), row.scripted);
    for (const auto& out :
         {redact_command(row.argv), redact_secrets(row.script), redact_command({"sh", "-c", row.script})}) {
      EXPECT_EQ(out.find("S3"), std::string::npos) << out;
    }
  }
}

TEST(RedactCommand, LeavesTheSameOptionsOfOtherProgramsAlone) {
  // -p is a port, a flag or a path elsewhere; host:port is no key and value.
  const std::vector<Row> rows = {
      {"mkdir -pv /srv/app", "mkdir -pv /srv/app"},
      {"ssh -p 2222 host", "ssh -p 2222 host"},
      {"redis-cli -p 6380 ping", "redis-cli -p 6380 ping"},
      {"cp -p a b", "cp -p a b"},
      {"git log -p -u", "git log -p -u"},
      {"curl http://keycloak:8080/health", "curl http://keycloak:8080/health"},
      {"curl -H 'Accept: application/json' http://h", "curl -H 'Accept: application/json' http://h"},
      {"docker run -v /keys:/keys img", "docker run -v /keys:/keys img"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.in);
    EXPECT_EQ(redact_secrets(row.in), row.out);
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

TEST(RecordedCommand, IsValidUtf8OfAtMost64BytesCutBetweenCharactersAndMarked) {
  // A value over 64 bytes takes the lock's hash out of Redis's compact
  // encoding: a lock of some 250 bytes became one of over 1,000.
  std::string euros;
  for (int i = 0; i < 40; ++i) {
    euros += "\xe2\x82\xac";  // 120 bytes; a cut at 61 bytes splits one or not, by what comes before
  }
  const std::string mark = "\xe2\x80\xa6";  // U+2026
  EXPECT_EQ(recorded_command({"sh", "-c", "x", "\xff\xfe"}), "sh -c x \xef\xbf\xbd\xef\xbf\xbd");
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"a", euros},
           {"ab", euros},
           {"abc", euros},
           {std::string(63, 'x'), "\xff"},
           {std::string(2000, '\x80')},
       }) {
    std::string out = recorded_command(argv);
    SCOPED_TRACE(escape_for_terminal(out));
    EXPECT_TRUE(is_valid_utf8(out));
    EXPECT_LE(out.size(), 64u);
    EXPECT_GE(out.size(), 62u);  // only the last, partial character is dropped
    ASSERT_GE(out.size(), mark.size());
    EXPECT_EQ(out.substr(out.size() - mark.size()), mark);
  }
  // 64 bytes are kept whole, 65 are cut to 61 and the mark.
  EXPECT_EQ(recorded_command({std::string(64, 'y')}), std::string(64, 'y'));
  EXPECT_EQ(recorded_command({std::string(65, 'y')}), std::string(61, 'y') + mark);
  // Secrets are hidden before the cut: no part of one is ever kept.
  EXPECT_EQ(recorded_command({"sh", "-c", "PASSWORD=x"}), "sh -c PASSWORD=***");
  EXPECT_EQ(recorded_command({std::string(50, 'z'), "--password", "hunter2hunter2hunter2"}),
            std::string(50, 'z') + " --password" + mark);
}
