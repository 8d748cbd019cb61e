#pragma once

// A revoke of the lock exec holds (redlock break --grace), heard at once: the
// supervisor ends the command when it comes, as on a lost lock but while
// the lock is still renewed, and exec then gives the lock back.
// RevokeListener is the real one, over the lock's servers; tests of the
// supervisor may give their own.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lock/locker.hpp"
#include "lock/revoke_watch.hpp"
#include "util/duration.hpp"
#include "util/fd.hpp"

namespace redlock::exec {

// Who revoked the lock, and the grace they gave; or who broke it (the lock
// reads it: lock/revoke_watch).
using RevokeNotice = lock::RevokeNotice;

// The line's words for a break heard of: "deploy was broken by web-3 (pid
// 4411; redlock break)", without who when the break did not say.
[[nodiscard]] std::string broken_reason(const RevokeNotice& n);

class Revocation {
 public:
  Revocation() = default;
  virtual ~Revocation() = default;
  Revocation(const Revocation&) = delete;
  Revocation& operator=(const Revocation&) = delete;

  // Starts listening (once); a revoke made before is heard too.
  virtual void start() = 0;
  [[nodiscard]] virtual bool started() const = 0;
  // Readable once the lock was revoked.
  [[nodiscard]] virtual int fd() const = 0;
  // Who revoked it (once fd() became readable).
  [[nodiscard]] virtual RevokeNotice notice() const = 0;
};

// Listens on the lock's revoke channel, and on its run's own (the revoke
// channel, ':' and the run: lock::hold_id of its token; a break of the hold
// is told there too), on every server from a thread of its own, through a
// lock::RevokeWatch (one subscriber connection per server), for a message
// naming this hold's run; once subscribed it has the lock's revoke mark
// read, for a revoke that came before. When every subscriber has failed
// (a restart, a failover) they are made again a second later.
class RevokeListener final : public Revocation {
 public:
  // `locker` (its endpoints and options) outlives the listener.
  // Several `names` (a lock of several names) are listened for at once: a
  // revoke of any is a revoke of the hold.
  RevokeListener(const lock::Locker& locker, const std::vector<std::string>& names, const std::string& token);
  ~RevokeListener() override;

  void start() override;
  [[nodiscard]] bool started() const override { return m_thread.joinable(); }
  [[nodiscard]] int fd() const override { return m_revoked.get(); }
  [[nodiscard]] RevokeNotice notice() const override;

 private:
  void loop();
  // Subscribes and listens until the connections fail (false) or a revoke
  // or the stop comes (true).
  bool listen_once();
  // Keeps `n` for notice() and makes fd() readable.
  void take_notice(RevokeNotice n);

  const lock::Locker& m_locker;
  std::vector<std::string> m_names;
  std::string m_token;
  Fd m_stop;
  Fd m_revoked;
  std::thread m_thread;
  mutable std::mutex m_mutex;
  RevokeNotice m_notice;
};

}  // namespace redlock::exec
