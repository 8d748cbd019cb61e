// acquire --shared: a script holds a reader's share across steps, renews and
// releases it by its token, while a writer waits for every reader.

#include <gtest/gtest.h>
#include <signal.h>

#include "harness.hpp"
#include "lock_support.hpp"

using namespace redlock::test;

namespace {

std::string token_of(const Result& r) {
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST(SharedAcquire, ReadersShareAndAWriterWaitsForEveryOne) {
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--shared", "--ttl", "1m", "catalog"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  Result b = run({"acquire", "--shared", "--ttl", "1m", "catalog"}, env);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(token_of(a), token_of(b));
  EXPECT_EQ(run({"acquire", "catalog"}, env).status, 75) << "a writer waits for the readers";

  // Each share renews and releases by its own token.
  EXPECT_EQ(run({"renew", "--token", token_of(a), "--ttl", "2m", "catalog"}, env).status, 0);
  EXPECT_EQ(run({"release", "--token", token_of(a), "catalog"}, env).status, 0);
  EXPECT_EQ(run({"release", "--token", token_of(a), "catalog"}, env).status, 1);
  EXPECT_EQ(run({"acquire", "catalog"}, env).status, 75) << "one reader is left";
  EXPECT_EQ(run({"release", "--token", token_of(b), "catalog"}, env).status, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{catalog}"}).integer, 0);
  Result w = run({"acquire", "catalog"}, env);
  EXPECT_EQ(w.status, 0) << w.err;
}

TEST(SharedAcquire, DoesNotGoWithLimit) {
  Result r = run({"acquire", "--shared", "--limit", "2", "x"}, {{"REDLOCK_URL", "redis://127.0.0.1:1"}});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.err.find("--shared"), std::string::npos) << r.err;
}

TEST(SharedAcquire, AReaderBehindAWaitingWriterIsToldWhoHoldsTheLock) {
  // The busy line of a reader held back by a writer in line left out the
  // holder ("rw is held for 59s more, with 1 waiting in line before you").
  RedisServer redis;
  const Env env{{"REDLOCK_URL", redis.url()}};
  Child reader({"exec", "--shared", "--ttl", "1m", "rw", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", "redlock:{rw}"}).integer == 1; }, Seconds(10)));
  auto writer = queue_up(redis, "rw", {"acquire", "--wait", "30s", "rw"}, env);
  Result late = run({"acquire", "--shared", "rw"}, env);
  writer->signal(SIGTERM);
  reader.signal(SIGTERM);
  EXPECT_EQ(late.status, 75) << late.err;
  EXPECT_NE(late.err.find("rw is held by " + this_host() + " pid " + std::to_string(reader.pid()) + " (sleep 30)"),
            std::string::npos)
      << late.err;
  EXPECT_NE(late.err.find("1 waiting in line before you"), std::string::npos) << late.err;
}
