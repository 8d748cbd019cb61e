#include "status/verdict.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "lock/layout.hpp"
#include "lock/quorum.hpp"

namespace redlock::status {

using lock::Claim;
using lock::HolderView;
using lock::PendingRevoke;
using lock::ServerView;
using lock::WaiterView;

namespace {

Claim claim_of(Claim::Mode mode, long long limit) {
  Claim c;
  c.mode = mode;
  if (mode == Claim::Mode::k_semaphore) {
    c.limit = static_cast<int>(std::clamp<long long>(limit, 1, 1'000'000));
  }
  return c;
}

// The suspension any server has, and the revokes pending for the holders
// found (a mark names runs; one of a past holder is not shown).
void note_marks(Verdict& v) {
  for (const auto& s : v.views) {
    if (!v.suspension && s.suspension) {
      v.suspension = s.suspension;
    }
    for (const auto& r : s.revokes) {
      const bool holds = std::any_of(v.holders.begin(), v.holders.end(),
                                     [&r](const HolderView& h) { return !h.kept && lock::hold_id(h.token) == r.run; });
      const bool known =
          std::any_of(v.revokes.begin(), v.revokes.end(), [&r](const PendingRevoke& x) { return x.run == r.run; });
      if (holds && !known) {
        v.revokes.push_back(r);
      }
    }
  }
}

}  // namespace

Verdict judge(std::string name, std::vector<ServerView> views) {
  Verdict v;
  v.name = std::move(name);
  v.views = std::move(views);
  const size_t n = v.views.size();
  // token -> (servers that hold it, the merged view: smallest TTL, largest fence and count)
  std::map<std::string, std::pair<size_t, HolderView>> seen;
  size_t foreign = 0;
  bool first = true;  // the first holder seen: its server says the mode
  for (const auto& s : v.views) {
    if (s.foreign) {
      ++foreign;
      v.foreign_type = s.type;
      continue;
    }
    for (const auto& h : s.holders) {
      auto [it, fresh] = seen.try_emplace(h.token, 0, h);
      if (!fresh) {
        auto& m = it->second.second;
        m.ttl_ms = std::min(m.ttl_ms, h.ttl_ms);
        m.fence = std::max(m.fence, h.fence);
        m.count = std::max(m.count, h.count);
        m.since_ms = std::min(m.since_ms, h.since_ms);
      }
      ++it->second.first;
      if (first) {
        first = false;
        v.mode = s.mode;
        v.limit = s.limit;
        v.now_ms = s.now_ms;
      }
    }
  }
  const size_t q = lock::grant_quorum(n, claim_of(v.mode, v.limit));
  for (const auto& [token, entry] : seen) {
    if (entry.first >= q) {
      v.holders.push_back(entry.second);
    }
  }
  std::stable_sort(v.holders.begin(), v.holders.end(), [](const HolderView& a, const HolderView& b) {
    return a.since_ms != b.since_ms ? a.since_ms < b.since_ms : a.fence < b.fence;
  });
  // The line as the first server with one has it; a waiter only another
  // server lists (it joined that line only, so far) after.
  for (const auto& s : v.views) {
    v.waiting = std::max(v.waiting, s.waiting);
    for (const auto& w : s.waiters) {
      if (std::none_of(v.waiters.begin(), v.waiters.end(), [&](const WaiterView& x) { return x.id == w.id; })) {
        v.waiters.push_back(w);
      }
    }
  }
  v.waiting = std::max(v.waiting, static_cast<long long>(v.waiters.size()));
  note_marks(v);
  if (!v.holders.empty()) {
    v.state = Verdict::State::k_held;
  } else if (foreign >= lock::majority(n)) {
    v.state = Verdict::State::k_foreign;
  }
  return v;
}

}  // namespace redlock::status
