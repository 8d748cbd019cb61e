#include "lock/quorum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <utility>

#include "lock/answers.hpp"
#include "lock/layout.hpp"
#include "util/text.hpp"

namespace redlock::lock {

size_t majority(size_t n) {
  return n / 2 + 1;
}

size_t grant_quorum(size_t n, const Claim& claim) {
  if (claim.mode != Claim::Mode::k_semaphore || claim.limit <= 1) {
    return majority(n);
  }
  // The smallest q with q > L*n/(L+1), in integers: floor(L*n/(L+1)) + 1.
  const auto places = static_cast<unsigned long long>(claim.limit);
  return static_cast<size_t>(places * n / (places + 1)) + 1;
}

bool round_decided(size_t yes, size_t out, size_t needed) {
  return yes >= needed || yes + out < needed;
}

namespace {

// How many of `votes` are still out, and how many are in and pass `counts`.
template <typename Vote, typename Counts>
std::pair<size_t, size_t> out_and_counted(const std::vector<std::optional<Vote>>& votes, Counts counts) {
  size_t out = 0;
  size_t counted = 0;
  for (const auto& v : votes) {
    if (!v) {
      ++out;
    } else if (counts(*v)) {
      ++counted;
    }
  }
  return {out, counted};
}

using Kind = AcquireVote::Kind;
using Verdict = AcquireDecision::Verdict;

// Tallies of one acquire round.
struct Tally {
  size_t fresh = 0;      // granted with the new token
  size_t reentered = 0;  // the caller's token held it
  size_t busy = 0;
  size_t skipped = 0;
  bool mismatch = false;
  bool upgrade = false;
  std::vector<long long> tickets;  // busy, in line: the caller's ticket on each such server
};

// A server that skipped: the newest ok run any server named is the one said.
void note_skipped(const AcquireVote& v, Tally& t, AcquireDecision& d) {
  ++t.skipped;
  if (t.skipped == 1 || v.last_ok.end_ms > d.last_ok.end_ms) {
    d.last_ok = v.last_ok;
  }
}

// A server that said busy: what it says of the holder and of the caller's
// place in line, as AcquireDecision::busy keeps it.
void note_busy(const AcquireVote& v, Busy& b) {
  if (v.ttl_left > Millis(0) && (b.ttl_left == Millis(0) || v.ttl_left < b.ttl_left)) {
    b.ttl_left = v.ttl_left;
  }
  if (b.host.empty() && !v.host.empty()) {
    b.host = v.host;
    b.pid = v.pid;
    b.cmd = v.cmd;
    b.holders = v.holders;
    b.kept = v.kept;
  }
  if (v.held && (!b.held || *v.held > *b.held)) {
    b.held = v.held;
  }
  b.line_full = b.line_full || v.line_full;
  b.place = std::max(b.place, v.place);
  b.ahead = std::max(b.ahead, v.ahead);
}

Tally count(const std::vector<AcquireVote>& votes, AcquireDecision& d) {
  Tally t;
  for (const auto& v : votes) {
    switch (v.kind) {
      case Kind::k_granted:
        ++t.fresh;
        break;
      case Kind::k_reentered:
        ++t.reentered;
        break;
      case Kind::k_busy:
        ++t.busy;
        note_busy(v, d.busy);
        if (v.ticket > 0) {
          t.tickets.push_back(v.ticket);
        }
        break;
      case Kind::k_mismatch:
        t.mismatch = true;
        d.held_mode = v.held_mode;
        d.held_limit = v.held_limit;
        break;
      case Kind::k_upgrade:
        t.upgrade = true;
        d.held_mode = v.held_mode;
        break;
      case Kind::k_foreign:
        ++d.foreign;
        d.foreign_type = v.foreign_type;
        break;
      case Kind::k_skipped:
        note_skipped(v, t, d);
        break;
      case Kind::k_suspended:
        if (!d.suspension) {
          d.suspension = v.suspension;
        }
        break;
      case Kind::k_failed:
        d.failures.push_back(v.failure.value_or(redis::Failure{}));
        break;
    }
  }
  if (!t.tickets.empty()) {
    auto middle = t.tickets.begin() + static_cast<std::ptrdiff_t>((t.tickets.size() - 1) / 2);
    std::nth_element(t.tickets.begin(), middle, t.tickets.end());
    d.busy.ticket = *middle;
  }
  return t;
}

// Held: what is still undone is the fresh holds that servers where the
// token did not hold gave out, and whatever a server took with a fence
// that cannot be used.
void undo_beside_a_grant(const std::vector<AcquireVote>& votes, AcquireDecision& d) {
  for (size_t i = 0; i < votes.size(); ++i) {
    d.release_fresh[i] = d.fresh ? votes[i].taken == Kind::k_granted
                                 : votes[i].kind == Kind::k_granted || votes[i].kind == Kind::k_failed;
    d.undo_reentry[i] = votes[i].taken == Kind::k_reentered;
  }
}

// Why a round of `n` servers (a quorum of `q`, `yes` of them for the
// caller) did not hold the lock: d.verdict, most telling first.
void judge_not_held(const Tally& t, size_t n, size_t q, size_t yes, AcquireDecision& d) {
  if (t.mismatch) {
    d.verdict = Verdict::k_mismatch;
  } else if (t.upgrade) {
    d.verdict = Verdict::k_upgrade;
  } else if (d.suspension) {
    // Whatever else the others said, the lock was not had, and waiting
    // for a suspended name would not change that.
    d.verdict = Verdict::k_suspended;
  } else if (t.skipped >= majority(n)) {
    // This period's run is done: a majority of the ledgers say so, and any
    // quorum that could grant shares a server with them.
    d.verdict = Verdict::k_skipped;
  } else if (d.failures.size() > n - q) {
    d.verdict = Verdict::k_unavailable;
  } else if (d.foreign >= majority(n)) {
    d.verdict = Verdict::k_foreign;
  } else if (yes >= q) {
    // A quorum, but too slowly: the lock may already have expired, and
    // others may have seen it held; they are told it is free again.
    d.verdict = Verdict::k_lost_race;
    d.announce_release = d.fresh;
  } else {
    d.verdict = t.busy > 0 ? Verdict::k_busy : Verdict::k_lost_race;
  }
}

// A NAME held in another mode than asked for: what it is and how to ask.
Error mismatch(const std::string& name, const Claim& claim, const AcquireDecision& d) {
  std::string held = d.held_mode == Claim::Mode::k_semaphore ? fmt::format("a semaphore with --limit {}", d.held_limit)
                     : d.held_mode == Claim::Mode::k_shared  ? std::string("shared by readers (--shared)")
                                                             : std::string("a plain lock (--limit 1)");
  std::string asked = claim.mode == Claim::Mode::k_semaphore ? fmt::format("--limit {}", claim.limit)
                      : claim.mode == Claim::Mode::k_shared  ? std::string("--shared")
                                                             : std::string("a plain lock");
  return {ExitStatus::k_usage, fmt::format("{} is held as {}, but {} was asked for; use the same options as its "
                                           "holders",
                                           escape_for_terminal(name), held, asked)};
}

// What a round that holds nothing comes to: busy (or a lost race, skipped,
// suspended) to return, or an error.
void refused(const AcquireDecision& d, const AcquireRound& r, size_t n, AcquireResult& out) {
  Busy busy = d.busy;
  busy.lost_race = d.verdict == Verdict::k_lost_race;
  switch (d.verdict) {
    case Verdict::k_mismatch:
      out.error = mismatch(r.name, r.claim, d);
      return;
    case Verdict::k_upgrade:
      out.error = Error(ExitStatus::k_usage,
                        fmt::format("{} is held by this token as a reader's share (--shared); a reader cannot "
                                    "upgrade to exclusive: release the share first, or take it with --shared",
                                    escape_for_terminal(r.name)));
      return;
    case Verdict::k_unavailable:
      out.error = quorum_failure(d.failures, n, grant_quorum(n, r.claim));
      return;
    case Verdict::k_foreign:
      out.error =
          Error(ExitStatus::k_protocol,
                foreign_message(r.name, d.foreign_type,
                                n == 1 ? " on " + r.servers[0] : fmt::format(" on {} of {} servers", d.foreign, n)));
      return;
    case Verdict::k_skipped:
      busy = Busy{};
      busy.skipped = d.last_ok;
      break;
    case Verdict::k_suspended:
      busy = Busy{};
      busy.suspended = d.suspension;
      break;
    case Verdict::k_granted:
    case Verdict::k_busy:
    case Verdict::k_lost_race:
      break;
  }
  out.outcome = busy;
}

}  // namespace

AcquireDecision acquire_verdict(const std::vector<AcquireVote>& votes, const Claim& claim, bool reentering,
                                Millis validity) {
  const size_t n = votes.size();
  const size_t q = grant_quorum(n, claim);
  AcquireDecision d;
  d.voted.assign(n, false);
  d.release_fresh.assign(n, false);
  d.undo_reentry.assign(n, false);
  const Tally t = count(votes, d);

  // A caller whose token holds the lock somewhere is re-entering: only its
  // token's votes count, and it never gets a fresh token instead.
  d.fresh = !(reentering && (t.reentered > 0 || t.upgrade));
  const Kind counted = d.fresh ? Kind::k_granted : Kind::k_reentered;
  size_t yes = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& v = votes[i];
    if (v.kind == counted) {
      d.voted[i] = true;
      ++yes;
      d.fence = std::max(d.fence, v.fence);
      d.count = std::max(d.count, v.count);
      if (!d.abandoned && v.abandoned) {
        d.abandoned = v.abandoned;
      }
    }
  }

  const bool blocked = t.mismatch || t.upgrade;
  if (!blocked && yes >= q && validity > Millis(0)) {
    d.verdict = Verdict::k_granted;
    undo_beside_a_grant(votes, d);
    return d;
  }

  // Not held: undo everything this round may have taken. A fresh token is
  // released wherever it may have been granted (a server that did not answer
  // may still run the script); a re-entry only where it happened.
  for (size_t i = 0; i < n; ++i) {
    d.release_fresh[i] = votes[i].kind == Kind::k_granted || votes[i].kind == Kind::k_failed;
    d.undo_reentry[i] = votes[i].kind == Kind::k_reentered || votes[i].taken == Kind::k_reentered;
  }
  std::fill(d.voted.begin(), d.voted.end(), false);
  d.fence = 0;
  d.abandoned.reset();
  judge_not_held(t, n, q, yes, d);
  return d;
}

AcquireResult decide_acquire(const std::vector<AcquireVote>& votes, const std::vector<RaiseVote>& raised,
                             const AcquireRound& r) {
  const bool reentering = !r.reenter.empty();
  const AcquireDecision round = acquire_verdict(votes, r.claim, reentering, r.ttl);
  // A server whose fence could not be raised no longer counts.
  std::vector<AcquireVote> after = votes;
  const std::vector<bool> behind = fences_to_raise(votes, round);
  for (size_t i = 0; i < std::min(behind.size(), raised.size()); ++i) {
    if (behind[i] && raised[i].failure) {
      after[i].kind = Kind::k_failed;
      after[i].failure = raised[i].failure;
    }
  }
  const Millis validity = r.ttl - r.elapsed - clock_drift(r.ttl);
  const AcquireDecision d = acquire_verdict(after, r.claim, reentering, validity);
  AcquireResult out{d.release_fresh, d.undo_reentry, d.announce_release, std::nullopt, Busy{}};
  if (d.verdict == Verdict::k_granted) {
    Acquired got{.token = d.fresh ? r.token : r.reenter,
                 .fence = d.fence,
                 .count = d.count,
                 .ttl = held_lease(r.ttl, after),
                 .validity = validity,
                 .sent = r.sent,
                 .valid_until = r.sent + r.ttl - clock_drift(r.ttl),
                 .voted = d.voted,
                 .busy = {},
                 .abandoned = d.abandoned};
    for (const auto& v : after) {
      got.busy.push_back(v.kind == Kind::k_busy);
    }
    out.outcome = got;
  } else if (round.verdict == Verdict::k_granted && validity <= Millis(0)) {
    // Granted, but the answers came after the lease they granted had run
    // out: Redis is too slow for this TTL, nobody else holds the lock.
    out.error = Error(ExitStatus::k_unavailable,
                      fmt::format("acquiring {} took {}, and its {} TTL had run out by then: it was given back (is "
                                  "Redis slow or far away? a longer --ttl helps)",
                                  escape_for_terminal(r.name), format_duration(r.elapsed), format_duration(r.ttl)),
                      true);
  } else {
    refused(d, r, votes.size(), out);
  }
  return out;
}

Millis clock_drift(Millis ttl) {
  return Millis(ttl.count() / 100 + 2);
}

bool acquire_decided(const std::vector<std::optional<AcquireVote>>& votes, const Claim& claim, bool reentering) {
  const size_t q = grant_quorum(votes.size(), claim);
  const auto is = [](Kind k) { return [k](const AcquireVote& v) { return v.kind == k; }; };
  const auto [out, fresh] = out_and_counted(votes, is(Kind::k_granted));
  const size_t reentered = out_and_counted(votes, is(Kind::k_reentered)).second;
  const size_t blocked = out_and_counted(votes, [](const AcquireVote& v) {
                           return v.kind == Kind::k_mismatch || v.kind == Kind::k_upgrade;
                         }).second;
  if (blocked > 0) {
    return true;
  }
  // A re-entry seen makes the round a re-entry (acquire_verdict): only its
  // votes count. Fresh grants on a quorum before any is seen are a lock
  // all the same, which the token's re-entries on a minority cannot share;
  // and while fresh grants can no longer make a quorum, nor can re-entries.
  const size_t yes = reentering && reentered > 0 ? reentered : fresh;
  return round_decided(yes, out, q);
}

std::vector<bool> fences_to_raise(const std::vector<AcquireVote>& votes, const AcquireDecision& d) {
  std::vector<bool> out(votes.size(), false);
  for (size_t i = 0; i < votes.size(); ++i) {
    out[i] = d.voted[i] && votes[i].fence < d.fence;
  }
  return out;
}

namespace {

// The lease of the votes that `counted` accepts, as held_lease says.
template <typename Vote, typename Counted>
Millis shortest_lease(Millis ttl, const std::vector<Vote>& votes, Counted counted) {
  std::optional<Millis> shortest;
  for (const auto& v : votes) {
    if (counted(v)) {
      shortest = shortest ? std::min(*shortest, v.lease) : v.lease;
    }
  }
  return std::max(ttl, shortest.value_or(ttl));
}

// Across servers the strongest answer wins: a hold kept anywhere is kept,
// then released, then decremented (a server that missed a level).
int strength(Ended::Kind k) {
  switch (k) {
    case Ended::Kind::k_kept:
      return 4;
    case Ended::Kind::k_released:
      return 3;
    case Ended::Kind::k_decremented:
      return 2;
    case Ended::Kind::k_floor:
      return 1;
    case Ended::Kind::k_not_held:
      break;
  }
  return 0;
}

Ended::Kind ended_kind(ReleaseVote::Kind k) {
  switch (k) {
    case ReleaseVote::Kind::k_kept:
      return Ended::Kind::k_kept;
    case ReleaseVote::Kind::k_released:
      return Ended::Kind::k_released;
    case ReleaseVote::Kind::k_decremented:
      return Ended::Kind::k_decremented;
    case ReleaseVote::Kind::k_floor:
      return Ended::Kind::k_floor;
    case ReleaseVote::Kind::k_not_held:
    case ReleaseVote::Kind::k_foreign:
    case ReleaseVote::Kind::k_failed:
      break;
  }
  return Ended::Kind::k_not_held;
}

}  // namespace

bool renew_decided(const std::vector<std::optional<RenewVote>>& votes) {
  const size_t n = votes.size();
  size_t q = majority(n);
  for (const auto& v : votes) {
    if (v && v->kind == RenewVote::Kind::k_renewed) {
      q = std::max(q, grant_quorum(n, v->claim));
    }
  }
  const auto [out, renewed] =
      out_and_counted(votes, [](const RenewVote& v) { return v.kind == RenewVote::Kind::k_renewed; });
  return round_decided(renewed, out, q);
}

bool release_decided(const std::vector<std::optional<ReleaseVote>>& votes) {
  const auto [out, answered] =
      out_and_counted(votes, [](const ReleaseVote& v) { return v.kind != ReleaseVote::Kind::k_failed; });
  return round_decided(answered, out, majority(votes.size()));
}

Millis held_lease(Millis ttl, const std::vector<AcquireVote>& votes) {
  return shortest_lease(ttl, votes, [](const AcquireVote& v) {
    return v.kind == AcquireVote::Kind::k_granted || v.kind == AcquireVote::Kind::k_reentered;
  });
}

Millis held_lease(Millis ttl, const std::vector<RenewVote>& votes) {
  return shortest_lease(ttl, votes, [](const RenewVote& v) { return v.kind == RenewVote::Kind::k_renewed; });
}

ReleaseOutcome decide_release(const std::vector<ReleaseVote>& votes) {
  const auto any = [&](std::initializer_list<ReleaseVote::Kind> kinds) {
    return std::any_of(votes.begin(), votes.end(), [&](const ReleaseVote& v) {
      return std::find(kinds.begin(), kinds.end(), v.kind) != kinds.end();
    });
  };
  if (any({ReleaseVote::Kind::k_floor})) {
    return ReleaseOutcome::k_floor;
  }
  if (any({ReleaseVote::Kind::k_decremented})) {
    return ReleaseOutcome::k_decremented;
  }
  if (any({ReleaseVote::Kind::k_released, ReleaseVote::Kind::k_kept})) {
    return ReleaseOutcome::k_released;
  }
  return ReleaseOutcome::k_not_held;
}

Ended decide_finish(const std::vector<ReleaseVote>& votes) {
  Ended ended;
  for (const auto& v : votes) {
    const Ended::Kind kind = ended_kind(v.kind);
    if (kind == Ended::Kind::k_not_held) {
      continue;
    }
    if (kind != Ended::Kind::k_floor) {  // a floor's levels are those held, none dropped
      ended.levels = std::max(ended.levels, v.levels);
    }
    ended.kept = std::max(ended.kept, v.kept);
    if (strength(kind) > strength(ended.kind)) {
      ended.kind = kind;
    }
  }
  return ended;
}

RenewDecision decide_renew(const std::vector<RenewVote>& votes, Millis validity) {
  const size_t n = votes.size();
  RenewDecision d;
  size_t renewed = 0;
  size_t failed = 0;
  size_t q = majority(n);
  for (const auto& v : votes) {
    switch (v.kind) {
      case RenewVote::Kind::k_renewed:
        ++renewed;
        q = std::max(q, grant_quorum(n, v.claim));
        break;
      case RenewVote::Kind::k_foreign:
        d.foreign = true;
        d.foreign_type = v.foreign_type;
        break;
      case RenewVote::Kind::k_failed:
        ++failed;
        d.failures.push_back(v.failure.value_or(redis::Failure{}));
        break;
      case RenewVote::Kind::k_not_held:
        break;
    }
  }
  if (renewed >= q && validity > Millis(0)) {
    d.verdict = RenewDecision::Verdict::k_renewed;
  } else if (renewed + failed >= q && failed > 0) {
    // The servers that did not answer may still confirm it: worth a retry.
    d.verdict = RenewDecision::Verdict::k_unavailable;
  } else {
    d.verdict = RenewDecision::Verdict::k_not_held;
  }
  return d;
}

BreakDecision decide_break(const std::vector<BreakVote>& votes) {
  BreakDecision d;
  const size_t n = votes.size();
  std::map<std::string, HolderView> seen;
  bool broken = false;
  for (const auto& v : votes) {
    switch (v.kind) {
      case BreakVote::Kind::k_failed:
        if (v.failure) {
          d.failures.push_back(*v.failure);
        }
        break;
      case BreakVote::Kind::k_foreign:
        d.foreign_type = v.foreign_type;
        break;
      case BreakVote::Kind::k_broken:
        if (!broken) {
          d.mode = v.mode;
          d.limit = v.limit;
          d.now_ms = v.now_ms;
          broken = true;
        }
        for (const auto& h : v.holders) {
          auto [it, fresh] = seen.try_emplace(h.token, h);
          if (!fresh) {
            it->second.since_ms = std::min(it->second.since_ms, h.since_ms);
            it->second.fence = std::max(it->second.fence, h.fence);
            it->second.count = std::max(it->second.count, h.count);
          }
        }
        break;
      case BreakVote::Kind::k_free:
        break;
    }
  }
  if (d.failures.size() > n - majority(n)) {
    d.verdict = BreakDecision::Verdict::k_unavailable;
    return d;
  }
  for (auto& [token, h] : seen) {
    d.holders.push_back(std::move(h));
  }
  std::stable_sort(d.holders.begin(), d.holders.end(), [](const HolderView& a, const HolderView& b) {
    return a.since_ms != b.since_ms ? a.since_ms < b.since_ms : a.fence < b.fence;
  });
  if (broken) {
    d.verdict = BreakDecision::Verdict::k_broken;
  } else if (!d.foreign_type.empty()) {
    d.verdict = BreakDecision::Verdict::k_foreign;
  } else {
    d.verdict = BreakDecision::Verdict::k_free;
  }
  return d;
}

}  // namespace redlock::lock
