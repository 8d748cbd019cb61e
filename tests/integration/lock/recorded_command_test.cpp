// What redlock stores about a holder (its command line) and prints about
// it: never a password, always valid UTF-8 that `status` can read back.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

const std::string k_secret = "S3cr3t-pw";

RedisServer::Options with_password(const std::string& password) {
  RedisServer::Options o;
  o.requirepass = password;
  return o;
}

// Every field and value of the lock's hash, one string.
std::string lock_hash(const RedisServer& redis, const std::string& name) {
  std::string all;
  for (const auto& e : redis.cmd({"HGETALL", lock_key(name)}).elements) {
    all += e.str + "\n";
  }
  return all;
}

void expect_hidden(const std::string& text, const std::string& secret) {
  EXPECT_EQ(text.find(secret), std::string::npos) << text;
}

}  // namespace

TEST(RecordedCommand, APasswordSetForRedlockInTheCallersShellIsNotRecorded) {
  // sh -c "REDLOCK_PASSWORD=… redlock acquire x": acquire records its
  // caller's command line, the shell's, with the assignment in it.
  RedisServer redis(with_password(k_secret));
  Child sh({"-c", "REDLOCK_PASSWORD=" + k_secret + " \"$RL\" acquire --ttl 30s held; exit $?"},
           {{"RL", redlock_binary()}, {"REDLOCK_URL", redis.url()}}, "sh");
  Result r = sh.wait(Seconds(20));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string hash = lock_hash(redis, "held");
  EXPECT_NE(hash.find("REDLOCK_PASSWORD=***"), std::string::npos) << hash;
  expect_hidden(hash, k_secret);

  Env env{{"REDLOCK_URL", redis.url()}, {"REDLOCK_PASSWORD", k_secret}};
  for (auto args :
       std::vector<std::vector<std::string>>{{"status", "held"}, {"status", "held", "--json"}, {"status"}}) {
    Result s = run(args, env);
    EXPECT_EQ(s.status, 0) << s.err;
    EXPECT_NE(s.out.find("held"), std::string::npos) << s.out;
    expect_hidden(s.out + s.err, k_secret);
  }
}

TEST(RecordedCommand, AUrlPasswordWithQuotesIsNotRecorded) {
  const std::string password = "it's\"quoted\"";
  RedisServer redis(with_password(password));
  const std::string url = "redis://:" + password + "@127.0.0.1:" + std::to_string(redis.port());
  // The shell's own arguments hold the URL: sh -c '"$RL" "$@"' sh -r URL acquire …
  Child sh({"-c", "\"$RL\" \"$@\"; exit $?", "sh", "-r", url, "acquire", "--ttl", "30s", "q"},
           {{"RL", redlock_binary()}}, "sh");
  Result r = sh.wait(Seconds(20));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string hash = lock_hash(redis, "q");
  EXPECT_NE(hash.find("redis://:***@127.0.0.1"), std::string::npos) << hash;
  for (const char* piece : {"it's", "quoted"}) {
    expect_hidden(hash, piece);
  }
  Result s = run({"-r", url, "status", "q", "--json"});
  EXPECT_EQ(s.status, 0) << s.err;
  for (const char* piece : {"it's", "quoted"}) {
    expect_hidden(s.out + s.err, piece);
  }
}

TEST(RecordedCommand, ExecRecordsItsCommandWithoutPasswordOptionsOrSettings) {
  RedisServer redis;
  // The secrets come early: only the first 64 bytes of a command are kept.
  Child holder({"exec", "--ttl", "30s", "job", "--", "sh", "-c", "sleep 60", "-a", "hunter2", "redis://u:hunter6@h",
                "--password", "hunter3", "API_KEY=hunter5", "--token=hunter4"},
               {{"REDLOCK_URL", redis.url()}});
  ASSERT_TRUE(eventually([&] { return !lock_hash(redis, "job").empty(); }, Seconds(10))) << holder.err_so_far();
  const std::string hash = lock_hash(redis, "job");
  Result s = run({"status", "job"}, {{"REDLOCK_URL", redis.url()}});
  holder.signal(SIGTERM);
  Result done = holder.wait(Seconds(20));
  EXPECT_EQ(done.signal, SIGTERM) << done.err;
  EXPECT_EQ(s.status, 0) << s.err;
  for (const char* secret : {"hunter2", "hunter3", "hunter4", "hunter5", "hunter6"}) {
    expect_hidden(hash, secret);
    expect_hidden(s.out + s.err, secret);
  }
  EXPECT_NE(hash.find("\nsh -c sleep 60 -a *** redis://u:***@h --password *** API_KEY=\xe2\x80\xa6\n"),
            std::string::npos)
      << hash;
}

TEST(RecordedCommand, StatusReadsHoldersWhoseCommandsAreNotUtf8OrCutMidCharacter) {
  // Semaphore holders are stored as JSON; a command with bytes that are not
  // UTF-8, or cut at 64 bytes in the middle of a character, made status
  // call the whole lock foreign (76). The odd bytes open each script, so
  // that they fall within what is kept.
  RedisServer redis;
  TempDir dir;
  std::string euros;
  for (int i = 0; i < 40; ++i) {
    euros += "\xe2\x82\xac";
  }
  const std::string script = "; touch \"$1\"; while [ ! -e \"$1.stop\" ]; do sleep 0.05; done";
  std::vector<std::unique_ptr<Child>> holders;
  std::vector<std::string> flags;
  int n = 0;
  for (const std::string& odd : {std::string("\xff\xfe"), euros, "x" + euros}) {
    const std::string flag = dir.path() + "/h" + std::to_string(n++);
    flags.push_back(flag);
    holders.push_back(
        std::make_unique<Child>(std::vector<std::string>{"exec", "--limit", "5", "--ttl", "30s", "sem", "--", "sh",
                                                         "-c", ": " + odd + script, "sh", flag},
                                Env{{"REDLOCK_URL", redis.url()}}));
  }
  for (const auto& flag : flags) {
    ASSERT_TRUE(eventually([&] { return file_exists(flag); }, Seconds(10)));
  }
  Env env{{"REDLOCK_URL", redis.url()}};
  Result table = run({"status", "sem"}, env);
  Result json = run({"status", "sem", "--json"}, env);
  Result all = run({"status"}, env);
  for (const auto& flag : flags) {
    write_file(flag + ".stop", "");
  }
  for (auto& h : holders) {
    Result done = h->wait(Seconds(20));
    EXPECT_EQ(done.status, 0) << done.err;
  }
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_NE(json.out.find("\xef\xbf\xbd"), std::string::npos) << json.out;  // U+FFFD for \xff
}

TEST(RecordedCommand, TheBusyLineCutsALongCommandBetweenCharacters) {
  // The busy line shows the first 57 bytes of the holder's command; cut in
  // the middle of a character, the rest showed up as a hex escape ("\xc3").
  RedisServer redis;
  TempDir dir;
  const std::string flag = dir.path() + "/held";
  // "sh -c : " and a pad put an "é" (two bytes) across byte 57.
  const std::string pad(56 - std::string("sh -c : ").size(), 'a');
  const std::string script =
      ": " + pad + "\xc3\xa9\xc3\xa9; touch \"$1\"; while [ ! -e \"$1.stop\" ]; do sleep 0.05; done";
  Child holder({"exec", "--ttl", "30s", "cut", "--", "sh", "-c", script, "sh", flag},
               Env{{"REDLOCK_URL", redis.url()}});
  ASSERT_TRUE(eventually([&] { return file_exists(flag); }, Seconds(10)));
  Result busy = run({"acquire", "cut"}, Env{{"REDLOCK_URL", redis.url()}});
  write_file(flag + ".stop", "");
  EXPECT_EQ(holder.wait(Seconds(20)).status, 0);
  EXPECT_EQ(busy.status, 75) << busy.err;
  EXPECT_NE(busy.err.find(pad + "...)"), std::string::npos) << busy.err;
  EXPECT_EQ(busy.err.find("\\x"), std::string::npos) << busy.err;
}
