#include "lock/answers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "lock/layout.hpp"
#include "util/number.hpp"

namespace redlock::lock {

using redis::Reply;

namespace {

std::string foreign_type_of(const Reply& reply) {
  return reply.elements.size() > 1 ? reply.elements[1].text() : "?";
}

// What a server sent where a fence belongs, for the error line: short, as
// a hostile server may send anything.
std::string describe_fence(const Reply& r) {
  constexpr size_t k_shown = 40;
  if (r.is_array()) {
    return "an array";
  }
  if (r.is_nil()) {
    return "nil";
  }
  const std::string text = r.text();
  return "'" + (text.size() > k_shown ? text.substr(0, k_shown) + "..." : text) + "'";
}

// A grant or re-entry: {outcome, token, fence, count, ttl}.
AcquireVote read_hold(AcquireVote::Kind kind, const std::vector<Reply>& e) {
  AcquireVote v;
  const std::optional<long long> fence = e.size() >= 5 ? reply_fence(e[2]) : std::nullopt;
  if (!fence) {
    // Taken, but with no fence to give the holder: nothing a writer could
    // check its writes against, and a fence that would pull the other
    // servers' counters out of range.
    v.taken = kind;
    v.bad_fence = e.size() < 5 ? "none" : describe_fence(e[2]);
    return v;  // k_failed
  }
  v.kind = kind;
  v.fence = *fence;
  v.count = reply_integer(e[3]);
  v.lease = Millis(std::max(0LL, reply_integer(e[4])));
  return v;
}

// A grant or re-entry, and the run before it that never ended, when the
// answer names one: {outcome, token, fence, count, ttl, host, pid, start}.
AcquireVote read_grant(AcquireVote::Kind kind, const std::vector<Reply>& e) {
  AcquireVote v = read_hold(kind, e);
  if (e.size() >= 8) {
    v.abandoned = RunSeen{e[5].text(), e[6].text(), reply_integer(e[7]), 0, 0};
  }
  return v;
}

// A busy answer: the holder's TTL, host and pid, the caller's place in
// line, and (from newer scripts) who holds it in full, since when, and
// whether the line was full.
AcquireVote read_busy(const std::vector<Reply>& e) {
  AcquireVote v;
  v.kind = AcquireVote::Kind::k_busy;
  v.ttl_left = Millis(std::max(0LL, reply_integer(e[1])));
  v.host = e[2].text();
  v.pid = e[3].text();
  v.place = e.size() > 4 ? reply_integer(e[4]) : 0;  // fair waiting: a place in line
  v.ahead = e.size() > 5 ? reply_integer(e[5]) : 0;
  v.ticket = e.size() > 6 ? reply_integer(e[6]) : 0;
  if (e.size() > 9) {  // who holds it, in full
    v.cmd = e[7].text();
    v.holders = reply_integer(e[8]);
    v.kept = e[9].text() == "kept";
  }
  if (e.size() > 11) {
    if (const long long held = reply_integer(e[10]); held >= 0) {
      v.held = Millis(held);
    }
    v.line_full = e[11].text() == "full";
  }
  return v;
}

// A free lock not taken for the last ok run: {'skipped', host, pid, end, now}.
std::optional<AcquireVote> read_skipped(const std::vector<Reply>& e) {
  if (e.size() < 5) {
    return std::nullopt;
  }
  AcquireVote v;
  v.kind = AcquireVote::Kind::k_skipped;
  v.last_ok = RunSeen{e[1].text(), e[2].text(), 0, reply_integer(e[3]), reply_integer(e[4])};
  return v;
}

// A suspended name: {'suspended', reason, host, pid, since, until, now}.
std::optional<AcquireVote> read_suspended(const std::vector<Reply>& e) {
  if (e.size() < 7) {
    return std::nullopt;
  }
  AcquireVote v;
  v.kind = AcquireVote::Kind::k_suspended;
  v.suspension =
      Suspension{e[1].text(), e[2].text(), e[3].text(), reply_integer(e[4]), reply_integer(e[5]), reply_integer(e[6])};
  if (v.suspension.until_ms <= 0) {
    v.suspension.until_ms = -1;
  }
  return v;
}

// A grant or re-entry whose fence cannot be used, from the server at `where`.
redis::Failure bad_fence_failure(const std::string& where, const AcquireVote& v) {
  return redis::Failure{
      ExitStatus::k_protocol,
      fmt::format("Redis at {} {} the lock with a fence redlock cannot use ({}; a fence is a whole number from 1 to "
                  "{}): it was given back there, and that server does not count; check what answers at that address",
                  where, v.taken == AcquireVote::Kind::k_reentered ? "re-entered" : "granted", v.bad_fence,
                  k_max_fence)};
}

// A server's view of a lock for status, with why it has none.
struct Viewed {
  ServerView view;
  std::optional<redis::Failure> failure;
};

}  // namespace

std::string outcome_of(const Reply& reply) {
  if (!reply.is_array() || reply.elements.empty() || reply.elements[0].is_array()) {
    return "";
  }
  return reply.elements[0].text();
}

redis::Failure unexpected_reply(const std::string& where, std::string_view script) {
  return redis::Failure{ExitStatus::k_protocol,
                        fmt::format("Redis at {} sent an unexpected reply to {} (is it a Redis server, and are the "
                                    "keys under --prefix redlock's alone?)",
                                    where, script)};
}

redis::Failure replicas_failure(const std::string& where, int wanted, std::string_view what,
                                const std::string& wait_refused) {
  if (!wait_refused.empty()) {
    // A managed Redis (ElastiCache Serverless, a proxy) that does not offer
    // WAIT cannot say whether a replica has the lock: no count is meant.
    const bool acl = wait_refused.starts_with("NOPERM");
    return redis::Failure{acl ? ExitStatus::k_refused : ExitStatus::k_protocol,
                          fmt::format("Redis at {} refused WAIT, which --min-replicas {} needs to confirm the {} ({}): "
                                      "{}",
                                      where, wanted, what, wait_refused,
                                      acl ? "grant the user +wait, or drop --min-replicas"
                                          : "this server does not offer WAIT; drop --min-replicas here"),
                          true};
  }
  return redis::Failure{ExitStatus::k_unavailable,
                        fmt::format("Redis at {}: fewer than {} replica{} acknowledged the {} in time "
                                    "(--min-replicas {}; see INFO replication there): {}",
                                    where, wanted, wanted == 1 ? "" : "s", what, wanted, k_replicas_hint)};
}

Error quorum_failure(const std::vector<redis::Failure>& failures, size_t n, size_t quorum) {
  ExitStatus status = ExitStatus::k_unavailable;
  for (const auto& f : failures) {
    const bool more_specific =
        f.status == ExitStatus::k_refused || (f.status == ExitStatus::k_protocol && status != ExitStatus::k_refused);
    if (more_specific) {
      status = f.status;
    }
  }
  std::string msg;
  if (n == 1) {
    msg = failures.front().message;
  } else {
    msg = fmt::format("only {} of {} Redis servers answered (a quorum is {}): ", n - failures.size(), n, quorum);
    for (size_t i = 0; i < failures.size(); ++i) {
      msg += (i ? "; " : "") + failures[i].message;
    }
  }
  // Servers that answered but lack the replicas --min-replicas asks for are
  // running: the hint for them is in their own message.
  const bool replicas_only = std::all_of(failures.begin(), failures.end(), [](const redis::Failure& f) {
    return f.message.find(k_replicas_hint) != std::string::npos;
  });
  // Servers that answered with an error (LOADING...) are running: their
  // own message says what to do.
  const bool all_answered =
      std::all_of(failures.begin(), failures.end(), [](const redis::Failure& f) { return f.answered; });
  if (status == ExitStatus::k_unavailable && !replicas_only && !all_answered) {
    const std::string& from = servers_named_in();
    msg += fmt::format(" (is redis-server running there?{} see --redis and --redis-timeout)",
                       from.empty() ? "" : fmt::format(" {};", from));
  }
  return Error(status, msg, all_answered);
}

std::string& servers_named_in() {
  static std::string from;
  return from;
}

long long reply_integer(const Reply& r) {
  if (r.type == Reply::Type::k_integer) {
    return r.integer;
  }
  return parse_integer(r.str).value_or(0);
}

std::optional<long long> reply_fence(const Reply& r) {
  if (r.type == Reply::Type::k_integer) {
    return usable_fence(r.integer) ? std::optional<long long>(r.integer) : std::nullopt;
  }
  if (r.type != Reply::Type::k_string) {
    return std::nullopt;
  }
  return parse_fence(r.str);
}

std::optional<AcquireVote> read_acquire_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  AcquireVote v;
  if (outcome == "acquired" || outcome == "reentered") {
    return read_grant(outcome == "acquired" ? AcquireVote::Kind::k_granted : AcquireVote::Kind::k_reentered, e);
  }
  if (outcome == "busy" && e.size() >= 4) {
    return read_busy(e);
  }
  if (outcome == "skipped") {
    return read_skipped(e);
  }
  if (outcome == "suspended") {
    return read_suspended(e);
  }
  if ((outcome == "mismatch" || outcome == "upgrade") && e.size() >= 3) {
    v.kind = outcome == "mismatch" ? AcquireVote::Kind::k_mismatch : AcquireVote::Kind::k_upgrade;
    v.held_mode = mode_named(e[1].text());
    v.held_limit = e[2].text();
  } else if (outcome == "foreign") {
    v.kind = AcquireVote::Kind::k_foreign;
    v.foreign_type = foreign_type_of(reply);
  } else {
    return std::nullopt;
  }
  return v;
}

std::vector<AcquireVote> acquire_votes(const std::vector<Answer>& answers, const std::vector<std::string>& servers,
                                       int min_replicas) {
  std::vector<AcquireVote> votes = tally<AcquireVote>(answers, servers, "acquire", read_acquire_answer);
  for (size_t i = 0; i < votes.size(); ++i) {
    AcquireVote& v = votes[i];
    const bool holds = v.kind == AcquireVote::Kind::k_granted || v.kind == AcquireVote::Kind::k_reentered;
    if (v.kind == AcquireVote::Kind::k_failed && !v.failure) {
      // A grant with a fence that cannot be used is a bad reply: the hold is
      // given back, and that fence is never raised to on the other servers.
      v.failure = bad_fence_failure(servers[i], v);
    } else if (holds && answers[i].replicas_short) {
      v = AcquireVote{};
      v.failure = replicas_failure(servers[i], min_replicas, "lock", answers[i].wait_refused);
    }
  }
  return votes;
}

std::optional<RaiseVote> read_raise_answer(const Reply& reply) {
  if (outcome_of(reply) != "raised") {
    return std::nullopt;
  }
  return RaiseVote{};
}

std::optional<RenewVote> read_renew_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  RenewVote v;
  if (outcome == "renewed" && e.size() >= 4) {
    v.kind = RenewVote::Kind::k_renewed;
    v.lease = Millis(std::max(0LL, reply_integer(e[1])));
    v.claim.mode = mode_named(e[2].text());
    v.claim.limit = static_cast<int>(std::clamp<long long>(reply_integer(e[3]), 1, 1'000'000));
  } else if (outcome == "notheld") {
    v.kind = RenewVote::Kind::k_not_held;
  } else if (outcome == "foreign") {
    v.kind = RenewVote::Kind::k_foreign;
    v.foreign_type = foreign_type_of(reply);
  } else {
    return std::nullopt;
  }
  return v;
}

std::vector<RenewVote> renew_votes(const std::vector<Answer>& answers, const std::vector<std::string>& servers,
                                   int min_replicas, const std::vector<bool>& moved) {
  std::vector<RenewVote> votes = tally<RenewVote>(answers, servers, "renew", read_renew_answer);
  for (size_t i = 0; i < votes.size(); ++i) {
    if (i < moved.size() && moved[i]) {
      votes[i] = RenewVote{};
      votes[i].kind = RenewVote::Kind::k_not_held;
    } else if (votes[i].kind == RenewVote::Kind::k_renewed && answers[i].replicas_short) {
      votes[i] = RenewVote{};
      votes[i].failure = replicas_failure(servers[i], min_replicas, "renewal", answers[i].wait_refused);
    }
  }
  return votes;
}

std::optional<ReleaseVote> read_release_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  ReleaseVote v;
  if ((outcome == "released" || outcome == "decremented" || outcome == "kept") && e.size() >= 3) {
    v.kind = outcome == "released"      ? ReleaseVote::Kind::k_released
             : outcome == "decremented" ? ReleaseVote::Kind::k_decremented
                                        : ReleaseVote::Kind::k_kept;
    v.levels = reply_integer(e[1]);
    v.kept = v.kind == ReleaseVote::Kind::k_kept ? Millis(std::max(0LL, reply_integer(e[2]))) : Millis(0);
  } else if (outcome == "floor" && e.size() >= 2) {
    v.kind = ReleaseVote::Kind::k_floor;
    v.levels = reply_integer(e[1]);
  } else if (outcome == "notheld") {
    v.kind = ReleaseVote::Kind::k_not_held;
  } else if (outcome == "foreign") {
    v.kind = ReleaseVote::Kind::k_foreign;
    v.foreign_type = foreign_type_of(reply);
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<BreakVote> read_break_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  BreakVote v;
  if (outcome == "broken" && e.size() >= 5) {
    v.kind = BreakVote::Kind::k_broken;
    v.mode = mode_named(e[1].text());
    v.limit = reply_integer(e[2]);
    v.now_ms = reply_integer(e[3]);
    for (const auto& hr : e[4].elements) {
      if (hr.elements.size() < 7) {
        continue;
      }
      HolderView h;
      h.token = hr.elements[0].text();
      h.host = hr.elements[1].text();
      h.pid = reply_integer(hr.elements[2]);
      h.cmd = hr.elements[3].text();
      h.since_ms = reply_integer(hr.elements[4]);
      h.fence = reply_fence(hr.elements[5]).value_or(0);  // 0: none that redlock could have handed out
      h.count = reply_integer(hr.elements[6]);
      v.holders.push_back(std::move(h));
    }
  } else if (outcome == "free") {
    v.kind = BreakVote::Kind::k_free;
  } else if (outcome == "foreign") {
    v.kind = BreakVote::Kind::k_foreign;
    v.foreign_type = foreign_type_of(reply);
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<ServerView> read_inspect_answer(const Reply& reply) {
  const auto& e = reply.elements;
  if (outcome_of(reply).empty() || e.size() < 5) {
    return std::nullopt;
  }
  ServerView view;
  view.type = e[0].text();
  view.now_ms = reply_integer(e[1]);
  view.ttl_ms = reply_integer(e[3]);
  const auto pairs = [&e](size_t at) {
    std::vector<std::pair<std::string, std::string>> fields;
    if (at < e.size()) {
      for (size_t k = 0; k + 1 < e[at].elements.size(); k += 2) {
        fields.emplace_back(e[at].elements[k].text(), e[at].elements[k + 1].text());
      }
    }
    return fields;
  };
  read_holders(view, pairs(4));
  read_marks(view, pairs(5), pairs(6));
  return view;
}

std::vector<ServerView> inspect_views(const std::vector<Answer>& answers, const std::vector<std::string>& servers,
                                      std::vector<redis::Failure>& failures) {
  const auto read = [](const Reply& reply) -> std::optional<Viewed> {
    std::optional<ServerView> view = read_inspect_answer(reply);
    return view ? std::optional<Viewed>(Viewed{std::move(*view), std::nullopt}) : std::nullopt;
  };
  std::vector<ServerView> views;
  std::vector<Viewed> viewed = tally<Viewed>(answers, servers, "inspect", read);
  for (size_t i = 0; i < viewed.size(); ++i) {
    ServerView& v = viewed[i].view;
    v.endpoint = servers[i];
    if (viewed[i].failure) {
      v.error = viewed[i].failure->message;
      failures.push_back(*viewed[i].failure);
    }
    views.push_back(std::move(v));
  }
  return views;
}

std::optional<std::vector<Reply>> per_lock_replies(Reply reply, std::string_view outcome, size_t asked) {
  if (outcome_of(reply) != outcome || reply.elements.size() < 2 || reply.elements.size() > asked + 1) {
    return std::nullopt;
  }
  std::vector<Reply> out(std::make_move_iterator(reply.elements.begin() + 1),
                         std::make_move_iterator(reply.elements.end()));
  return out;
}

std::optional<LineAnswer> read_line_answer(const Reply& reply) {
  const auto& e = reply.elements;
  if (outcome_of(reply).empty() || e.size() < 4) {
    return std::nullopt;
  }
  if (e[0].text() != "hash") {
    return LineAnswer{};  // nobody waits (or the key is not a line: nobody redlock knows)
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t k = 0; k + 1 < e[2].elements.size(); k += 2) {
    fields.emplace_back(e[2].elements[k].text(), e[2].elements[k + 1].text());
  }
  LineAnswer out{read_waiters(fields, reply_integer(e[1])), std::max(0LL, reply_integer(e[3]))};
  out.waiting = std::max(out.waiting, static_cast<long long>(out.head.size()));
  return out;
}

std::optional<StartedRun> read_start_run_answer(const Reply& reply) {
  if (outcome_of(reply) != "started") {
    return std::nullopt;
  }
  const auto& e = reply.elements;
  StartedRun s;
  if (e.size() >= 4) {
    s.abandoned = RunSeen{e[1].text(), e[2].text(), reply_integer(e[3]), 0, 0};
  }
  return s;
}

std::optional<HistoryVote> read_history_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  HistoryVote v;
  if (outcome == "foreign") {
    v.kind = HistoryVote::Kind::k_foreign;
    v.foreign_type = foreign_type_of(reply);
    return v;
  }
  if (outcome != "runs" || e.size() < 2) {
    return std::nullopt;
  }
  v.kind = HistoryVote::Kind::k_runs;
  v.now_ms = reply_integer(e[1]);
  for (size_t i = 2; i < e.size(); ++i) {
    std::vector<std::pair<std::string, std::string>> fields;
    for (size_t k = 0; k + 1 < e[i].elements.size(); k += 2) {
      fields.emplace_back(e[i].elements[k].text(), e[i].elements[k + 1].text());
    }
    if (std::optional<Run> run = read_run(fields)) {
      v.runs.push_back(std::move(*run));
    }
  }
  return v;
}

namespace {

std::optional<Run> run_in(const Reply& r) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t k = 0; k + 1 < r.elements.size(); k += 2) {
    fields.emplace_back(r.elements[k].text(), r.elements[k + 1].text());
  }
  return fields.empty() ? std::nullopt : read_run(fields);
}

}  // namespace

std::optional<LastRuns> read_runs_answer(const Reply& reply) {
  if (!reply.is_array() || reply.elements.size() < 3) {
    return std::nullopt;
  }
  return LastRuns{run_in(reply.elements[1]), run_in(reply.elements[2]), reply_integer(reply.elements[0])};
}

std::optional<MarkVote> read_mark_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  MarkVote v;
  if (outcome == "suspended" && e.size() >= 3) {
    v.kind = MarkVote::Kind::k_suspended;
    v.until_ms = reply_integer(e[1]);
    v.now_ms = reply_integer(e[2]);
  } else if (outcome == "resumed" && e.size() >= 2) {
    v.kind = MarkVote::Kind::k_resumed;
    v.was = reply_integer(e[1]) != 0;
  } else if (outcome == "foreign" && e.size() >= 2) {
    v.kind = MarkVote::Kind::k_foreign;
    v.foreign_type = e[1].text();
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<RevokeVote> read_revoke_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  const auto& e = reply.elements;
  RevokeVote v;
  if (outcome == "revoking" && e.size() >= 4 && e[3].is_array()) {
    v.kind = RevokeVote::Kind::k_revoking;
    v.listeners = std::max(0LL, reply_integer(e[1]));
    v.now_ms = reply_integer(e[2]);
    for (const auto& a : e[3].elements) {
      if (!a.is_array() || a.elements.size() < 5) {
        return std::nullopt;
      }
      // A run's own channel reached its exec (7th element; a server
      // without it told none).
      const long long heard = a.elements.size() >= 7 ? std::max(0LL, reply_integer(a.elements[6])) : 0;
      v.heard += heard;
      v.asked.push_back({a.elements[0].text(), a.elements[1].text(), a.elements[2].text(), a.elements[3].text(),
                         reply_integer(a.elements[4]), heard > 0});
    }
  } else if (outcome == "free") {
    v.kind = RevokeVote::Kind::k_free;
  } else if (outcome == "foreign" && e.size() >= 2) {
    v.kind = RevokeVote::Kind::k_foreign;
    v.foreign_type = e[1].text();
  } else {
    return std::nullopt;
  }
  return v;
}

}  // namespace redlock::lock
