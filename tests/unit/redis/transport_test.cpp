// The plain transport over a socket pair: what read() and write() return,
// and how an idle socket tells that its peer is leaving.

#include "redis/transport.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "redis/failure.hpp"

using redlock::ExitStatus;
using redlock::redis::Failure;
using redlock::redis::plain_transport;
using redlock::redis::Transport;

namespace {

// Two connected non-blocking stream sockets: ours (under the transport) and the peer's.
class Pair {
 public:
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, m_fds), 0); }
  ~Pair() {
    close_peer();
    ::close(m_fds[0]);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;

  [[nodiscard]] int ours() const { return m_fds[0]; }
  [[nodiscard]] int peer() const { return m_fds[1]; }
  void close_peer() {
    if (m_fds[1] >= 0) {
      ::close(m_fds[1]);
      m_fds[1] = -1;
    }
  }

 private:
  int m_fds[2] = {-1, -1};
};

}  // namespace

TEST(PlainTransport, NeedsNoHandshakeAndWaitsForNothingOfItsOwn) {
  Pair pair;
  auto transport = plain_transport(pair.ours(), "redis://test");
  Failure failure;
  EXPECT_EQ(transport->handshake(failure), Transport::Handshake::k_done);
  EXPECT_EQ(transport->wanted_events(), 0);
  EXPECT_FALSE(transport->may_hold_more());
}

TEST(PlainTransport, MovesBytesBothWaysAndSaysWhenAReadWouldBlock) {
  Pair pair;
  auto transport = plain_transport(pair.ours(), "redis://test");
  Failure failure;
  EXPECT_EQ(transport->write("PING\r\n", 6, failure), 6);
  char buf[16] = {};
  ASSERT_EQ(::read(pair.peer(), buf, sizeof(buf)), 6);
  EXPECT_EQ(std::string(buf, 6), "PING\r\n");

  EXPECT_EQ(transport->read(buf, sizeof(buf), failure), Transport::k_blocked);
  ASSERT_EQ(::write(pair.peer(), "+PONG\r\n", 7), 7);
  EXPECT_EQ(transport->read(buf, sizeof(buf), failure), 7);
  EXPECT_EQ(std::string(buf, 7), "+PONG\r\n");
}

TEST(PlainTransport, AReadAfterThePeerClosedSaysClosed) {
  Pair pair;
  auto transport = plain_transport(pair.ours(), "redis://test");
  EXPECT_FALSE(transport->said_goodbye());
  pair.close_peer();
  EXPECT_TRUE(transport->said_goodbye());
  Failure failure;
  char buf[16];
  EXPECT_EQ(transport->read(buf, sizeof(buf), failure), Transport::k_closed);
}

TEST(PlainTransport, AFarewellOnAnIdleSocketIsAGoodbyeAndStaysToBeRead) {
  Pair pair;
  auto transport = plain_transport(pair.ours(), "redis://test");
  ASSERT_EQ(::write(pair.peer(), "-ERR max number of clients reached\r\n", 36), 36);
  EXPECT_TRUE(transport->said_goodbye());
  Failure failure;
  char buf[64];
  EXPECT_EQ(transport->read(buf, sizeof(buf), failure), 36) << "looking must not consume the farewell";
}

TEST(PlainTransport, AWriteToAGonePeerFailsNamingTheServer) {
  Pair pair;
  auto transport = plain_transport(pair.ours(), "redis://test");
  pair.close_peer();
  Failure failure;
  EXPECT_EQ(transport->write("PING\r\n", 6, failure), Transport::k_failed);
  EXPECT_EQ(failure.status, ExitStatus::k_unavailable);
  EXPECT_NE(failure.message.find("lost the connection to Redis at redis://test"), std::string::npos) << failure.message;
}
