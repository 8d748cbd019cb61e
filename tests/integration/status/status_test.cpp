// status on one real redis-server: the table, JSON, exit codes, listing under
// a prefix, escaping, and passwords never shown.

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

class Status : public WithRedis {};
class Prefix : public WithRedis {};

}  // namespace

// ---------------------------------------------------------------- status

TEST_F(Status, TableHasAHeaderAndOneRowPerLock) {
  Result a = rl({"acquire", "tbl", "--ttl", "60s", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  const long long fence = json::parse(a.out)["fence"];
  Result s = rl({"status"});
  ASSERT_EQ(s.status, 0) << s.err;
  auto lines = split_lines(s.out);
  ASSERT_EQ(lines.size(), 2u) << s.out;
  auto header = words(lines[0]);
  auto row = words(lines[1]);
  auto column = [&](const std::string& name) -> std::string {
    auto at = std::find(header.begin(), header.end(), name);
    if (at == header.end() || static_cast<size_t>(at - header.begin()) >= row.size()) {
      ADD_FAILURE() << "no column " << name << " in " << s.out;
      return {};
    }
    return row[static_cast<size_t>(at - header.begin())];
  };
  EXPECT_EQ(column("NAME"), "tbl");
  EXPECT_EQ(column("HOST"), this_host());
  EXPECT_EQ(column("PID"), std::to_string(getpid()));
  EXPECT_EQ(column("FENCE"), std::to_string(fence));
  EXPECT_EQ(column("COUNT"), "1");
  EXPECT_NE(column("TTL"), "");
  EXPECT_NE(std::find(header.begin(), header.end(), "AGE"), header.end());
  EXPECT_NE(std::find(header.begin(), header.end(), "COMMAND"), header.end());
}

TEST_F(Status, JsonDescribesTheHolder) {
  Result a = rl({"acquire", "sj", "--ttl", "60s", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  const long long fence = json::parse(a.out)["fence"];
  Result s = rl({"status", "sj", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "sj");
  EXPECT_EQ(j[0]["held"], true);
  EXPECT_EQ(j[0]["fence"], fence);
  EXPECT_EQ(j[0]["host"], this_host());
  EXPECT_EQ(j[0]["pid"], getpid());
  EXPECT_EQ(j[0]["count"], 1);
  ASSERT_TRUE(j[0]["ttl_ms"].is_number_integer());
  long long ttl = j[0]["ttl_ms"];
  EXPECT_GT(ttl, 50'000);
  EXPECT_LE(ttl, 60'000);
}

TEST_F(Status, OfANamedLockExits0WhenHeldAnd1WhenFree) {
  take("held");
  EXPECT_EQ(rl({"status", "held"}).status, 0);
  Result free = rl({"status", "free", "--json"});
  EXPECT_EQ(free.status, 1);
  json j = json::parse(free.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["held"], false);
  EXPECT_EQ(rl({"status", "held", "free"}).status, 1);
  EXPECT_EQ(rl({"status", "free"}).status, 1);
}

TEST_F(Status, ThatExits1SaysWhichLocksAreFreeInOneLine) {
  // Every non-zero exit is explained in one line, status's 1 too.
  take("held");
  Result one = rl({"status", "held", "free"});
  EXPECT_EQ(one.status, 1);
  EXPECT_EQ(one.err, "redlock: free is not held\n");
  for (const char* format : {"json", "prometheus", "table"}) {
    Result two = rl({"status", "--format", format, "a", "held", "b"});
    EXPECT_EQ(two.status, 1) << format;
    EXPECT_EQ(two.err, "redlock: a and b are not held\n") << format;
  }
  Result held = rl({"status", "held"});
  EXPECT_EQ(held.status, 0);
  EXPECT_EQ(held.err, "");
}

TEST_F(Status, ANameGivenTwiceIsOneLock) {
  take("held");
  Result r = rl({"status", "--json", "held", "free", "held"});
  EXPECT_EQ(r.status, 1) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j.size(), 2u) << r.out;
  EXPECT_EQ(j[0]["name"], "held");
  EXPECT_EQ(j[1]["name"], "free");
}

TEST_F(Status, WithoutNamesListsEveryLockUnderThePrefixAndNothingElse) {
  for (const char* name : {"b", "a", "c/d", "ünï"}) {
    take(name);
  }
  redis.cmd({"HSET", "other:{z}", "token", "t", "count", "1"});  // another prefix
  redis.cmd({"SET", "redlock:unbraced", "x"});
  Result s = rl({"status", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  std::vector<std::string> names;
  for (const auto& l : json::parse(s.out)) {
    names.push_back(l["name"]);
    EXPECT_EQ(l["held"], true);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c/d", "ünï"}));
  EXPECT_EQ(redis.calls("keys"), 0) << "status must never run KEYS";
  EXPECT_EQ(redis.calls("scan"), 0) << "the index of held locks lists them";
  EXPECT_GT(redis.calls("zscan"), 0);
  // --scan finds the same locks by SCAN too.
  Result scanned = rl({"status", "--json", "--scan"});
  ASSERT_EQ(scanned.status, 0) << scanned.err;
  std::vector<std::string> scanned_names;
  for (const auto& l : json::parse(scanned.out)) {
    scanned_names.push_back(l["name"]);
  }
  EXPECT_EQ(scanned_names, names);
  EXPECT_GT(redis.calls("scan"), 0);
  EXPECT_EQ(redis.calls("keys"), 0) << "status must SCAN, never KEYS";
}

TEST_F(Status, WithoutNamesAndNoLocksPrintsAnEmptyList) {
  take("gone");
  Result s0 = rl({"status"});
  ASSERT_EQ(split_lines(s0.out).size(), 2u) << s0.out;
  redis.cmd({"DEL", key("gone")});
  Result s = rl({"status", "--json"});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(json::parse(s.out), json::array());
}

TEST_F(Status, PrintsStoredTextEscaped) {
  // A lock hash with our fields but hostile text in them (written by a
  // redlock on a host with a strange name, or by hand).
  redis.cmd({"HSET",     key("evil"), "schema", "redlock/1",
             "token",    "t",         "count",  "1",
             "fence",    "1",         "host",   "h\x1b]0;owned\x07",
             "pid",      "1",         "cmd",    "rm\x1b[2J -rf\n/",
             "since_ms", "0",         "ttl_ms", "60000"});
  redis.cmd({"PEXPIRE", key("evil"), "60000"});
  Result s = rl({"status"});
  ASSERT_EQ(s.status, 0) << s.err;
  for (char c : s.out) {
    auto u = static_cast<unsigned char>(c);
    EXPECT_FALSE((u < 0x20 && c != '\n') || u == 0x7f) << "control byte " << int(u) << " in " << s.out;
  }
  EXPECT_EQ(split_lines(s.out).size(), 2u) << s.out;
  EXPECT_NE(s.out.find("\\x1b"), std::string::npos) << s.out;
}

TEST_F(Status, ShowsInvisibleAndBidirectionalCharactersByNumber) {
  // U+202E (right-to-left override) turned the rest of a row around, and
  // "deploy" + U+200B (zero width space) read as "deploy": names the check
  // accepts, so they are shown by number wherever they reach a terminal.
  const std::string rlo = "\xe2\x80\xae", zwsp = "\xe2\x80\x8b", line_separator = "\xe2\x80\xa8";
  const std::string turned = "a" + rlo + "b", twin = "deploy" + zwsp;
  ASSERT_EQ(rl({"acquire", "--ttl", "60s", turned}).status, 0);
  ASSERT_EQ(rl({"acquire", "--ttl", "60s", twin}).status, 0);
  redis.cmd({"HSET", key(twin), "cmd", "job" + line_separator + "rest"});
  const auto expect_shown_by_number = [&](const std::string& text) {
    for (const std::string& raw : {rlo, zwsp, line_separator}) {
      EXPECT_EQ(text.find(raw), std::string::npos) << text;
    }
  };
  Result s = rl({"status"});
  ASSERT_EQ(s.status, 0) << s.err;
  expect_shown_by_number(s.out);
  EXPECT_NE(s.out.find("a\\u202eb "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("deploy\\u200b "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("job\\u2028rest"), std::string::npos) << s.out;
  // The busy line and break's line say the name the same way.
  Result busy = rl({"acquire", turned});
  EXPECT_EQ(busy.status, 75);
  expect_shown_by_number(busy.err);
  EXPECT_NE(busy.err.find("a\\u202eb is held"), std::string::npos) << busy.err;
  Result broke = rl({"break", twin});
  EXPECT_EQ(broke.status, 0) << broke.err;
  expect_shown_by_number(broke.out);
  EXPECT_EQ(broke.out.find("broke deploy\\u200b: "), 0u) << broke.out;
  EXPECT_NE(broke.out.find("(job\\u2028rest)"), std::string::npos) << broke.out;
  // JSON is read by programs: the name as it is, in valid UTF-8.
  Result j = rl({"status", "--json", turned});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)[0]["name"], turned);
}

TEST_F(Status, ReadsAndBreaksASemaphoreOfTwoThousandHolders) {
  // The largest replies redlock reads are bounded (redis/reply.hpp): two
  // thousand holders, most with 1000-byte commands, stay within them.
  take("pool", {"--limit", "5000", "--ttl", "60s"});
  const long long now_ms = redis.time_us() / 1000;
  std::vector<std::string> hset{"HSET", key("pool")};
  for (int i = 1; i < 2000; ++i) {
    char token[41];
    std::snprintf(token, sizeof(token), "%040d", i);
    const json holder = {{"host", "web-" + std::to_string(i)},
                         {"cmd", i < 1500 ? std::string(1000, 'x') : "./job"},
                         {"count", 1},
                         {"pid", i},
                         {"expiry", now_ms + 60000},
                         {"since", now_ms},
                         {"ttl", 60000},
                         {"fence", std::to_string(i)}};
    hset.insert(hset.end(), {std::string("h:") + token, holder.dump()});
  }
  redis.cmd(hset);
  Result s = rl({"status", "pool"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(split_lines(s.out).size(), 2001u);
  Result j = rl({"status", "--json", "pool"});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)[0]["holders"].size(), 2000u);
  Result b = rl({"break", "--json", "pool"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(json::parse(b.out)[0]["holders"].size(), 2000u);
}

// ---------------------------------------------------------------- prefix and global options

TEST_F(Prefix, SeparatesLocksOfTheSameName) {
  Result a = rl({"acquire", "x", "--prefix", "app1:"});
  Result b = rl({"--prefix", "app2:", "acquire", "x"});
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(hget("app1:{x}", "token"), first_line(a.out));
  EXPECT_EQ(hget("app2:{x}", "token"), first_line(b.out));
  EXPECT_FALSE(exists(key("x")));
  // One prefix's token means nothing under another.
  EXPECT_EQ(rl({"release", "x", "--prefix", "app2:", "--token", first_line(a.out)}).status, 1);
  // $REDLOCK_PREFIX is the default prefix.
  EXPECT_EQ(rl({"acquire", "x"}, {{"REDLOCK_PREFIX", "app1:"}}).status, 75);
  EXPECT_EQ(rl({"acquire", "x"}).status, 0);
  Result s = rl({"status", "--json", "--prefix", "app1:"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "x");
}

TEST_F(Prefix, WithGlobCharactersListsOnlyItsOwnLocks) {
  take("mine", {"--prefix", "a*:"});
  take("theirs", {"--prefix", "ab:"});
  Result s = rl({"status", "--json", "--prefix", "a*:"});
  ASSERT_EQ(s.status, 0) << s.err;
  json j = json::parse(s.out);
  ASSERT_EQ(j.size(), 1u) << s.out;
  EXPECT_EQ(j[0]["name"], "mine");
}

TEST(StatusRedaction, NeverShowsAPasswordFromTheHoldersCommandLine) {
  RedisServer redis;
  // The recorded command is acquire's parent: this shell, whose command line
  // carries a URL with a password (early: only its first 64 bytes are kept).
  Child shell(
      {"-c", ": redis://admin:hunter2@db.example/0; \"$0\" acquire --redis \"$1\" pw", redlock_binary(), redis.url()},
      {}, std::string("sh"));
  ASSERT_EQ(shell.wait().status, 0);
  Result table = run({"status", "--redis", redis.url(), "pw"});
  Result as_json = run({"status", "--json", "--redis", redis.url(), "pw"});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.find("hunter2"), std::string::npos) << table.out;
  EXPECT_EQ(as_json.out.find("hunter2"), std::string::npos) << as_json.out;
  EXPECT_NE(table.out.find("admin:***@db.example"), std::string::npos) << table.out;
}

TEST_F(Status, ShowsAForeignKeyAsSuchInJson) {
  redis.cmd({"RPUSH", key("alien"), "a"});
  Result r = rl({"status", "alien", "--json"});
  EXPECT_EQ(r.status, 76);
  json j = json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["held"], false);
  EXPECT_EQ(j[0]["state"], "foreign");
}

TEST_F(Status, SeveralForeignKeysGiveOneLineNamingEach) {
  for (const char* name : {"a", "b", "c"}) {
    redis.cmd({"SET", key(name), "x"});
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"status", "a", "b", "c"}}) {
    SCOPED_TRACE(args.size());
    Result r = rl(args);
    EXPECT_EQ(r.status, 76) << r.err;
    EXPECT_TRUE(one_line(r.err));
    for (const char* name : {"'a'", "'b'", "'c'"}) {
      EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    }
    EXPECT_NE(r.err.find("remove them or use another --prefix"), std::string::npos) << r.err;
  }
  EXPECT_EQ(redis.cmd({"GET", key("b")}).str, "x");
}
