#include "ledger/runs.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace redlock::ledger {

using lock::Outcome;
using lock::Run;

namespace {

// How settled a run's record is: an end the run itself recorded beats the
// next acquire's "abandoned", which beats "running".
int settled(Outcome o) {
  return o == Outcome::k_running ? 0 : o == Outcome::k_abandoned ? 1 : 2;
}

// One run id's records across servers: each distinct end, how many servers
// recorded it, and the largest fence any of them has.
struct Seen {
  std::vector<std::pair<Run, int>> records;
  long long fence = 0;
  std::optional<bool> held;  // held on any server that says
};

void add_record(Seen& s, const Run& r) {
  s.fence = std::max(s.fence, r.fence);
  if (r.held) {
    s.held = s.held.value_or(false) || *r.held;
  }
  auto same = std::find_if(s.records.begin(), s.records.end(),
                           [&](const auto& rec) { return rec.first.outcome == r.outcome && rec.first.exit == r.exit; });
  if (same == s.records.end()) {
    s.records.emplace_back(r, 1);
    return;
  }
  ++same->second;
  if (!same->first.start_ms) {
    same->first.start_ms = r.start_ms;
  }
}

// The record that stands for the run: its own end before "abandoned"
// before "running", then the one most servers have (the first on a tie).
Run chosen(const Seen& s) {
  const auto best = std::max_element(s.records.begin(), s.records.end(), [](const auto& a, const auto& b) {
    const int sa = settled(a.first.outcome);
    const int sb = settled(b.first.outcome);
    return sa != sb ? sa < sb : a.second < b.second;
  });
  Run r = best->first;
  r.fence = s.fence;
  r.held = r.outcome == Outcome::k_running ? s.held : std::nullopt;
  for (const auto& rec : s.records) {
    r.start_ms = r.start_ms ? r.start_ms : rec.first.start_ms;
  }
  return r;
}

}  // namespace

std::vector<Run> merge_runs(const std::vector<std::vector<Run>>& servers) {
  std::map<std::string, Seen> seen;
  std::vector<std::string> order;
  for (const auto& runs : servers) {
    for (const Run& r : runs) {
      auto [it, fresh] = seen.try_emplace(r.id);
      if (fresh) {
        order.push_back(r.id);
      }
      add_record(it->second, r);
    }
  }
  std::vector<Run> out;
  out.reserve(order.size());
  for (const std::string& id : order) {
    out.push_back(chosen(seen[id]));
  }
  // Newest first by start; a run with no known start by its end.
  const auto when = [](const Run& r) { return r.start_ms.value_or(r.end_ms.value_or(0)); };
  std::stable_sort(out.begin(), out.end(), [&](const Run& a, const Run& b) { return when(a) > when(b); });
  return out;
}

std::optional<Run> last_ok(const std::vector<Run>& runs) {
  std::optional<Run> best;
  for (const Run& r : runs) {
    if (r.outcome == Outcome::k_ok && r.end_ms && (!best || *r.end_ms > *best->end_ms)) {
      best = r;
    }
  }
  return best;
}

Overdue decide_overdue(const std::vector<Run>& runs, long long now_ms, Millis max_age) {
  Overdue d;
  d.last_ok = last_ok(runs);
  if (!d.last_ok) {
    return d;
  }
  d.age = Millis(std::max(0LL, now_ms - *d.last_ok->end_ms));
  d.overdue = d.age > max_age;
  return d;
}

}  // namespace redlock::ledger
