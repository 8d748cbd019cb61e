// What `status` reads: the names of the locks under the prefix, and every
// server's view of each lock (its holders, and the head of its line of
// waiters), many locks a call.

#include "status/survey.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <span>

#include "lock/answers.hpp"
#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "lock/scripts.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace redlock::status {

using lock::Answer;
using lock::InspectArgs;
using lock::Keys;
using lock::LineArgs;
using lock::Script;
using lock::ScriptName;
using lock::ServerView;

namespace {

// How many locks one call reads. Reading 50 held locks takes a server
// some 0.9 ms (their lines 0.2 ms more): short enough not to hold up its
// other clients, and 10,000 locks are 400 calls sent in one round trip.
constexpr size_t k_batch = 50;

// An error reply of a Redis Cluster: the keys of one call lie in several
// slots, or elsewhere. The server's locks are then read one by one, each
// call following the cluster's redirections.
bool cluster_refusal(const redis::ScriptAnswer& a) {
  if (!a.reply.is_error()) {
    return false;
  }
  const std::string& e = a.reply.str;
  for (const char* word : {"CROSSSLOT", "MOVED", "ASK", "TRYAGAIN"}) {
    if (e.rfind(word, 0) == 0) {
      return true;
    }
  }
  return false;
}

std::string glob_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

// The locks of one call, [from, to) in the names asked for, and which
// script reads them.
struct Survey::Batch {
  size_t from = 0;
  size_t to = 0;
  bool line = false;  // the line script (else inspect)
};

// What each server answered for each lock so far ([lock][server]; nullopt:
// not yet), and the servers whose locks are read one by one.
struct Survey::Read {
  std::vector<std::vector<std::optional<Answer>>> held;   // the inspect script
  std::vector<std::vector<std::optional<Answer>>> lines;  // the line script
  std::vector<bool> one_by_one;
};

std::vector<std::vector<ServerView>> Survey::inspect(const std::vector<std::string>& names) {
  std::vector<Keys> keys;
  keys.reserve(names.size());
  for (const auto& name : names) {
    keys.push_back(lock::keys_for(m_servers.options().prefix, name));
  }
  const size_t n = m_servers.size();
  Read read{std::vector<std::vector<std::optional<Answer>>>(names.size(), std::vector<std::optional<Answer>>(n)),
            std::vector<std::vector<std::optional<Answer>>>(names.size(), std::vector<std::optional<Answer>>(n)),
            std::vector<bool>(n, false)};
  read_in_batches(keys, read);
  for (size_t i = 0; i < n; ++i) {
    if (read.one_by_one[i]) {
      read_one_by_one(i, keys, read);
    }
  }

  std::vector<std::vector<ServerView>> out;
  out.reserve(names.size());
  for (size_t j = 0; j < names.size(); ++j) {
    std::vector<Answer> held(n);
    for (size_t i = 0; i < n; ++i) {
      held[i] = read.held[j][i] ? std::move(*read.held[j][i])
                                : Answer{redis::Failure{ExitStatus::k_unavailable, "not read"}, {}, false, "", ""};
    }
    m_servers.refuse_shared_node(held);
    std::vector<redis::Failure> failures;
    std::vector<ServerView> views = lock::inspect_views(held, m_servers.names(), failures);
    m_servers.require_majority(failures);
    for (size_t i = 0; i < n; ++i) {
      // The line is news for status, never a reason to fail it.
      const std::optional<Answer>& line = read.lines[j][i];
      if (views[i].error || !line || line->failure) {
        continue;
      }
      if (auto head = lock::read_line_answer(line->reply)) {
        views[i].waiters = std::move(head->head);
        views[i].waiting = head->waiting;
      }
    }
    out.push_back(std::move(views));
  }
  return out;
}

std::vector<Survey::Batch> Survey::batches_of(size_t i, const std::vector<Keys>& keys, const Read& read,
                                              std::vector<redis::PipelinedCall>& calls) const {
  std::vector<Batch> batches;
  for (const bool line : {false, true}) {
    const auto& got = line ? read.lines : read.held;
    // Runs of locks not answered for yet, at most k_batch each.
    for (size_t from = 0; from < keys.size();) {
      if (got[from][i]) {
        ++from;
        continue;
      }
      size_t to = from + 1;
      while (to < keys.size() && to - from < k_batch && !got[to][i]) {
        ++to;
      }
      const std::span<const Keys> some(keys.data() + from, to - from);
      calls.push_back(line ? redis::PipelinedCall{&lock::script(ScriptName::k_line), to_args(some, LineArgs{})}
                           : redis::PipelinedCall{&lock::script(ScriptName::k_inspect), to_args(some, InspectArgs{})});
      batches.push_back(Batch{from, to, line});
      from = to;
    }
  }
  return batches;
}

void Survey::read_in_batches(const std::vector<Keys>& keys, Read& read) {
  const size_t n = m_servers.size();
  while (true) {
    // Every lock a server has not answered for yet, in batches: both
    // scripts' calls go out together, one round trip for all.
    std::vector<std::vector<redis::PipelinedCall>> calls(n);
    std::vector<std::vector<Batch>> batches(n);
    for (size_t i = 0; i < n; ++i) {
      if (!read.one_by_one[i]) {
        batches[i] = batches_of(i, keys, read, calls[i]);
      }
    }
    if (std::all_of(calls.begin(), calls.end(), [](const auto& c) { return c.empty(); })) {
      return;
    }
    auto said = m_servers.pipelined(calls);
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < said[i].size(); ++k) {
        take_batch(i, batches[i][k], std::move(said[i][k]), read);
      }
    }
  }
}

void Survey::take_batch(size_t i, const Batch& batch, redis::ScriptAnswer said, Read& read) {
  auto& got = batch.line ? read.lines : read.held;
  const std::string_view what = batch.line ? "line" : "inspect";
  std::optional<redis::Failure> failure = std::move(said.failure);
  if (failure && cluster_refusal(said)) {
    log_debug("{} is a Redis Cluster: its locks are read one by one", m_servers.names()[i]);
    read.one_by_one[i] = true;
    return;
  }
  std::optional<std::vector<redis::Reply>> parts;
  if (!failure) {
    parts = lock::per_lock_replies(std::move(said.reply), batch.line ? "lines" : "locks", batch.to - batch.from);
    if (!parts) {
      failure = lock::unexpected_reply(m_servers.names()[i], what);
    }
  }
  if (failure) {
    m_servers.warn_refused(i, *failure);
    log_debug("{} {}: {}", m_servers.names()[i], what, failure->message);
    for (size_t j = batch.from; j < batch.to; ++j) {
      got[j][i] = Answer{failure, {}, false, said.node, ""};
    }
    return;
  }
  // The locks it did not answer for (its reply was full) go in the next call.
  for (size_t k = 0; k < parts->size(); ++k) {
    got[batch.from + k][i] = Answer{std::nullopt, std::move((*parts)[k]), false, said.node, ""};
  }
}

void Survey::read_one_by_one(size_t i, const std::vector<Keys>& keys, Read& read) {
  for (size_t j = 0; j < keys.size(); ++j) {
    for (const bool line : {false, true}) {
      auto& got = line ? read.lines : read.held;
      if (!got[j][i]) {
        got[j][i] = read_one(i, keys[j], line);
      }
    }
  }
}

Answer Survey::read_one(size_t i, const Keys& keys, bool line) {
  std::vector<bool> only(m_servers.size(), false);
  only[i] = true;
  const std::span<const Keys> one(&keys, 1);
  // One lock's answer to one call of a script.
  const auto read = [&](const std::vector<std::string>& args, const Script& s, bool wait_out_tryagain = true) {
    Answer a = m_servers.round(args, s, only, {}, wait_out_tryagain)[i];
    if (a.failure) {
      return a;
    }
    auto parts = lock::per_lock_replies(std::move(a.reply), line ? "lines" : "locks", 1);
    a.reply = parts ? std::move(parts->front()) : redis::Reply{};
    if (!parts) {
      a.failure = lock::unexpected_reply(m_servers.names()[i], line ? "line" : "inspect");
    }
    return a;
  };
  if (line) {
    return read(to_args(one, LineArgs{}), lock::script(ScriptName::k_line));
  }
  // One call reads the four keys of the lock's slot. But a Redis Cluster
  // answers TRYAGAIN, while the slot moves, to a script whose keys are not
  // all on one node, and the marks seldom exist anywhere: then the hash and
  // the fence counter are read together, each mark on its own.
  using Part = InspectArgs::Part;
  const Script& inspect = lock::script(ScriptName::k_inspect);
  Answer whole = read(to_args(one, InspectArgs{Part::k_all}), inspect, false);
  if (!whole.failure || !whole.reply.is_error() || whole.reply.str.rfind("TRYAGAIN", 0) != 0) {
    return whole;
  }
  log_debug("{}: the slot of {} is moving; its keys are read apart", m_servers.names()[i], keys.lock);
  Answer a = read(to_args(one, InspectArgs{Part::k_lock}), inspect);
  for (const auto& [part, at] : {std::pair{Part::k_suspended, size_t{5}}, std::pair{Part::k_revoke, size_t{6}}}) {
    if (a.failure || !a.reply.is_array() || a.reply.elements.size() <= at) {
      return a;
    }
    Answer mark = read(to_args(one, InspectArgs{part}), inspect);
    if (mark.failure) {
      return mark;
    }
    if (mark.reply.is_array() && mark.reply.elements.size() > 4) {
      a.reply.elements[at] = std::move(mark.reply.elements[4]);  // the mark's fields, read as a hash's
    }
  }
  return a;
}

std::optional<std::vector<std::string>> Survey::read_index(size_t i, const std::string& key) {
  std::vector<std::string> keys;
  bool marked = false;
  // ZSCAN returns every entry that stays in the index from the first call
  // to the last, whatever comes and goes meanwhile.
  std::string cursor = "0";
  do {
    const redis::Reply r = m_servers.call(i, {"ZSCAN", key, cursor, "COUNT", "1000"});
    if (!r.is_array() || r.elements.size() != 2 || !r.elements[1].is_array()) {
      log_debug("{} has no index {} we can read: {}", m_servers.names()[i], key,
                r.is_error() ? r.str : "no ZSCAN reply");
      return std::nullopt;
    }
    cursor = r.elements[0].text();
    const auto& entries = r.elements[1].elements;
    for (size_t k = 0; k + 1 < entries.size(); k += 2) {
      if (entries[k].str == lock::k_schema) {
        marked = true;
      } else {
        keys.push_back(entries[k].str);
      }
    }
  } while (cursor != "0");
  if (!marked) {
    log_debug("{} has no index {}{}", m_servers.names()[i], key, keys.empty() ? "" : " with redlock's schema marker");
    return std::nullopt;
  }
  return keys;
}

namespace {

// The names of the locks whose keys are `keys` (a lock's hash, a suspended
// name's mark, with `ledgers` a ledger), added to `names`.
void add_names_of_keys(const std::string& prefix, const std::vector<std::string>& keys, bool ledgers,
                       std::vector<std::string>& names) {
  // A suspended name is listed by its suspension's key (suspend-3.lua).
  constexpr std::string_view k_suspended = ":suspended";
  for (const auto& key : keys) {
    if (auto name = lock::name_of_key(prefix, key)) {
      names.push_back(std::move(*name));
    } else if (auto ledger = ledgers ? lock::name_of_ledger(prefix, key) : std::nullopt) {
      names.push_back(std::move(*ledger));
    } else if (key.ends_with(k_suspended)) {
      if (auto marked = lock::name_of_key(prefix, std::string_view(key).substr(0, key.size() - k_suspended.size()))) {
        names.push_back(std::move(*marked));
      }
    }
  }
}

// Two servers given as independent masters whose scans met the same
// Cluster node IDs (`clusters`, sorted, per server) are one Cluster: 64.
void refuse_one_cluster(const std::vector<std::vector<std::string>>& clusters, const std::vector<std::string>& names) {
  for (size_t i = 0; i < clusters.size(); ++i) {
    for (size_t j = i + 1; j < clusters.size(); ++j) {
      std::vector<std::string> common;
      std::set_intersection(clusters[i].begin(), clusters[i].end(), clusters[j].begin(), clusters[j].end(),
                            std::back_inserter(common));
      if (!common.empty()) {
        throw UsageError(
            fmt::format("{} and {} are nodes of one Redis Cluster, not independent masters: give "
                        "one of them with --redis (redlock finds the others)",
                        names[i], names[j]));
      }
    }
  }
}

}  // namespace

std::vector<std::string> Survey::list(bool scan, bool ledgers, bool* indexed_only) {
  if (indexed_only != nullptr) {
    *indexed_only = false;
  }
  const std::string& prefix = m_servers.options().prefix;
  // With the ledgers, one SCAN finds both the locks' keys (ending in '}')
  // and their ledgers' (':runs'); keys of a line of waiters that match too
  // are left out below.
  const std::string pattern = glob_escape(prefix) + (ledgers ? "{*[}s]" : "{*}");
  std::vector<std::string> names;
  std::vector<redis::Failure> failures;
  std::vector<std::vector<std::string>> clusters(m_servers.size());  // node IDs, for a Cluster node
  const auto add = [&](const std::vector<std::string>& keys) { add_names_of_keys(prefix, keys, ledgers, names); };
  for (size_t i = 0; i < m_servers.size(); ++i) {
    try {
      // An entry whose lease has ended is read like the others, and left
      // out as free: the scripts prune them a few at a time.
      const std::optional<std::vector<std::string>> indexed = read_index(i, lock::index_key(prefix));
      if (indexed) {
        add(*indexed);
        // Where the index of held locks is kept, so is that of names with a
        // ledger, once a run was recorded: no index, no run to list (a
        // ledger of a version before it is found with --scan).
        if (ledgers) {
          if (const auto with_runs = read_index(i, lock::ledgers_key(prefix))) {
            add(*with_runs);
          }
        }
      }
      if (!indexed || scan) {
        add(m_servers.scan(i, pattern, clusters[i]));
      } else if (indexed_only != nullptr) {
        *indexed_only = true;
      }
    } catch (const Error& e) {
      failures.push_back({e.status(), e.what()});
    }
  }
  refuse_one_cluster(clusters, m_servers.names());
  m_servers.require_majority(failures);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace redlock::status
