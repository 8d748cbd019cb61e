#pragma once

// One Redis Cluster of three masters for this whole test binary (made on
// first use, in seconds, by redis-cli --cluster create), and the operator's
// tools to move a slot between nodes by hand, step by step, so that a test
// decides exactly when redlock meets ASK and TRYAGAIN.

#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"

namespace redlock::test {

class Cluster {
 public:
  Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  [[nodiscard]] size_t size() const { return m_nodes.size(); }
  [[nodiscard]] RedisServer& node(size_t i) { return *m_nodes.at(i); }
  [[nodiscard]] std::string url(size_t i) const { return m_nodes.at(i)->url(); }
  [[nodiscard]] const std::string& id(size_t i) const { return m_ids.at(i); }

  // The hash slot of a key, and the node that owns it (as node 0 sees it).
  [[nodiscard]] int slot_of(const std::string& key);
  [[nodiscard]] size_t owner(int slot);
  // How many nodes hold `key` (a node that does not serve its slot answers
  // MOVED or ASK, which counts as not holding it).
  [[nodiscard]] int holders(const std::string& key);
  // Every key under `pattern` on every node (SCAN), sorted.
  [[nodiscard]] std::vector<std::string> keys(const std::string& pattern);
  // How many error replies starting with `prefix` (ASK, TRYAGAIN, MOVED)
  // node i has sent since it started (INFO errorstats).
  [[nodiscard]] long long errors(size_t i, const std::string& prefix);
  // The node of a migration from `from` to `to` that answers TRYAGAIN to a
  // script of several keys when the source still holds some of them but not
  // all. From Redis 7.0 the source does (redis/redis#9526: cluster.c's
  // getNodeByQuery answers TRYAGAIN when it has `existing_keys` and
  // `missing_keys`); before, it answers ASK for any key it lacks (6.2.16's
  // `if (migrating_slot && missing_keys)`), and the target, asked with
  // ASKING, answers TRYAGAIN as it lacks the keys the source kept
  // (`multiple_keys && missing_keys`: CLUSTER_REDIR_UNSTABLE). Either way
  // the script runs nowhere until its keys meet.
  [[nodiscard]] size_t split_answered_by(size_t from, size_t to);

  // A slot migration, as redis-cli --cluster reshard does it:
  // begin (IMPORTING on the target, MIGRATING on the source), move keys
  // (MIGRATE), finish (SETSLOT NODE on every node, target first).
  void begin_migration(int slot, size_t from, size_t to);
  void move_key(const std::string& key, size_t from, size_t to);
  // Moves whatever keys are left in the slot, then finishes.
  void finish_migration(int slot, size_t from, size_t to);
  // All of it at once.
  void migrate(int slot, size_t from, size_t to);

  // A name of the form `<stem>-<n>` whose lock lives on node `on`.
  [[nodiscard]] std::string name_on(const std::string& stem, size_t on);

 private:
  std::vector<std::unique_ptr<RedisServer>> m_nodes;
  std::vector<std::string> m_ids;
  int m_version = 0;  // major*100+minor of redis_version (Valkey: the Redis it matches)
};

// The cluster of this test binary.
Cluster& cluster();

}  // namespace redlock::test
