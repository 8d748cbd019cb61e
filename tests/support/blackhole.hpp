#pragma once

// A listener that never accepts, with its one-slot backlog already full:
// a client's connect() then hangs until its own timeout, as with a server
// whose packets are dropped (a partition).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.hpp"

namespace redlock::test {

class Blackhole {
 public:
  Blackhole() {
    m_listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(m_listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(m_listener, 0);
    socklen_t len = sizeof(addr);
    getsockname(m_listener, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    for (int i = 0; i < 3; ++i) {
      int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      (void)connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
      m_fillers.push_back(c);
    }
    sleep_for(0.05);
  }
  ~Blackhole() {
    for (int c : m_fillers) {
      close(c);
    }
    close(m_listener);
  }
  [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(m_port); }

 private:
  int m_listener = -1;
  int m_port = 0;
  std::vector<int> m_fillers;
};

}  // namespace redlock::test
