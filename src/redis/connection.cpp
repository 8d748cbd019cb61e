#include "redis/connection.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace redlock::redis {
namespace {

std::string format_command(const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  char* buf = nullptr;
  int n = redisFormatCommandArgv(&buf, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  if (n < 0 || buf == nullptr) {
    throw std::bad_alloc();
  }
  std::string out(buf, static_cast<size_t>(n));
  redisFreeCommand(buf);
  return out;
}

}  // namespace

Connection::Connection(Endpoint endpoint, Timeouts timeouts)
    : m_endpoint(std::move(endpoint)), m_timeouts(timeouts), m_reader(nullptr, redisReaderFree) {}

Connection::~Connection() = default;

void Connection::reset() {
  m_fd.reset();
  m_state = State::k_closed;
  m_reader.reset();
  m_out.clear();
  m_hidden = 0;
  m_awaiting = 0;
  m_replies.clear();
  m_failure.reset();
  m_deadline.reset();
}

void Connection::fail(ExitStatus status, std::string message) {
  m_fd.reset();
  m_state = State::k_closed;
  m_reader.reset();
  m_out.clear();
  m_hidden = 0;
  m_deadline.reset();
  m_failure = Failure{status, std::move(message)};
}

void Connection::fail_timeout() {
  if (m_state == State::k_connecting) {
    fail(ExitStatus::k_unavailable,
         fmt::format("cannot connect to Redis at {}: timed out after {}", m_endpoint.display(),
                     format_duration(m_timeouts.connect)));
  } else {
    fail(ExitStatus::k_unavailable,
         fmt::format("Redis at {} did not answer within {}", m_endpoint.display(),
                     format_duration(m_timeouts.command)));
  }
}

void Connection::fail_cancelled() {
  fail(ExitStatus::k_unavailable, fmt::format("gave up waiting for Redis at {}", m_endpoint.display()));
}

void Connection::queue(const std::vector<std::string>& argv) {
  if (m_failure) {
    reset();
  }
  if (m_state == State::k_closed) {
    start_connect();
    if (m_failure) {
      return;
    }
  }
  m_out += format_command(argv);
  ++m_awaiting;
  if (m_state == State::k_ready && !m_deadline) {
    m_deadline = Clock::now() + m_timeouts.command;
  }
}

void Connection::start_connect() {
  m_reader.reset(redisReaderCreate());
  m_replies.clear();
  m_awaiting = 0;
  m_hidden = 0;
  m_out.clear();
  m_deadline = Clock::now() + m_timeouts.connect;
  m_state = State::k_connecting;

  sockaddr_storage addr{};
  socklen_t addrlen = 0;
  int family = AF_UNIX;
  if (m_endpoint.kind == Endpoint::Kind::k_unix) {
    auto* un = reinterpret_cast<sockaddr_un*>(&addr);
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, m_endpoint.path.c_str(), m_endpoint.path.size() + 1);
    addrlen = sizeof(sockaddr_un);
  } else {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    addrinfo* res = nullptr;
    std::string port = std::to_string(m_endpoint.port);
    int rc = getaddrinfo(m_endpoint.host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || res == nullptr) {
      fail(ExitStatus::k_unavailable, fmt::format("cannot resolve Redis host '{}': {}", m_endpoint.host,
                                                  gai_strerror(rc)));
      return;
    }
    std::memcpy(&addr, res->ai_addr, res->ai_addrlen);
    addrlen = res->ai_addrlen;
    family = res->ai_family;
    freeaddrinfo(res);
  }

  m_fd.reset(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!m_fd.valid()) {
    fail(ExitStatus::k_unavailable, fmt::format("cannot create a socket: {}", std::strerror(errno)));
    return;
  }
  if (family != AF_UNIX) {
    int one = 1;
    setsockopt(m_fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  if (::connect(m_fd.get(), reinterpret_cast<sockaddr*>(&addr), addrlen) != 0 && errno != EINPROGRESS) {
    fail(ExitStatus::k_unavailable, fmt::format("cannot connect to Redis at {}: {}", m_endpoint.display(),
                                                std::strerror(errno)));
    return;
  }

  // AUTH and SELECT go first, pipelined with whatever is queued next.
  if (m_endpoint.password) {
    std::vector<std::string> auth{"AUTH"};
    if (!m_endpoint.user.empty()) {
      auth.push_back(m_endpoint.user);
    }
    auth.push_back(*m_endpoint.password);
    m_out += format_command(auth);
    ++m_hidden;
  }
  if (m_endpoint.db != 0) {
    m_out += format_command({"SELECT", std::to_string(m_endpoint.db)});
    ++m_hidden;
  }
}

void Connection::finish_connect() {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(m_fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
    err = errno;
  }
  if (err != 0) {
    fail(ExitStatus::k_unavailable,
         fmt::format("cannot connect to Redis at {}: {}", m_endpoint.display(), std::strerror(err)));
    return;
  }
  m_state = State::k_ready;
  m_deadline = (m_awaiting > 0 || m_hidden > 0) ? std::optional(Clock::now() + m_timeouts.command)
                                                : std::nullopt;
}

short Connection::wanted_events() const {
  if (m_failure || m_state == State::k_closed) {
    return 0;
  }
  if (m_state == State::k_connecting) {
    return POLLOUT;
  }
  short ev = POLLIN;
  if (!m_out.empty()) {
    ev |= POLLOUT;
  }
  return ev;
}

std::optional<TimePoint> Connection::deadline() const {
  if (m_failure || m_state == State::k_closed) {
    return std::nullopt;
  }
  return m_deadline;
}

void Connection::on_events(short revents) {
  if (m_state == State::k_connecting) {
    if (revents & (POLLOUT | POLLERR | POLLHUP)) {
      finish_connect();
    }
    if (m_state != State::k_ready) {
      return;
    }
  }
  if ((revents & POLLOUT) && !m_out.empty()) {
    write_some();
  }
  if (m_state == State::k_ready && (revents & (POLLIN | POLLERR | POLLHUP))) {
    read_some();
  }
}

void Connection::write_some() {
  while (!m_out.empty()) {
    ssize_t n = ::send(m_fd.get(), m_out.data(), m_out.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return;
      }
      fail(ExitStatus::k_unavailable,
           fmt::format("lost the connection to Redis at {}: {}", m_endpoint.display(), std::strerror(errno)));
      return;
    }
    m_out.erase(0, static_cast<size_t>(n));
  }
}

void Connection::read_some() {
  char buf[16384];
  while (true) {
    ssize_t n = ::recv(m_fd.get(), buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      }
      fail(ExitStatus::k_unavailable,
           fmt::format("lost the connection to Redis at {}: {}", m_endpoint.display(), std::strerror(errno)));
      return;
    }
    if (n == 0) {
      // The server closed. Replies already parsed still count (e.g. the
      // "unauthenticated" protocol error that precedes the close).
      bool owed = m_awaiting > 0 || m_hidden > 0;
      if (owed) {
        fail(ExitStatus::k_unavailable,
             fmt::format("Redis at {} closed the connection", m_endpoint.display()));
      } else {
        m_fd.reset();
        m_state = State::k_closed;
        m_reader.reset();
      }
      return;
    }
    redisReaderFeed(m_reader.get(), buf, static_cast<size_t>(n));
    void* raw = nullptr;
    while (true) {
      if (redisReaderGetReply(m_reader.get(), &raw) != REDIS_OK) {
        fail(ExitStatus::k_protocol,
             fmt::format("Redis at {} sent a malformed reply: {}", m_endpoint.display(), m_reader->errstr));
        return;
      }
      if (raw == nullptr) {
        break;
      }
      Reply reply = copy_reply(static_cast<redisReply*>(raw));
      freeReplyObject(raw);
      if (m_hidden > 0) {
        --m_hidden;
        if (reply.is_error()) {
          ExitStatus status = classify_error(reply.str);
          fail(status, fmt::format("Redis at {} refused the {}: {}", m_endpoint.display(),
                                   status == ExitStatus::k_refused ? "credentials" : "database selection",
                                   reply.str));
          return;
        }
        continue;
      }
      if (m_awaiting > 0) {
        --m_awaiting;
      }
      m_replies.push_back(std::move(reply));
    }
    if (static_cast<size_t>(n) < sizeof(buf)) {
      break;
    }
  }
  if (m_awaiting == 0 && m_hidden == 0) {
    m_deadline.reset();
  } else if (m_state == State::k_ready) {
    // Progress: the command timeout is per round trip, measured from the last reply.
    m_deadline = Clock::now() + m_timeouts.command;
  }
}

std::vector<Reply> Connection::take_replies() {
  std::vector<Reply> out;
  out.swap(m_replies);
  return out;
}

}  // namespace redlock::redis
