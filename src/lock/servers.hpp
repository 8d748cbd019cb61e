#pragma once

// The servers a lock lives on: one connection to each, and the round that
// sends one script to all of them at once. Locker (one lock's operations),
// status's survey, the ledger's reading and the event stream all talk to
// the servers through this class, so what a round is (its timeouts, its
// cancel, the refusals said once, a failover noticed) is decided here once.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lock/scripts.hpp"
#include "redis/connection.hpp"
#include "redis/endpoint.hpp"
#include "redis/script.hpp"
#include "util/cancel.hpp"

namespace redlock::lock {

struct Answer;  // answers.hpp: what one server said to one script

struct Options {
  std::string prefix = "redlock:";
  redis::Timeouts timeouts;
  int min_replicas = 0;                    // WAIT for this many replicas after acquire/renew
  std::shared_ptr<redis::TlsContext> tls;  // for rediss:// endpoints
};

// N >= 1 independent Redis servers. Not thread-safe: one thread at a time.
class Servers {
 public:
  // `cancel` (the stop signals) abandons any round in flight when it comes.
  Servers(std::vector<redis::Endpoint> endpoints, Options options, Cancel cancel = {});
  ~Servers();
  Servers(const Servers&) = delete;
  Servers& operator=(const Servers&) = delete;

  [[nodiscard]] size_t size() const { return m_conns.size(); }
  // A simple majority of the servers.
  [[nodiscard]] size_t quorum() const;
  [[nodiscard]] const Options& options() const { return m_options; }
  // Each endpoint as display() shows it, for messages.
  [[nodiscard]] const std::vector<std::string>& names() const { return m_names; }
  [[nodiscard]] const std::vector<redis::Endpoint>& endpoints() const { return m_endpoints; }
  [[nodiscard]] redis::Connection& connection(size_t i) { return *m_conns[i]; }

  // Until reset_cancel(), `cancel` replaces the constructor's: when it
  // comes, it abandons any round in flight, and the servers still owed an
  // answer count as unavailable. For prompt shutdown.
  void set_cancel(Cancel cancel);
  void reset_cancel() { set_cancel(m_stop); }
  // What abandons a round now.
  [[nodiscard]] const Cancel& cancel() const { return m_cancel; }

  // One script on every targeted server (all if `targets` is empty) at
  // once; `args` is numkeys, keys and argv. Servers marked in `eval_body` get
  // EVAL with the script's body at once, for a request that has no second
  // chance (a NOSCRIPT answer may never be read). A Cluster's TRYAGAIN is
  // tried again within --timeout, unless `wait_out_tryagain` is false (then
  // it is the answer, a failure whose reply is the TRYAGAIN).
  // With `decided`, the round ends as soon as it says the answers in so
  // far decide it (in[i]: server i's is in); the servers still out then
  // fail as not having answered in time (redis::ScriptCall::decided).
  using Decided = std::function<bool(const std::vector<Answer>& answers, const std::vector<bool>& in)>;
  std::vector<Answer> round(const std::vector<std::string>& args, const Script& script,
                            const std::vector<bool>& targets, const std::vector<bool>& eval_body = {},
                            bool wait_out_tryagain = true, const Decided& decided = {});
  // Many calls on each server (calls[i] for server i), pipelined: for reads
  // of many locks in a few round trips. What a refusal means is the caller's.
  std::vector<std::vector<redis::ScriptAnswer>> pipelined(const std::vector<std::vector<redis::PipelinedCall>>& calls);
  // One command on server `i` (ZSCAN of an index, for status).
  redis::Reply call(size_t i, const std::vector<std::string>& argv);
  // The keys of server `i` matching `pattern`, by SCAN (never KEYS); on a
  // Redis Cluster node, every master's, whose node IDs go to `nodes`.
  std::vector<std::string> scan(size_t i, const std::string& pattern, std::vector<std::string>& nodes);

  // How a round reaches the servers: redis::run_script over the connections,
  // unless replaced. The seam of the lock's sequences (as ninja's
  // DiskInterface is its builder's): tests/unit/lock/acquire_sequence_test.cpp
  // answers for the servers, and every decision above runs unchanged.
  using RunScript =
      std::function<std::vector<redis::ScriptAnswer>(const redis::ScriptCall& call, const std::vector<bool>& targets)>;
  void set_run_script(RunScript run) { m_run_script = std::move(run); }

  // What the servers said, as the lock reads it: a reply of no known shape
  // (its first element names no outcome) is an unexpected reply.
  [[nodiscard]] std::vector<Answer> read_answers(std::vector<redis::ScriptAnswer> said, const Script& script) const;
  // Two servers whose answers came from one node (two nodes of one Redis
  // Cluster, or one server named twice): why that is refused, if so.
  [[nodiscard]] std::optional<std::string> shared_node(const std::vector<Answer>& answers) const;
  // Throws a UsageError (64) when shared_node() finds one.
  void refuse_shared_node(const std::vector<Answer>& answers) const;
  // Throws quorum_failure() when `failures` leave fewer than a majority of
  // the servers.
  void require_majority(const std::vector<redis::Failure>& failures) const;

  // A new connection to server `i` in place of the old, with `timeouts`;
  // what the old one learned of the server's refusals is kept.
  void reconnect(size_t i, const redis::Timeouts& timeouts);
  // With several servers, a server that refuses us (TLS verification,
  // password, ACL) is said once on stderr, even under -q: the others may
  // carry on without it, and nobody would know the Redlock runs short. The
  // line is held back (hold_warning): a command that fails names the server
  // in its one line instead.
  void warn_refused(size_t i, const redis::Failure& failure);
  // redis+sentinel:// servers whose sentinels now name another master than
  // the one the open connection talks to (a failover since the last round).
  std::vector<bool> failed_over();

 private:
  std::vector<redis::Endpoint> m_endpoints;
  std::vector<std::string> m_names;
  Options m_options;
  std::vector<std::unique_ptr<redis::Connection>> m_conns;
  std::vector<bool> m_warned;  // per server: its refusal was said
  Cancel m_stop;               // the constructor's
  Cancel m_cancel;             // what abandons a round now
  RunScript m_run_script;      // empty: redis::run_script
};

// Whether any URL of `urls` (a comma-separated list, as --redis takes one)
// carries a password, its own or its sentinels': the configuration file,
// read by every user of the host, must not. Throws UsageError for a URL
// that does not parse.
[[nodiscard]] bool names_password(std::string_view urls);

}  // namespace redlock::lock
