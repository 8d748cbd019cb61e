// Least privilege: the ACL the man page documents is enough for everything
// redlock does, and anything less fails cleanly (77), with nothing half-done.

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;

namespace {

// redlock-safety(7)'s ACL SETUSER line for a user of the default prefix, minus
// `what` (a rule to leave out).
std::vector<std::string> minimal_acl(const std::string& user, const std::string& leave_out = "") {
  std::vector<std::string> rules = {
      "on",     ">locker-pw", "resetkeys",  "~redlock:*",     "resetchannels", "&redlock:*", "-@all",
      "+eval",  "+evalsha",   "+subscribe", "+unsubscribe",   "+ping",         "+scan",      "+wait",
      "+type",  "+hmget",     "+hgetall",   "+hset",          "+hdel",         "+hincrby",   "+del",
      "+get",   "+set",       "+pexpire",   "+pttl",          "+time",         "+publish",   "+hget",
      "+zadd",  "+zrem",      "+zrange",    "+zrangebyscore", "+zrank",        "+zscore",    "+zcount",
      "+zcard", "+zscan",     "+xadd",      "+xdel",          "+xrevrange",    "+xlen",      "+exists"};
  std::vector<std::string> argv = {"ACL", "SETUSER", user};
  for (const auto& r : rules) {
    if (r != leave_out) {
      argv.push_back(r);
    }
  }
  return argv;
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

}  // namespace

TEST(Acl, TheDocumentedMinimalAclIsEnoughForEverySubcommand) {
  RedisServer redis;
  ASSERT_EQ(redis.cmd(minimal_acl("locker")).str, "OK");
  Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
  Result a = run({"acquire", "--ttl", "5s", "job"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string token = first_line(a.out);
  EXPECT_EQ(run({"renew", "--token", token, "job"}, env).status, 0);
  Result st = run({"status"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("job"), std::string::npos);
  EXPECT_EQ(redis.calls("scan"), 0) << "listed from the index of held locks, which the user keeps";
  // A waiter is woken by the release (SUBSCRIBE and PUBLISH are allowed).
  Child waiter({"acquire", "--wait", "20s", "job"}, env);
  ASSERT_TRUE(await_waiters(redis, "job"));
  EXPECT_EQ(run({"release", "--token", token, "job"}, env).status, 0);
  Result w = waiter.wait(Seconds(10));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_LT(w.seconds, 4.0) << "woken by the release, not by the TTL";
  EXPECT_EQ(run({"release", "--token", first_line(w.out), "job"}, env).status, 0);
  Result e = run({"exec", "--ttl", "1s", "job", "--", "sleep", "1"}, env);
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job")}).integer, 0);
  Result skip = run({"exec", "--skip-if-ok-within", "1h", "job", "--", "true"}, env);
  EXPECT_EQ(skip.status, 75) << skip.err;
  Result h = run({"history", "job"}, env);
  EXPECT_EQ(h.status, 0) << h.err;
  EXPECT_EQ(run({"overdue", "--max-age", "1h", "job"}, env).status, 0);
}

TEST(Acl, AUserWhoCouldNotRecordTheRunCannotTakeTheLockForIt) {
  RedisServer redis;
  TempDir dir;
  for (const std::string leave_out : {"+xadd", "+xdel", "+xrevrange", "+xlen"}) {
    SCOPED_TRACE(leave_out);
    ASSERT_EQ(redis.cmd({"ACL", "DELUSER", "locker"}).type, redlock::redis::Reply::Type::k_integer);
    ASSERT_EQ(redis.cmd(minimal_acl("locker", leave_out)).str, "OK");
    Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
    const std::string ran = dir.path() + "/ran";
    Result e = run({"exec", "job", "--", "touch", ran}, env);
    EXPECT_EQ(e.status, 77) << e.err;
    EXPECT_NE(e.err.find("--no-history"), std::string::npos) << e.err;
    EXPECT_NE(::access(ran.c_str(), F_OK), 0) << "the command ran";
    EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job"), lock_key("job") + ":fence", lock_key("job") + ":runs"}).integer, 0);
    Result without = run({"exec", "--no-history", "job", "--", "true"}, env);
    EXPECT_EQ(without.status, 0) << without.err;
    (void)redis.cmd({"DEL", lock_key("job") + ":fence"});
  }
}

TEST(Acl, WithoutTheChannelReleaseIs77AndLeavesTheLockWhole) {
  RedisServer redis;
  ASSERT_EQ(redis.cmd(minimal_acl("locker", "&redlock:*")).str, "OK");
  // Taken by a user with every right; given back by one without the channel.
  Result a = run({"acquire", "--ttl", "30s", "job"}, {{"REDLOCK_URL", redis.url()}});
  ASSERT_EQ(a.status, 0) << a.err;
  Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
  Result r = run({"release", "--token", first_line(a.out), "job"}, env);
  EXPECT_EQ(r.status, 77) << r.err;
  EXPECT_NE(r.err.find("ACL"), std::string::npos) << r.err;
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, first_line(a.out)) << "nothing half-done";
}

TEST(Acl, AUserWhoCouldNotGiveTheLockBackCannotTakeIt) {
  // Without what a release needs (the channel, PUBLISH, DEL...), acquire
  // and exec took the lock, the release was refused, and the lock stayed
  // held for its whole TTL while exec exited 0.
  RedisServer redis;
  TempDir dir;
  for (const std::string leave_out : {"&redlock:*", "+publish", "+del", "+hdel", "+hincrby", "+hmget", "+zrem"}) {
    SCOPED_TRACE(leave_out);
    ASSERT_EQ(redis.cmd({"ACL", "DELUSER", "locker"}).type, redlock::redis::Reply::Type::k_integer);
    ASSERT_EQ(redis.cmd(minimal_acl("locker", leave_out)).str, "OK");
    Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
    Result a = run({"acquire", "job"}, env);
    EXPECT_EQ(a.status, 77) << a.err;
    EXPECT_EQ(a.out, "");
    EXPECT_NE(a.err.find("giving it back needs"), std::string::npos) << a.err;
    const std::string ran = dir.path() + "/ran";
    Result e = run({"exec", "job", "--", "touch", ran}, env);
    EXPECT_EQ(e.status, 77) << e.err;
    EXPECT_NE(::access(ran.c_str(), F_OK), 0) << "the command ran";
    EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job")}).integer, 0);
    EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job") + ":fence"}).integer, 0);
  }
}

TEST(Acl, ARefusedRedlockWaiterLeavesNoPlaceInLine) {
  // Over several servers a waiter enters every line on its first try: it
  // did so before the check of its rights refused it, and its entry held
  // up the line for its lease.
  Servers s(3);
  std::string urls;
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(s[i].cmd(minimal_acl("locker", "+publish")).str, "OK");
    urls += (urls.empty() ? "" : ",") + ("redis://locker:@" + s[i].url().substr(8));
  }
  ASSERT_EQ(run({"acquire", "--ttl", "30s", "line"}, s.env()).status, 0);
  Result w = run({"acquire", "--wait", "2s", "line"}, {{"REDLOCK_URL", urls}, {"REDLOCK_PASSWORD", "locker-pw"}});
  EXPECT_EQ(w.status, 77) << w.err;
  for (size_t i = 0; i < 3; ++i) {
    const std::string k = lock_key("line");
    EXPECT_EQ(s[i].cmd({"EXISTS", k + ":line", k + ":beats", k + ":waiters", k + ":writers"}).integer, 0) << s[i].url();
  }
}

TEST(Acl, WithoutEvalEverythingIs77BeforeAnyWrite) {
  RedisServer redis;
  for (const std::string leave_out : {"+eval", "+evalsha"}) {
    SCOPED_TRACE(leave_out);
    ASSERT_EQ(redis.cmd(minimal_acl("locker", leave_out)).str, "OK");
    Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
    Result a = run({"acquire", "job"}, env);
    EXPECT_EQ(a.status, 77) << a.err;
    EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job")}).integer, 0);
  }
}

TEST(Acl, TheLeastAclOfEarlierVersionsStillLocksAndLogsNoRefusal) {
  // EXISTS joined the least ACL when the scripts began to ask it whether
  // the line's and the suspension's keys are there at all. A user set up
  // by the earlier list still takes, waits, runs and gives back: the
  // scripts ask each key's TYPE instead, after asking whether EXISTS is
  // allowed, so that no refusal fills the ACL LOG.
  RedisServer redis;
  ASSERT_EQ(redis.cmd(minimal_acl("locker", "+exists")).str, "OK");
  Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
  Result a = run({"acquire", "--ttl", "20s", "job"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  Child waiter({"acquire", "--wait", "20s", "job"}, env);
  ASSERT_TRUE(await_waiters(redis, "job"));
  EXPECT_EQ(run({"release", "--token", first_line(a.out), "job"}, env).status, 0);
  Result w = waiter.wait(Seconds(10));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(run({"release", "--token", first_line(w.out), "job"}, env).status, 0);
  Result e = run({"exec", "job", "--", "true"}, env);
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(redis.calls("exists"), 0);
  EXPECT_EQ(redis.cmd({"ACL", "LOG"}).elements.size(), 0U);
}

TEST(Acl, AUserWhoseKeysLeaveOutTheIndexLocksAsWellAndStatusScans) {
  // ~redlock:{* covers every key of every lock but not redlock:index: the
  // scripts go without it (one refusal, NOPERM, teaches each connection).
  RedisServer redis;
  std::vector<std::string> acl = minimal_acl("locker", "~redlock:*");
  acl.push_back("~redlock:{*");
  ASSERT_EQ(redis.cmd(acl).str, "OK");
  Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
  Result a = run({"acquire", "--ttl", "5s", "job"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(run({"renew", "--token", first_line(a.out), "job"}, env).status, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:index"}).integer, 0);
  Result st = run({"status"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("job"), std::string::npos) << st.out;
  Result e = run({"exec", "--ttl", "1s", "other", "--", "true"}, env);
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(run({"release", "--token", first_line(a.out), "job"}, env).status, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job"), lock_key("other")}).integer, 0);
}

TEST(Acl, KeysOutsideThePrefixAre77) {
  RedisServer redis;
  ASSERT_EQ(redis.cmd(minimal_acl("locker")).str, "OK");
  Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)},
          {"REDLOCK_PASSWORD", "locker-pw"},
          {"REDLOCK_PREFIX", "elsewhere:"}};
  Result a = run({"acquire", "job"}, env);
  EXPECT_EQ(a.status, 77) << a.err;
  EXPECT_EQ(redis.cmd({"EXISTS", "elsewhere:{job}"}).integer, 0);
}

// A managed Redis that does not offer WAIT (renamed away, or left out of the
// user's ACL): --min-replicas cannot be confirmed, the line says WAIT was
// refused (not that too few replicas answered), and nothing stays held.
TEST(Acl, MinReplicasWhereWaitIsRefusedNamesWaitAndHoldsNothing) {
  RedisServer renamed(RedisServer::Options{.extra = {"--rename-command", "WAIT", "WAIT-not-offered"}});
  Result a = run({"acquire", "--min-replicas", "1", "job"}, {{"REDLOCK_URL", renamed.url()}});
  EXPECT_EQ(a.status, 76) << a.err;
  EXPECT_NE(a.err.find("refused WAIT"), std::string::npos) << a.err;
  EXPECT_EQ(a.err.find("fewer than"), std::string::npos) << a.err;
  EXPECT_EQ(a.out, "");
  EXPECT_EQ(renamed.cmd({"EXISTS", lock_key("job")}).integer, 0) << "the unconfirmed lock was released";

  RedisServer redis;
  ASSERT_EQ(redis.cmd(minimal_acl("locker", "+wait")).str, "OK");
  Env env{{"REDLOCK_URL", "redis://locker:@" + redis.url().substr(8)}, {"REDLOCK_PASSWORD", "locker-pw"}};
  Result e = run({"exec", "--min-replicas", "1", "job", "--", "true"}, env);
  EXPECT_EQ(e.status, 77) << e.err;
  EXPECT_NE(e.err.find("refused WAIT"), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("+wait"), std::string::npos) << e.err;
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("job")}).integer, 0) << "the unconfirmed lock was released";
}
