#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection.hpp"
#include "redis/reply.hpp"
#include "util/cancel.hpp"

namespace redlock::redis {

// A Lua script with its SHA-1, so it can be sent as EVALSHA and, when the
// server answers NOSCRIPT (first use, or after a restart), as EVAL.
struct Script {
  std::string_view name;  // for messages: "acquire", "release", …
  std::string_view body;
  std::string_view sha1;  // 40 hex digits, worked out when redlock was compiled
  // How many of its last KEYS it can do without. A server that will not
  // have them named beside the others (a Redis Cluster, whose commands
  // name keys of one slot, answers CROSSSLOT; a user whose ACL does not
  // cover them, NOPERM) gets the script without them, from then on.
  int optional_keys = 0;
};

// What one server made of the script.
struct ScriptAnswer {
  // No usable answer: unreachable, refused, timed out, or an error reply
  // (with the status it stands for and a line naming the server).
  std::optional<Failure> failure;
  Reply reply;                  // the script's reply when there is no failure
  bool replicas_short = false;  // WAIT came back with fewer replicas than asked
  // The node that ran the script: its numeric address ("127.0.0.1:7001",
  // or a socket's path), "" if unknown. Two servers that reached the same
  // node are one server.
  std::string node;
  std::string wait_refused;  // WAIT's error reply (a managed Redis refuses it), "" if none
};

// One script to run on several servers at once.
struct ScriptCall {
  const Script* script = nullptr;
  std::vector<std::string> args;  // numkeys, keys, argv
  // Servers (by index) that get EVAL with the body at once, for a request
  // that has no second chance (a NOSCRIPT answer may never be read).
  std::vector<bool> eval_body;
  // After the script, WAIT for this many replicas (0: no WAIT), for half the
  // command timeout so that WAIT answers before the round trip gives up.
  int min_replicas = 0;
  // For connections opened on the way (a Cluster's MOVED and ASK), and the
  // budget for retrying a Cluster's TRYAGAIN, counted from the call.
  Timeouts timeouts;
  // Whether TRYAGAIN is retried (false: it is the answer at once, for a
  // read that is only news, such as status's line of waiters, whose keys
  // exist nowhere while nobody waits and so split from the lock's until a
  // migration ends).
  bool retry_tryagain = true;
  std::shared_ptr<TlsContext> tls;
  Cancel cancel;  // cuts every wait short, as for run_all
  // Whether the round is decided by the answers in so far (answers[i] is
  // server i's when in[i]; a server not targeted is in, with its "not
  // asked" failure), asked each time a server's answer comes in. Once it
  // says so, the servers still out are abandoned (Connection::abandon)
  // with a failure that says so. Empty: every server's answer is waited
  // for, each within its own timeouts.
  std::function<bool(const std::vector<ScriptAnswer>& answers, const std::vector<bool>& in)> decided;
};

// One call of a script in a pipeline: the script, and what follows its
// SHA-1 (numkeys, keys, argv).
struct PipelinedCall {
  const Script* script = nullptr;
  std::vector<std::string> args;
};

// Runs every server's calls at once (calls[i] on conns[i], in order; a
// server without calls is not asked), each server's pipelined in one round
// trip: the first call of each script as EVAL with its body, the others as
// EVALSHA behind it (one more round trip for calls answered NOSCRIPT, should
// the server's script cache be flushed meanwhile). Nothing is followed: a Redis Cluster's redirection, like any error
// reply, is that call's failure, with the error kept as its reply. A server
// that fails fails every call it was sent. For reads that go together, such
// as status's of many locks.
[[nodiscard]] std::vector<std::vector<ScriptAnswer>> run_pipelined(std::span<std::unique_ptr<Connection>> conns,
                                                                   const std::vector<std::vector<PipelinedCall>>& calls,
                                                                   const Cancel& cancel);

// Runs `call` on every connection marked in `targets` (all if empty), at
// once, under one poll loop, and speaks the protocol a script needs:
// - EVALSHA, and EVAL with the body when the server answers NOSCRIPT;
// - Redis Cluster: MOVED replaces the connection with one to the node named
//   (for good: the slot lives there now); ASK sends ASKING and the script to
//   the node named, once, keeping the connection where it is (the slot is
//   moving); TRYAGAIN (a moving slot whose keys are split between the two
//   nodes) is retried with a short backoff within the command timeout;
// - Sentinel: READONLY (a master demoted under an open connection) closes
//   the connection, so that the script goes to the master the sentinels
//   name now;
// - the script's optional keys left out where the server refuses them
//   (Script::optional_keys): sent again without them, once per connection;
// - WAIT for `min_replicas` after the script.
// Each server is asked again as soon as its answer asks for it, in one
// poll loop over all of them, so that `call.decided` can end the round
// whatever the others are doing (connecting, retrying, silent).
// Servers not targeted get a "not asked" failure.
[[nodiscard]] std::vector<ScriptAnswer> run_script(std::span<std::unique_ptr<Connection>> conns, const ScriptCall& call,
                                                   const std::vector<bool>& targets);

}  // namespace redlock::redis
