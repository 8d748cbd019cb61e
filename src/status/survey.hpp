#pragma once

// status's reading of the servers (over lock::Servers): the names of the
// locks under the prefix, and every server's view of many locks, many locks
// a call. The event stream reads the holds it follows through it too.

#include <optional>
#include <string>
#include <vector>

#include "lock/keys.hpp"
#include "lock/servers.hpp"
#include "lock/view.hpp"

namespace redlock::status {

class Survey {
 public:
  // Reads through `servers`, which must outlive the survey.
  explicit Survey(lock::Servers& servers) : m_servers(servers) {}

  // Every server's view of each of `names`, in their order: its holders,
  // and the head of its line of waiters. Many locks a call, the calls to a
  // server pipelined: a few round trips for thousands of locks (on a Redis
  // Cluster, whose calls may only name keys of one slot, a call per lock).
  // Too few servers answering for a lock is an Error, as for any round.
  [[nodiscard]] std::vector<std::vector<lock::ServerView>> inspect(const std::vector<std::string>& names);
  // Names of every lock under the prefix, sorted: from each server's index
  // of held locks (lua/includes/index.lua), or, where it has none (a Redis
  // Cluster, a server no redlock since 0.2 has held a lock on) and with
  // `scan`, from SCAN (never KEYS), which reads the whole keyspace. With
  // `ledgers`, the names with a run ledger too, whatever their locks: from
  // the index of names with a ledger (includes/ledger.lua), or by the same
  // SCAN where that one is made. `indexed_only`, when given, is set to
  // whether some server was read from its index alone (no SCAN): a lock an
  // old version holds there is then not listed.
  [[nodiscard]] std::vector<std::string> list(bool scan = false, bool ledgers = false, bool* indexed_only = nullptr);

 private:
  // What each server has answered for each lock so far, and the locks of
  // one call (survey.cpp).
  struct Read;
  struct Batch;
  // Reads every lock on every server in batches, pipelined, until each has
  // an answer, or its server turns out to be a Redis Cluster.
  void read_in_batches(const std::vector<lock::Keys>& keys, Read& read);
  // The calls (into `calls`) and batches that read server `i`'s locks not
  // read yet.
  [[nodiscard]] std::vector<Batch> batches_of(size_t i, const std::vector<lock::Keys>& keys, const Read& read,
                                              std::vector<redis::PipelinedCall>& calls) const;
  // Files server `i`'s answer to one call under its locks.
  void take_batch(size_t i, const Batch& batch, redis::ScriptAnswer said, Read& read);
  // Reads server `i`'s locks not read yet, a round per lock and script.
  void read_one_by_one(size_t i, const std::vector<lock::Keys>& keys, Read& read);
  // Server `i`'s answer for one lock, the line script's or inspect's.
  [[nodiscard]] lock::Answer read_one(size_t i, const lock::Keys& keys, bool line);
  // The lock keys in server `i`'s index of held locks, or nullopt when it
  // has none redlock keeps (absent, of another type or without the schema
  // marker; or a Redis Cluster, or a user, that will not have it read).
  [[nodiscard]] std::optional<std::vector<std::string>> read_index(size_t i, const std::string& key);

  lock::Servers& m_servers;
};

}  // namespace redlock::status
