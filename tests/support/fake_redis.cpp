#include "fake_redis.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace redlock::test {

namespace {

void send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) {
      return;
    }
    done += static_cast<size_t>(n);
  }
}

// Takes the whole requests at the start of `in` (RESP arrays of bulk
// strings, as clients send them) out of it, and says how many there were:
// pipelined requests that come in one read are answered one by one.
size_t take_requests(std::string& in) {
  size_t count = 0;
  size_t at = 0;
  const auto number = [&](char kind, long long& n) {
    if (at >= in.size() || in[at] != kind) {
      return false;
    }
    const size_t end = in.find("\r\n", at);
    if (end == std::string::npos) {
      return false;
    }
    n = std::stoll(in.substr(at + 1, end - at - 1));
    at = end + 2;
    return true;
  };
  while (true) {
    const size_t start = at;
    long long parts = 0;
    bool whole = number('*', parts);
    for (long long k = 0; whole && k < parts; ++k) {
      long long len = 0;
      whole = number('$', len) && in.size() >= at + static_cast<size_t>(len) + 2;
      at += whole ? static_cast<size_t>(len) + 2 : 0;
    }
    if (!whole) {
      in.erase(0, start);
      return count;
    }
    ++count;
  }
}

}  // namespace

FakeRedis::FakeRedis(Mode mode, std::chrono::milliseconds drip_interval)
    : m_mode(mode), m_drip_interval(drip_interval) {
  listen_on_loopback();
}

FakeRedis::FakeRedis(std::string reply) : m_mode(Mode::k_canned), m_drip_interval(500), m_canned(std::move(reply)) {
  listen_on_loopback();
}

FakeRedis::FakeRedis(std::vector<Step> steps)
    : m_mode(Mode::k_scripted), m_drip_interval(500), m_steps(std::move(steps)) {
  listen_on_loopback();
}

void FakeRedis::listen_on_loopback() {
  m_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (m_listener < 0 || bind(m_listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(m_listener, 64) != 0 || getsockname(m_listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      pipe2(m_stop, O_CLOEXEC) != 0) {
    throw std::runtime_error("FakeRedis: cannot listen on loopback");
  }
  m_port = ntohs(addr.sin_port);
  m_thread = std::thread([this] { serve(); });
}

FakeRedis::~FakeRedis() {
  (void)::write(m_stop[1], "x", 1);
  m_thread.join();
  close(m_listener);
  close(m_stop[0]);
  close(m_stop[1]);
}

std::string FakeRedis::received() const {
  const std::lock_guard<std::mutex> lock(m_mutex);
  return m_requests;
}

void FakeRedis::serve() {
  struct Client {
    int fd;
    bool dripping;
    std::chrono::steady_clock::time_point next_drip;
    std::string pending{};  // the start of a request not received whole yet
    size_t served = 0;      // whole requests received (k_scripted's step)
  };
  std::vector<Client> clients;
  auto drop = [&](size_t i) {
    close(clients[i].fd);
    clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
  };
  while (true) {
    std::vector<pollfd> fds{{m_stop[0], POLLIN, 0}, {m_listener, POLLIN, 0}};
    int timeout_ms = -1;
    auto now = std::chrono::steady_clock::now();
    for (const auto& c : clients) {
      fds.push_back({c.fd, POLLIN, 0});
      if (c.dripping) {
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(c.next_drip - now).count();
        int ms = static_cast<int>(std::max<long long>(wait, 0));
        timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
      }
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
      continue;
    }
    if (fds[0].revents) {
      break;
    }
    if (fds[1].revents & POLLIN) {
      int fd = accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        ++m_connections;
        clients.push_back({fd, false, {}});
      }
    }
    now = std::chrono::steady_clock::now();
    // Clients accepted in this round are not in `fds` yet: only the first
    // fds.size() - 2 of them have events.
    for (size_t i = fds.size() - 2; i-- > 0;) {
      Client& c = clients[i];
      if (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[4096];
        ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          drop(i);
          continue;
        }
        m_received += n;
        {
          const std::lock_guard<std::mutex> lock(m_mutex);
          m_requests.append(buf, static_cast<size_t>(n));
        }
        c.pending.append(buf, static_cast<size_t>(n));
        // A canned answer goes to each whole request, as a server would
        // give it: requests pipelined in one read get one each.
        const size_t requests = take_requests(c.pending);
        m_requests_seen += static_cast<int>(requests);
        switch (m_mode) {
          case Mode::k_silent:
            break;
          case Mode::k_close_mid_reply:
            send_all(c.fd, "$40\r\nthe first half of a rep");
            drop(i);
            continue;
          case Mode::k_garbage:
            send_all(c.fd, "this is not RESP at all\r\n");
            break;
          case Mode::k_wrong_type:
            for (size_t k = 0; k < requests; ++k) {
              send_all(c.fd, "+OK\r\n");
            }
            break;
          case Mode::k_canned:
            for (size_t k = 0; k < requests; ++k) {
              send_all(c.fd, m_canned);
            }
            break;
          case Mode::k_scripted: {
            bool closed = false;
            for (size_t k = 0; k < requests && !closed && !m_steps.empty(); ++k) {
              const Step& step = m_steps[std::min(c.served++, m_steps.size() - 1)];
              if (step.kind == Step::Kind::k_answer) {
                send_all(c.fd, step.reply);
              } else if (step.kind == Step::Kind::k_close) {
                closed = true;
              }
            }
            if (closed) {
              drop(i);
              continue;
            }
            break;
          }
          case Mode::k_drip:
            if (!c.dripping) {
              send_all(c.fd, "$100000\r\n");
              c.dripping = true;
              c.next_drip = now + m_drip_interval;
            }
            break;
        }
      }
      if (c.dripping && now >= c.next_drip) {
        send_all(c.fd, "x");
        c.next_drip += m_drip_interval;
      }
    }
  }
  for (const auto& c : clients) {
    close(c.fd);
  }
}

}  // namespace redlock::test
