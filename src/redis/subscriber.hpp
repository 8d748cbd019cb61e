#pragma once

// Pub/sub on N servers: one subscriber connection to each, subscribed to
// channels and patterns, waited on together (fanout's wait_any) under a
// deadline and a Cancel, the messages read out with the server they came
// on, and the servers that went away told so that the caller subscribes
// to them again when its own policy says (at once, after a pause, with a
// backoff). Waiters, the event stream and exec's revoke listener use it.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "redis/connection.hpp"
#include "redis/fanout.hpp"
#include "util/cancel.hpp"
#include "util/clock.hpp"

namespace redlock::redis {

// One message (SUBSCRIBE's `message`, PSUBSCRIBE's `pmessage`).
struct Message {
  size_t server = 0;  // the index of the server it came on
  std::string channel;
  std::string payload;
  std::string pattern;  // the pattern it matched (pmessage), else empty
};

class Subscriber {
 public:
  // Nothing is connected until start(); each connection is bounded by
  // `timeouts` and cut short by `cancel` (see Connection).
  Subscriber(std::vector<Endpoint> endpoints, Timeouts timeouts, std::shared_ptr<TlsContext> tls, Cancel cancel);
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  [[nodiscard]] size_t size() const { return m_servers.size(); }
  [[nodiscard]] const Endpoint& endpoint(size_t i) const { return m_servers[i].endpoint; }

  // A new connection to server `i` (the old one dropped, the server down
  // until confirmed), for what must be asked before subscribing on it.
  Connection& open(size_t i);
  // Queues SUBSCRIBE `channels` and PSUBSCRIBE `patterns` on server `i`
  // (on the connection open() made, else on a new one), or on every server.
  void start(size_t i, const std::vector<std::string>& channels, const std::vector<std::string>& patterns = {});
  void start(const std::vector<std::string>& channels, const std::vector<std::string>& patterns = {});
  // Waits, in one loop, for every subscription started on `subs` to be
  // answered or to fail: a server answered is up. One round trip for all.
  static void confirm(std::span<Subscriber* const> subs, const Cancel& cancel);
  void confirm(const Cancel& cancel);

  // Server `i` is subscribed and has not gone away since.
  [[nodiscard]] bool up(size_t i) const { return m_servers[i].up; }
  // Why server `i` is down (its failure, or that it closed the connection).
  [[nodiscard]] const std::string& why(size_t i) const { return m_servers[i].why; }
  // The server's error reply to a subscription (an ACL without the
  // channels), if it gave one: the server stays up, but nothing comes.
  [[nodiscard]] const std::optional<std::string>& refusal(size_t i) const { return m_servers[i].refusal; }

  // Asks server `i` for a PONG: a server gone without closing the
  // connection fails it within the command timeout.
  void ping(size_t i);

  // Waits until something arrives on a server that is up (or one of them
  // fails), `until`, or `cancel` (see wait_any).
  RunResult wait(std::optional<TimePoint> until, const Cancel& cancel);
  // Reads what has already arrived, without waiting.
  void read_arrived();

  struct Arrived {
    std::vector<Message> messages;  // in the order they came, server by server
    std::vector<size_t> lost;       // the servers that went down since the last take()
  };
  // The messages arrived so far (confirmations and PONGs dropped), and the
  // servers found gone, now down.
  [[nodiscard]] Arrived take();

 private:
  struct Server {
    Endpoint endpoint;
    std::unique_ptr<Connection> conn;
    bool up = false;
    bool pending = false;  // a subscription started, not yet confirmed
    std::string why;
    std::optional<std::string> refusal;
  };
  [[nodiscard]] std::vector<Connection*> live();

  std::vector<Server> m_servers;
  Timeouts m_timeouts;
  std::shared_ptr<TlsContext> m_tls;
  Cancel m_cancel;
};

}  // namespace redlock::redis
