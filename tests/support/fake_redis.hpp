#pragma once

// A loopback TCP listener that plays a broken Redis server, for fault tests:
// it accepts connections and answers every request the way its Mode says
// (not at all, half a reply then a close, bytes that are not RESP, one
// byte at a time, or a script of steps, one per request). It runs on its
// own thread until destroyed.

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace redlock::test {

class FakeRedis {
 public:
  enum class Mode {
    k_silent,           // accepts and reads, never answers
    k_close_mid_reply,  // answers with the start of a bulk string, then closes the connection
    k_garbage,          // answers with a line that is not RESP
    k_wrong_type,       // answers every request with "+OK" (valid RESP, never what was asked for)
    k_drip,             // answers with a large bulk header, then one byte every drip interval
    k_canned,           // answers every request with the bytes given
    k_scripted,         // the Nth request of each connection gets the Nth Step (the last one after that)
  };
  // What the scripted server does with one request.
  struct Step {
    enum class Kind { k_answer, k_stall, k_close };
    Kind kind = Kind::k_stall;
    std::string reply;  // k_answer: raw RESP bytes
  };
  explicit FakeRedis(Mode mode, std::chrono::milliseconds drip_interval = std::chrono::milliseconds(500));
  // A server that answers every request with `reply` (raw RESP bytes).
  explicit FakeRedis(std::string reply);
  // A server that follows `steps` on every connection, request by request.
  explicit FakeRedis(std::vector<Step> steps);
  ~FakeRedis();
  FakeRedis(const FakeRedis&) = delete;
  FakeRedis& operator=(const FakeRedis&) = delete;

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(m_port); }
  // Connections accepted so far.
  [[nodiscard]] int connections() const { return m_connections.load(); }
  // Bytes of requests received so far, over all connections.
  [[nodiscard]] long long bytes_received() const { return m_received.load(); }
  // Whole requests received so far, over all connections: a test waits for
  // the request it means to act during (never a fixed sleep).
  [[nodiscard]] int requests() const { return m_requests_seen.load(); }
  // Every byte of the requests received so far, over all connections, in
  // the order they came: what the client asked for (a release after a
  // grant, say).
  [[nodiscard]] std::string received() const;

 private:
  void serve();
  void listen_on_loopback();

  Mode m_mode;
  std::chrono::milliseconds m_drip_interval;
  std::string m_canned;
  std::vector<Step> m_steps;
  int m_listener = -1;
  int m_port = 0;
  int m_stop[2] = {-1, -1};
  std::atomic<int> m_connections{0};
  std::atomic<long long> m_received{0};
  std::atomic<int> m_requests_seen{0};
  mutable std::mutex m_mutex;
  std::string m_requests;  // guarded by m_mutex
  std::thread m_thread;
};

}  // namespace redlock::test
