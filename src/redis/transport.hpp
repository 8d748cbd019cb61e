#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "redis/failure.hpp"

namespace redlock::redis {

class TlsContext;

// How bytes go over a connected socket: a plain TCP or Unix socket, or TLS.
// As hiredis keeps its transports in a table of functions (one for plain
// sockets, one for SSL), the transport is chosen once, when the socket
// connects, and the connection logic above it never asks which one it has.
// A transport borrows the socket; the connection owns and closes it after
// the transport is gone.
class Transport {
 public:
  // What read() and write() return besides a count of bytes (> 0).
  static constexpr ssize_t k_closed = 0;    // read: the peer closed its end
  static constexpr ssize_t k_blocked = -1;  // would block: poll again
  static constexpr ssize_t k_failed = -2;   // failed: `failure` says why

  enum class Handshake { k_done, k_pending, k_failed };

  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  virtual ~Transport() = default;

  // Goes on with what must happen before the first command (a plain socket:
  // nothing). k_pending: poll for wanted_events() and call it again.
  [[nodiscard]] virtual Handshake handshake(Failure& failure) = 0;
  [[nodiscard]] virtual ssize_t read(char* buf, size_t len, Failure& failure) = 0;
  [[nodiscard]] virtual ssize_t write(const char* buf, size_t len, Failure& failure) = 0;
  // The poll events it waits for itself: what a handshake waits for, or
  // POLLOUT while a read must first write (TLS).
  [[nodiscard]] virtual short wanted_events() const = 0;
  // Whether a short read may leave bytes behind that poll() does not show
  // (TLS's decrypted records): then the reader reads until it would block.
  [[nodiscard]] virtual bool may_hold_more() const = 0;
  // Whether bytes readable while nothing is owed mean that the peer is
  // leaving: end of stream, or a farewell such as "-ERR max number of
  // clients reached" before a close (TLS may send records of its own, such
  // as session tickets, while idle: never a sign).
  [[nodiscard]] virtual bool said_goodbye() const = 0;
};

// A plain socket `fd`; `where` names the server in failures.
[[nodiscard]] std::unique_ptr<Transport> plain_transport(int fd, std::string where);

// TLS over `fd` with the settings of `tls`, verifying the server as `host`
// (or as --tls-server-name); `where` names the server in failures.
[[nodiscard]] std::unique_ptr<Transport> tls_transport(int fd, const TlsContext& tls, const std::string& host,
                                                       std::string where);

}  // namespace redlock::redis
