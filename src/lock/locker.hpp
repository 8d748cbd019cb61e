#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lock/acquire_outcome.hpp"
#include "lock/ledger.hpp"
#include "lock/quorum.hpp"
#include "lock/scripts.hpp"
#include "lock/servers.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "util/cancel.hpp"
#include "util/duration.hpp"

namespace redlock::lock {

struct Answer;  // answers.hpp: what one server said to one script

// Who is asking: stored in the lock hash for `status`.
struct Owner {
  std::string host;
  long long pid = 0;
  std::string cmd;
  std::string note;  // --note: kept with a new hold ("" for none)
};

// Where an acquire stands with respect to the line of waiters.
struct Place {
  bool fair = true;                 // respect the line (false: --unfair, race for the lock as it frees)
  std::string id;                   // this waiter's id in the line; empty: one try, do not join it
  Millis lease{0};                  // how long the entry lives without a heartbeat (a new try)
  std::optional<Millis> wait_left;  // how much longer it will wait (nullopt: forever)
  // Its ticket (order in line): "" for one server (the server numbers its
  // line); over several, "clock" until the servers first answer, then the
  // ticket it settled on (Busy::ticket), the same on every server.
  std::string ticket;
};

struct Renewed {
  Millis ttl{0};
  Millis validity{0};     // time left, as the answers came in
  TimePoint valid_until;  // the renewal's send time + ttl less the clock drift
};
// The token does not hold the lock. `foreign` is set when the key now holds
// something redlock did not write (it is left alone).
struct NotHeld {
  bool foreign = false;
  std::string what;  // the foreign key's type
};
using RenewOutcome = std::variant<Renewed, NotHeld>;

// How exec's run ended, for the run ledger: its outcome and exit status,
// and what it was (for a ledger that lost the entry its acquire wrote).
struct RunEnd {
  Outcome outcome = Outcome::k_ok;
  std::optional<int> exit;
  Owner owner;
  long long fence = 0;
};

// What `break` did to one lock: the decision (never unavailable: that is
// thrown) and each server's part in it ("broken", "free", "foreign" or
// "unreachable").
struct Broken {
  BreakDecision decision;
  std::vector<std::string> servers;
};

// The lock core over N >= 1 independent Redis servers. N = 1 is a plain
// Redis lock; N > 1 is the Redlock algorithm (quorum N/2+1, validity =
// ttl - elapsed - drift). Each operation is one parallel round: every server
// gets the same script at once, under the per-server timeout.
//
// Expected outcomes are return values; failures that stop the command
// (unreachable quorum 69, error replies 76, refused 77) are thrown as Error.
// Not thread-safe: one thread at a time may use a Locker.
class Locker {
 public:
  // `cancel` (the stop signals) abandons any round in flight when it comes.
  Locker(std::vector<redis::Endpoint> endpoints, Options options, Cancel cancel = {});
  ~Locker();

  // The servers and their connections: for status's survey, the ledger's
  // reading and the event stream, which read what the operations here write.
  [[nodiscard]] Servers& servers() { return m_servers; }
  [[nodiscard]] size_t size() const { return m_servers.size(); }
  [[nodiscard]] size_t quorum() const { return m_servers.quorum(); }
  [[nodiscard]] const Options& options() const { return m_servers.options(); }
  [[nodiscard]] const std::vector<std::string>& endpoint_names() const { return m_servers.names(); }

  // One try. `reenter` is a token that may already hold the lock (count+1);
  // otherwise a fresh token is drawn. On failure with N > 1, every server is
  // released before returning.
  // A NAME held in another mode, or as a semaphore with another limit, is a
  // UsageError (64).
  [[nodiscard]] AcquireOutcome try_acquire(const std::string& name, Millis ttl, const std::string& reenter,
                                           const Owner& owner, const Claim& claim = Claim{},
                                           const Place& place = Place{});
  // Takes waiter `id` out of the line of `name` on every server (its wait is
  // over), waking whoever it held up. Failures are ignored: an entry that
  // is not removed dies with its lease.
  // Only the `targets` servers, if given.
  void leave(const std::string& name, const std::string& id, const std::vector<bool>& targets = {});
  // Drops one level of the lock held by `token`, unless it holds no more
  // than `floor` levels (those of the exec that runs the caller): k_floor.
  // With `drop_run`, the run that the hold's acquire started (Claim::
  // record_run) leaves the ledger: a lock taken and given back unused.
  [[nodiscard]] ReleaseOutcome release(const std::string& name, const std::string& token, long long floor = 0,
                                       bool drop_run = false);
  // Ends the hold of `token`: one level, or every level with `whole`. When
  // the last level goes less than `min_hold` after the lock was taken, the
  // lock stays held under no token until then (kept): its token can no
  // longer renew or release it. A hold of no more than `floor` levels is
  // left alone (k_floor). With `run`, the run's end goes to the ledger in
  // the same step (as lost where the token no longer holds the lock).
  [[nodiscard]] Ended finish(const std::string& name, const std::string& token, Millis min_hold, bool whole,
                             long long floor = 0, const std::optional<RunEnd>& run = std::nullopt);
  // Begins the run of the hold of `token` on `name` (taken with
  // Claim::run_later) where the token holds it, as `owner` runs it; the run
  // before it that never ended, when a server names one. A server that
  // fails is left out: the release records the run's end all the same.
  [[nodiscard]] std::optional<RunSeen> start_run(const std::string& name, const std::string& token, const Owner& owner);
  // Extends the lock held by `token` to `ttl` from now.
  [[nodiscard]] RenewOutcome renew(const std::string& name, const std::string& token, Millis ttl);
  // Removes `name` on every server, whoever holds it and in whatever mode,
  // and wakes its waiters; the fence counter is left alone. Too few servers
  // answering is an Error (69/77), like a failed round. The execs that held
  // it hear at once that it was broken, and by `by`.
  [[nodiscard]] Broken break_lock(const std::string& name, const Owner& by);
  // break_lock of only the holders whose runs are in `runs` ("" for a lock
  // kept under no token): a holder that came since is left alone.
  [[nodiscard]] Broken break_runs(const std::string& name, const std::vector<std::string>& runs, const Owner& by);

  // As Servers::set_cancel: for prompt shutdown.
  void set_cancel(Cancel cancel) { m_servers.set_cancel(cancel); }
  void reset_cancel() { m_servers.reset_cancel(); }
  [[nodiscard]] const Cancel& cancel() const { return m_servers.cancel(); }
  // The endpoints, for subscribers that share them and the timeouts.
  [[nodiscard]] const std::vector<redis::Endpoint>& endpoints() const { return m_servers.endpoints(); }

 private:
  // Raises the fence counters of the servers `behind` to `fence` under
  // `holder`'s hold: each one's answer (none when none is behind).
  [[nodiscard]] std::vector<RaiseVote> raise_fences(const Keys& keys, const std::string& holder, long long fence,
                                                    const std::vector<bool>& behind);
  // Undoes every grant and re-entry in `votes` (an acquire refused after its round).
  void undo_votes(const std::string& name, const std::string& token, const std::string& reenter,
                  const std::vector<AcquireVote>& votes, const std::vector<bool>& failed, bool drop_run);
  // A release round is decided once a majority answered (release_decided).
  [[nodiscard]] Servers::Decided release_round_decided() const;
  // Every server's answer to the release script read as a vote; a foreign
  // key on the only server is an Error (76).
  [[nodiscard]] std::vector<ReleaseVote> release_votes(const std::string& name,
                                                       const std::vector<Answer>& answers) const;
  // Undoes what a failed acquire may have taken: releases `token` (one
  // level) on the targeted servers, ignoring failures, without waking
  // waiters unless `announce`. A server that just failed gets the request
  // on a new connection and only a short wait: it may be hung, and what
  // matters is that the release is queued behind the acquire it may still run.
  // With `drop_run`, the run its acquire started leaves the ledger.
  void undo(const std::string& name, const std::string& token, const std::vector<bool>& targets,
            const std::vector<bool>& just_failed, bool announce, bool drop_run = false);

  Servers m_servers;
};

}  // namespace redlock::lock
