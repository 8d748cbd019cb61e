// A round trip cut short by a stop signal leaves its connection open, so that
// the release that follows reaches the server behind the abandoned acquire.

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include "harness.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/fanout.hpp"

using namespace redlock;
using namespace redlock::test;

// The abandoned command's reply, arriving before the next command is
// queued, is what is owed on that connection, not a sign that the server
// closed it: the next command follows on the same connection. (Taken for a
// closed connection, the release went on a new one, still connecting when a
// second look at the pending signal cancelled it: the lock stayed held.)
TEST(CancelledRound, TheNextCommandFollowsOnTheSameConnectionAfterTheAbandonedReplyArrived) {
  RedisServer redis;
  redis::Connection conn(redis::parse_endpoint(redis.url()), redis::Timeouts{});
  const long long id = redis::call(conn, {"CLIENT", "ID"}).integer;
  ASSERT_GT(id, 0);

  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  ASSERT_EQ(::write(stop[1], "x", 1), 1);  // a stop signal, already pending
  conn.queue({"SET", "abandoned", "1"});
  redis::Connection* one[] = {&conn};
  EXPECT_EQ(redis::run_all(one, Cancel(stop[0])), redis::RunResult::k_cancelled);
  ASSERT_TRUE(conn.connected());
  // The abandoned command still ran, and its reply is waiting to be read.
  pollfd p{conn.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  EXPECT_EQ(redis.cmd({"GET", "abandoned"}).str, "1");

  redis::Reply again = redis::call(conn, {"CLIENT", "ID"});
  EXPECT_EQ(again.type, redis::Reply::Type::k_integer) << again.text();
  EXPECT_EQ(again.integer, id) << "the command went on a new connection";
  ::close(stop[0]);
  ::close(stop[1]);
}
