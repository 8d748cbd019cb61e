#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis/endpoint.hpp"
#include "redis/failure.hpp"
#include "redis/reply.hpp"
#include "redis/tls.hpp"
#include "util/cancel.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"
#include "util/exit_status.hpp"
#include "util/fd.hpp"

struct redisReader;

namespace redlock::redis {

class Sentinel;
class Transport;

struct Timeouts {
  Millis connect{1000};  // to establish a connection (TCP/Unix handshake)
  Millis command{1000};  // for each round trip once connected
};

// One non-blocking connection to one Redis server, driven by poll() from
// outside (see fanout.hpp) so that many servers can be served in one loop
// under one deadline. Commands are queued as argument vectors; replies come
// back in order. AUTH and SELECT are sent first, pipelined, whenever the
// connection is (re)established; rediss:// endpoints first complete a TLS
// handshake (verified against `tls`; see transport.hpp). A
// redis+sentinel:// endpoint connects to the master its sentinels name
// (see sentinel.hpp). A timeout or I/O error closes the socket: the next
// queued command reconnects.
class Connection {
 public:
  // `cancel` cuts short what the connection waits for on its own: the
  // sentinels' answers (and call()'s round trip).
  Connection(Endpoint endpoint, Timeouts timeouts, std::shared_ptr<TlsContext> tls = nullptr, Cancel cancel = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Queues a command; connects first if needed. Never blocks.
  void queue(const std::vector<std::string>& argv);
  // The same, with the arguments where they are (none is copied but into
  // the outgoing buffer).
  void queue(std::span<const std::string_view> argv);

  // I/O plumbing for the poll loop.
  [[nodiscard]] int fd() const { return m_fd.get(); }
  [[nodiscard]] short wanted_events() const;
  void on_events(short revents);
  // When the current phase (connecting, or waiting for replies) times out.
  [[nodiscard]] std::optional<TimePoint> deadline() const;
  // Gives up on the current phase: marks the connection failed and closes
  // it; but a request already sent leaves the socket open, as after
  // fail_cancelled(), for keep_for_follow_up().
  void fail_timeout();
  // After a timeout that kept the socket: the next command (a release of
  // what the abandoned request would grant) goes on that socket, behind the
  // request, so a stopped server that wakes up runs both, in order. Without
  // this call the next command reconnects. The follow-up waits at most
  // `timeout` for its answer.
  void keep_for_follow_up(Millis timeout);
  // Gives up on the current phase before its deadline, as on a timeout:
  // the caller has what it needs from other servers (a round a majority
  // decided). A connect under way is closed; a request already sent keeps
  // the socket for keep_for_follow_up(), its late replies dropped, never
  // taken for the replies to later commands; the next command reconnects.
  void abandon() { fail_timeout(); }
  // Abandons the current phase (the caller was cancelled): failed, but a
  // connected socket stays open, so that what is queued next (a release of
  // what was just asked for) reaches the server after the abandoned command,
  // in order, even when the server is stopped. Their replies are discarded.
  void fail_cancelled();
  // Writes what is queued as far as the socket takes it, without blocking.
  void flush();

  // True when every queued command has its reply (or the connection failed).
  [[nodiscard]] bool settled() const { return m_failure.has_value() || m_awaiting == 0; }
  [[nodiscard]] bool has_replies() const { return !m_replies.empty(); }
  // Replies received so far (in order) — moved out.
  [[nodiscard]] std::vector<Reply> take_replies();
  // Set when the connection failed; cleared by the next queue() / reset().
  [[nodiscard]] const std::optional<Failure>& failure() const { return m_failure; }
  // Forgets the failure and any partial state; the next queue() reconnects
  // (or, after fail_cancelled(), goes on behind the abandoned commands).
  void reset();

  [[nodiscard]] const Endpoint& endpoint() const { return m_endpoint; }
  // True when no socket is open: never opened, or closed (a peer that
  // closed while nothing was owed closes it quietly, without a failure).
  [[nodiscard]] bool closed() const { return m_state == State::k_closed; }
  // True while the socket is connected and usable (after a cancellation
  // too): a command queued now follows everything sent before it, in order.
  [[nodiscard]] bool connected() const { return linked(); }

  [[nodiscard]] const Cancel& cancel() const { return m_cancel; }
  void set_cancel(Cancel cancel) { m_cancel = cancel; }

  // Whether the server refuses a script the keys it can do without
  // (Script::optional_keys): learned from its answers (see run_script),
  // and kept as long as the connection object.
  [[nodiscard]] bool refuses_optional_keys() const { return m_refuses_optional_keys; }
  void refuse_optional_keys() { m_refuses_optional_keys = true; }

  // redis+sentinel:// only: asks the sentinels (one command, to the first
  // that answers) which server is the master now. True when it is no longer
  // the one this open, idle connection talks to: the connection is then
  // closed, so that the next command goes to the new master. False when it
  // is the same, when no sentinel answers, or when there is nothing to check.
  // Blocking, bounded by the per-sentinel timeouts; cancel() cuts it short.
  [[nodiscard]] bool master_changed();
  // The master this connection reached through the sentinels ("host:port"),
  // empty for other endpoints or before a connection.
  [[nodiscard]] std::string master_address() const;

 private:
  // Where the socket stands. A failure closes it (k_closed), except after
  // a cancellation, or a timeout that left a request on it: then the
  // failure is set while the socket stays connected (fail_cancelled()).
  enum class State {
    k_closed,      // no socket
    k_connecting,  // connect() under way
    k_handshake,   // the transport's handshake under way (TLS's)
    k_confirming,  // on the master a sentinel named: ROLE must say it is one
    k_ready,       // connected: commands go out as they are queued
    k_stale,       // connected, kept after a timeout: only a follow-up goes on it
    k_follow_up,   // stale, and keep_for_follow_up() lets the next command go on it
  };
  // The set-up commands, sent in this order on every new socket.
  enum class Setup { k_auth, k_select, k_role };

  // True in the states with a connected socket.
  [[nodiscard]] bool linked() const;
  void start_connect();
  // True when the peer closed (or wrote to) the connection while no request
  // was outstanding: it cannot carry the next one.
  [[nodiscard]] bool closed_while_idle() const;
  // Opens the socket to the endpoint (for redis+sentinel://, to the master
  // the sentinels name) and queues AUTH, SELECT and, for a sentinel's
  // master, ROLE. `deadline`: when connecting must be done (default: the
  // connect timeout from now, counted after the sentinels answered).
  void open_socket(std::optional<TimePoint> deadline = std::nullopt);
  // The reply to ROLE: a master lets the held commands go; anything else
  // closes the socket and asks the sentinels again (false: stop reading).
  bool confirm_master(const Reply& role);
  void finish_connect();
  // Goes on with the transport's handshake; once it is done, the
  // connection is ready (or confirming, on a sentinel's master).
  void handshake();
  // Lets the held commands go after the set-up commands.
  void become_ready();
  void fail(ExitStatus status, std::string message);
  void fail(Failure failure) { fail(failure.status, std::move(failure.message)); }
  void read_some();
  // The server closed its end: a failure if replies are owed, else a quiet close.
  void on_peer_closed();
  // Takes every whole reply the reader holds (`complete` set if there was
  // one). False: stop reading (see file_reply; or a malformed reply).
  bool take_parsed_replies(bool& complete);
  // Checks a reply to AUTH/SELECT/ROLE, drops one to an abandoned command,
  // or keeps it for the caller. False: stop reading (the connection failed,
  // or it is reconnecting to the master the sentinels name).
  bool file_reply(Reply reply);
  // AUTH or SELECT answered `error`: fails with the matching status.
  void refuse_setup(const std::string& error, bool auth);
  void write_some();
  void close_socket();

  Endpoint m_endpoint;
  Timeouts m_timeouts;
  Cancel m_cancel;
  State m_state = State::k_closed;
  Fd m_fd;
  std::shared_ptr<TlsContext> m_tls;
  std::unique_ptr<Transport> m_transport;  // chosen once the socket connects
  std::unique_ptr<redisReader, void (*)(redisReader*)> m_reader;
  std::string m_out;          // formatted commands not yet written
  std::string m_held;         // commands queued before the connection was ready
  std::deque<Setup> m_setup;  // set-up commands whose replies are still to be checked
  size_t m_awaiting = 0;      // replies owed to queued commands (not to set-up ones)
  size_t m_discard = 0;       // replies owed to abandoned commands, dropped when they come
  std::vector<Reply> m_replies;
  std::optional<Failure> m_failure;
  std::optional<TimePoint> m_deadline;
  // redis+sentinel://: its sentinels, and the connect's deadline (kept when
  // they must be asked again).
  std::unique_ptr<Sentinel> m_sentinel;
  std::optional<TimePoint> m_connect_deadline;
  bool m_refuses_optional_keys = false;
};

}  // namespace redlock::redis
