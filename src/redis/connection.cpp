#include "redis/connection.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <tuple>
#include <utility>

#include "redis/sentinel.hpp"
#include "redis/transport.hpp"
#include "util/log.hpp"

namespace redlock::redis {
namespace {

// Appends one command to `out` in RESP, the arguments written straight from
// where they are: a script's body (kilobytes) is copied once, into the
// buffer that goes to the socket.
template <typename Args>
void append_command(std::string& out, const Args& argv) {
  size_t size = 16;
  for (const auto& a : argv) {
    size += std::string_view(a).size() + 16;
  }
  out.reserve(out.size() + size);
  fmt::format_to(std::back_inserter(out), "*{}\r\n", argv.size());
  for (const auto& a : argv) {
    const std::string_view v(a);
    fmt::format_to(std::back_inserter(out), "${}\r\n", v.size());
    out.append(v);
    out += "\r\n";
  }
}

}  // namespace

Connection::Connection(Endpoint endpoint, Timeouts timeouts, std::shared_ptr<TlsContext> tls, Cancel cancel)
    : m_endpoint(std::move(endpoint)),
      m_timeouts(timeouts),
      m_cancel(cancel),
      m_tls(std::move(tls)),
      m_reader(nullptr, free_reader) {
  if (m_endpoint.kind == Endpoint::Kind::k_sentinel) {
    m_sentinel = std::make_unique<Sentinel>(m_endpoint, m_timeouts);
  }
}

bool Connection::linked() const {
  switch (m_state) {
    case State::k_confirming:
    case State::k_ready:
    case State::k_stale:
    case State::k_follow_up:
      return true;
    case State::k_closed:
    case State::k_connecting:
    case State::k_handshake:
      return false;
  }
  return false;
}

void Connection::close_socket() {
  m_transport.reset();
  m_fd.reset();
  m_state = State::k_closed;
  m_reader.reset();
  m_discard = 0;
}

Connection::~Connection() = default;

void Connection::reset() {
  if (m_failure && linked()) {
    // After a cancellation the socket stays: what comes next is queued
    // behind the abandoned commands, whose replies are dropped.
    m_failure.reset();
    m_replies.clear();
    m_deadline.reset();
    return;
  }
  close_socket();
  m_out.clear();
  m_held.clear();
  m_setup.clear();
  m_awaiting = 0;
  m_replies.clear();
  m_failure.reset();
  m_deadline.reset();
}

void Connection::fail(ExitStatus status, std::string message) {
  close_socket();
  m_out.clear();
  m_held.clear();
  m_setup.clear();
  m_deadline.reset();
  m_failure = Failure{status, std::move(message)};
}

void Connection::fail_timeout() {
  if (m_state == State::k_connecting || m_state == State::k_handshake) {
    // (Only TLS has a handshake that waits for the server.)
    fail(ExitStatus::k_unavailable,
         fmt::format("cannot connect to Redis at {}: {}timed out after {}", m_endpoint.display(),
                     m_state == State::k_handshake ? "TLS handshake " : "", format_duration(m_timeouts.connect)));
  } else if (m_state == State::k_ready && m_awaiting > 0 && m_setup.empty()) {
    // The request may still be in the server's buffer (a stopped server
    // runs it when it wakes up): the socket stays, as after a
    // cancellation, so that a release of what it would grant can follow it
    // in order (keep_for_follow_up()). Anything else reconnects first.
    fail_cancelled();
    m_failure->message =
        fmt::format("Redis at {} did not answer within {}", m_endpoint.display(), format_duration(m_timeouts.command));
    m_state = State::k_stale;
  } else {
    fail(ExitStatus::k_unavailable, fmt::format("Redis at {} did not answer within {}", m_endpoint.display(),
                                                format_duration(m_timeouts.command)));
  }
}

void Connection::keep_for_follow_up(Millis timeout) {
  if (m_state == State::k_stale || m_state == State::k_follow_up) {
    m_state = State::k_follow_up;
    m_timeouts.command = std::min(m_timeouts.command, timeout);
  }
}

void Connection::fail_cancelled() {
  std::string message = fmt::format("gave up waiting for Redis at {}", m_endpoint.display());
  if (!linked()) {
    fail(ExitStatus::k_unavailable, std::move(message));
    return;
  }
  m_discard += m_awaiting;
  m_awaiting = 0;
  m_deadline.reset();
  m_failure = Failure{ExitStatus::k_unavailable, std::move(message)};
}

void Connection::flush() {
  if (!m_failure && linked() && !m_out.empty()) {
    write_some();
  }
}

bool Connection::closed_while_idle() const {
  // Replies still owed (to commands abandoned by a cancellation, too) are
  // what makes it readable then, not a close.
  if (!linked() || m_awaiting != 0 || m_discard != 0 || !m_setup.empty() || !m_out.empty()) {
    return false;
  }
  pollfd p{m_fd.get(), POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) {
    return false;
  }
  if (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) {
    return true;
  }
  return m_transport->said_goodbye();
}

void Connection::queue(const std::vector<std::string>& argv) {
  const std::vector<std::string_view> views(argv.begin(), argv.end());
  queue(std::span<const std::string_view>(views));
}

void Connection::queue(std::span<const std::string_view> argv) {
  // A socket kept after a timeout serves only the follow-up it was kept
  // for: it may be wedged (a lost peer), and a new one is not.
  if (m_state == State::k_stale) {
    close_socket();
    m_out.clear();
    m_failure.reset();
  } else if (m_state == State::k_follow_up) {
    m_state = State::k_ready;
  }
  if (m_failure && linked()) {
    m_failure.reset();  // after a cancellation: carry on behind the abandoned commands
  } else if (m_failure) {
    reset();
  }
  // The server, a proxy or a failover may close a connection that sat idle
  // (Redis's `timeout`, CLIENT KILL). Found before a request is written, it
  // is re-established once, transparently: nothing was sent on the old one,
  // so nothing is repeated.
  if (closed_while_idle()) {
    log_debug("{} closed the idle connection; reconnecting", m_endpoint.display());
    close_socket();
  }
  if (m_state == State::k_closed) {
    start_connect();
    if (m_failure) {
      return;
    }
  }
  // Until the connection is ready, commands wait: behind the set-up
  // commands, and, on a sentinel's master, until ROLE confirms it.
  append_command(m_state == State::k_ready ? m_out : m_held, argv);
  ++m_awaiting;
  if (linked() && !m_deadline) {
    m_deadline = Clock::now() + m_timeouts.command;
  }
}

void Connection::start_connect() {
  m_replies.clear();
  m_awaiting = 0;
  m_discard = 0;
  m_setup.clear();
  m_out.clear();
  m_held.clear();
  if (m_sentinel) {
    m_sentinel->begin_connect();
  }
  open_socket();
}

void Connection::open_socket(std::optional<TimePoint> deadline) {
  m_reader.reset(create_reader());
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
    std::string host = m_endpoint.host;
    int port_number = m_endpoint.port;
    if (m_sentinel) {
      Failure failure;
      auto master = m_sentinel->find_master(m_cancel, failure);
      if (!master) {
        fail(std::move(failure));
        return;
      }
      std::tie(host, port_number) = *master;
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    addrinfo* res = nullptr;
    std::string port = std::to_string(port_number);
    int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || res == nullptr) {
      fail(ExitStatus::k_unavailable, fmt::format("cannot resolve Redis host '{}': {}", host, gai_strerror(rc)));
      return;
    }
    std::memcpy(&addr, res->ai_addr, res->ai_addrlen);
    addrlen = res->ai_addrlen;
    family = res->ai_family;
    freeaddrinfo(res);
  }

  // The connect budget starts now, after the sentinels answered.
  m_deadline = deadline ? *deadline : Clock::now() + m_timeouts.connect;
  m_connect_deadline = m_deadline;
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
    fail(ExitStatus::k_unavailable,
         fmt::format("cannot connect to Redis at {}: {}", m_endpoint.display(), std::strerror(errno)));
    return;
  }

  // AUTH and SELECT go first, pipelined with whatever is queued next.
  if (m_endpoint.password) {
    std::vector<std::string> auth{"AUTH"};
    if (!m_endpoint.user.empty()) {
      auth.push_back(m_endpoint.user);
    }
    auth.push_back(*m_endpoint.password);
    keep_secret(*m_endpoint.password);  // a server's error may echo it back
    append_command(m_out, auth);
    m_setup.push_back(Setup::k_auth);
  }
  if (m_endpoint.db != 0) {
    append_command(m_out, std::vector<std::string>{"SELECT", std::to_string(m_endpoint.db)});
    m_setup.push_back(Setup::k_select);
  }
  // A sentinel's answer may be stale (a failover it has not seen yet, or a
  // sentinel that lost track): the server itself says whether it is the master.
  if (m_sentinel) {
    append_command(m_out, std::vector<std::string_view>{"ROLE"});
    m_setup.push_back(Setup::k_role);
  }
}

bool Connection::master_changed() {
  // Only an open, idle connection to a confirmed master.
  if (!m_sentinel || !linked() || m_state == State::k_confirming || m_failure || !settled()) {
    return false;
  }
  if (!m_sentinel->failed_over(m_cancel)) {
    return false;
  }
  reset();
  return true;
}

std::string Connection::master_address() const {
  return m_sentinel ? m_sentinel->master_address() : std::string();
}

bool Connection::confirm_master(const Reply& role) {
  Failure failure;
  switch (m_sentinel->confirm(role, failure)) {
    case Sentinel::Role::k_master:
      become_ready();
      return true;
    case Sentinel::Role::k_failed:
      fail(std::move(failure));
      return false;
    case Sentinel::Role::k_replica:
      break;
  }
  // The sentinel's answer was stale: ask them again, within the same
  // connect deadline; what was queued goes to the master they name.
  std::string held = std::move(m_held);
  const size_t awaiting = m_awaiting;
  const size_t discard = m_discard;
  close_socket();
  m_out.clear();
  m_setup.clear();
  open_socket(m_connect_deadline);
  if (!m_failure) {
    m_held = std::move(held);
    m_awaiting = awaiting;
    m_discard = discard;
  }
  return false;
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
  // The one place that knows the transports apart.
  if (!m_endpoint.tls) {
    m_transport = plain_transport(m_fd.get(), m_endpoint.display());
  } else if (m_tls) {
    m_transport = tls_transport(m_fd.get(), *m_tls, m_endpoint.host, m_endpoint.display());
  } else {
    fail(ExitStatus::k_unavailable, "rediss:// needs a TLS context");
    return;
  }
  m_state = State::k_handshake;
  handshake();
}

void Connection::handshake() {
  Failure failure;
  switch (m_transport->handshake(failure)) {
    case Transport::Handshake::k_pending:
      return;
    case Transport::Handshake::k_failed:
      fail(std::move(failure));
      return;
    case Transport::Handshake::k_done:
      break;
  }
  if (m_sentinel) {
    m_state = State::k_confirming;  // the set-up commands end with ROLE
  } else {
    become_ready();
  }
  m_deadline = (m_awaiting > 0 || !m_setup.empty()) ? std::optional(Clock::now() + m_timeouts.command) : std::nullopt;
}

void Connection::become_ready() {
  m_state = State::k_ready;
  m_out += m_held;
  m_held.clear();
}

short Connection::wanted_events() const {
  if (m_failure || m_state == State::k_closed) {
    return 0;
  }
  if (m_state == State::k_connecting) {
    return POLLOUT;
  }
  if (m_state == State::k_handshake) {
    return m_transport->wanted_events();
  }
  short ev = POLLIN | m_transport->wanted_events();
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
    if (!linked()) {
      return;
    }
  } else if (m_state == State::k_handshake) {
    handshake();
    if (!linked()) {
      return;
    }
  }
  if ((revents & POLLOUT) && !m_out.empty()) {
    write_some();
  }
  // (A transport that wants POLLOUT while ready has a read that must write first.)
  if (linked() && ((revents & (POLLIN | POLLERR | POLLHUP)) ||
                   ((revents & POLLOUT) && (m_transport->wanted_events() & POLLOUT) != 0))) {
    read_some();
  }
}

void Connection::write_some() {
  while (!m_out.empty()) {
    Failure failure;
    ssize_t n = m_transport->write(m_out.data(), m_out.size(), failure);
    if (n == Transport::k_failed) {
      fail(std::move(failure));
      return;
    }
    if (n < 0) {
      return;  // would block
    }
    m_out.erase(0, static_cast<size_t>(n));
  }
}

void Connection::read_some() {
  char buf[16384];
  bool complete = false;  // some reply arrived whole
  while (true) {
    Failure failure;
    ssize_t n = m_transport->read(buf, sizeof(buf), failure);
    if (n == Transport::k_blocked) {
      break;
    }
    if (n == Transport::k_failed) {
      fail(std::move(failure));
      return;
    }
    if (n == Transport::k_closed) {
      on_peer_closed();
      return;
    }
    redisReaderFeed(m_reader.get(), buf, static_cast<size_t>(n));
    if (!take_parsed_replies(complete)) {
      return;
    }
    if (static_cast<size_t>(n) < sizeof(buf) && !m_transport->may_hold_more()) {
      break;
    }
  }
  if (m_awaiting == 0 && m_setup.empty()) {
    m_deadline.reset();
  } else if (linked() && complete) {
    // The command timeout is per round trip: a whole reply starts the next
    // one's. Bytes alone do not: a server that drips a reply one byte at a
    // time still answers within --timeout or not at all.
    m_deadline = Clock::now() + m_timeouts.command;
  }
}

void Connection::on_peer_closed() {
  // Replies already parsed still count (e.g. the "unauthenticated" protocol
  // error that precedes the close).
  if (m_awaiting > 0 || !m_setup.empty()) {
    fail(ExitStatus::k_unavailable, fmt::format("Redis at {} closed the connection", m_endpoint.display()));
  } else {
    close_socket();
  }
}

bool Connection::take_parsed_replies(bool& complete) {
  void* raw = nullptr;
  while (true) {
    if (read_reply(m_reader.get(), &raw) != REDIS_OK) {
      fail(ExitStatus::k_protocol,
           fmt::format("Redis at {} sent {}", m_endpoint.display(), reader_failure(m_reader.get())));
      return false;
    }
    if (raw == nullptr) {
      return true;
    }
    Reply reply = copy_reply(static_cast<redisReply*>(raw));
    freeReplyObject(raw);
    complete = true;
    if (!file_reply(std::move(reply))) {
      return false;
    }
  }
}

bool Connection::file_reply(Reply reply) {
  if (!m_setup.empty()) {
    const Setup setup = m_setup.front();
    m_setup.pop_front();
    if (setup == Setup::k_role) {
      return confirm_master(reply);  // false: failed, or reconnecting to another server
    }
    if (reply.is_error()) {
      refuse_setup(reply.str, setup == Setup::k_auth);
      return false;
    }
    return true;
  }
  if (m_discard > 0) {
    --m_discard;  // the reply to a command whose caller gave up
    return true;
  }
  if (m_awaiting > 0) {
    --m_awaiting;
  }
  m_replies.push_back(std::move(reply));
  return true;
}

void Connection::refuse_setup(const std::string& reply, bool auth) {
  const ExitStatus status = classify_error(reply);
  const std::string error = mask_secrets(reply);
  if (status == ExitStatus::k_refused) {
    fail(status, fmt::format("Redis at {} refused the credentials: {} (check the password and user: --password-file "
                             "or $REDLOCK_PASSWORD)",
                             m_endpoint.display(), error));
  } else if (auth && !m_endpoint.user.empty() && reply.find("wrong number of arguments") != std::string::npos) {
    // Redis before 6.0 has no ACL users: AUTH takes the password alone.
    fail(ExitStatus::k_refused,
         fmt::format("Redis at {} takes no user name ('{}'): servers before Redis 6.0 have no ACL users and take "
                     "AUTH with the password only; drop the user name from the URL (redis://:PASSWORD@host)",
                     m_endpoint.display(), m_endpoint.user));
  } else if (auth) {
    // Not a verdict on the password: a server without AUTH, one with no
    // room for another client...
    fail(status, fmt::format("Redis at {} answered AUTH with an error: {} (check that this server takes a password)",
                             m_endpoint.display(), error));
  } else {
    fail(status, fmt::format("Redis at {} refused the database selection (SELECT {}): {}", m_endpoint.display(),
                             m_endpoint.db, error));
  }
}

std::vector<Reply> Connection::take_replies() {
  std::vector<Reply> out;
  out.swap(m_replies);
  return out;
}

}  // namespace redlock::redis
