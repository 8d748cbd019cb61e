#include "redis/transport.hpp"

#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "redis/failure.hpp"

namespace redlock::redis {
namespace {

class PlainTransport final : public Transport {
 public:
  PlainTransport(int fd, std::string where) : m_fd(fd), m_where(std::move(where)) {}

  Handshake handshake(Failure& /*failure*/) override { return Handshake::k_done; }

  ssize_t read(char* buf, size_t len, Failure& failure) override {
    return io([&] { return ::recv(m_fd, buf, len, 0); }, failure);
  }

  ssize_t write(const char* buf, size_t len, Failure& failure) override {
    return io([&] { return ::send(m_fd, buf, len, MSG_NOSIGNAL); }, failure);
  }

  short wanted_events() const override { return 0; }
  bool may_hold_more() const override { return false; }

  bool said_goodbye() const override {
    char c;
    ssize_t n;
    do {
      n = ::recv(m_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }

 private:
  // A socket call, retried on EINTR, with read()'s and write()'s results.
  template <typename Io>
  ssize_t io(Io call, Failure& failure) {
    while (true) {
      ssize_t n = call();
      if (n >= 0) {
        return n;
      }
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return k_blocked;
      }
      failure = Failure{ExitStatus::k_unavailable,
                        fmt::format("lost the connection to Redis at {}: {}", m_where, std::strerror(errno))};
      return k_failed;
    }
  }

  int m_fd;
  std::string m_where;
};

}  // namespace

std::unique_ptr<Transport> plain_transport(int fd, std::string where) {
  return std::make_unique<PlainTransport>(fd, std::move(where));
}

}  // namespace redlock::redis
