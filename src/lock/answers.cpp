#include "lock/answers.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "lock/layout.hpp"
#include "util/number.hpp"

namespace redlock::lock {

using redis::Reply;

namespace {

// The outcome a script's answer names, or "" when the reply is not an
// array that starts with one.
std::string outcome_of(const Reply& reply) {
  if (!reply.is_array() || reply.elements.empty() || reply.elements[0].is_array()) {
    return "";
  }
  return reply.elements[0].text();
}

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

}  // namespace

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
    return read_hold(outcome == "acquired" ? AcquireVote::Kind::k_granted : AcquireVote::Kind::k_reentered, e);
  }
  if (outcome == "busy" && e.size() >= 4) {
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
  } else if ((outcome == "mismatch" || outcome == "upgrade") && e.size() >= 3) {
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

std::optional<ReleaseAnswer> read_release_answer(const Reply& reply) {
  const std::string outcome = outcome_of(reply);
  ReleaseAnswer a;
  if (outcome == "released") {
    a.kind = ReleaseAnswer::Kind::k_released;
  } else if (outcome == "decremented") {
    a.kind = ReleaseAnswer::Kind::k_decremented;
  } else if (outcome == "notheld") {
    a.kind = ReleaseAnswer::Kind::k_not_held;
  } else if (outcome == "foreign") {
    a.kind = ReleaseAnswer::Kind::k_foreign;
    a.foreign_type = foreign_type_of(reply);
  } else {
    return std::nullopt;
  }
  return a;
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

bool read_inspect_answer(const Reply& reply, ServerView& view) {
  const auto& e = reply.elements;
  if (outcome_of(reply).empty() || e.size() < 5) {
    return false;
  }
  view.type = e[0].text();
  view.now_ms = reply_integer(e[1]);
  view.ttl_ms = reply_integer(e[3]);
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t k = 0; k + 1 < e[4].elements.size(); k += 2) {
    fields.emplace_back(e[4].elements[k].text(), e[4].elements[k + 1].text());
  }
  read_holders(view, fields);
  return true;
}

std::optional<std::vector<WaiterView>> read_line_answer(const Reply& reply) {
  const auto& e = reply.elements;
  if (outcome_of(reply).empty() || e.size() < 3) {
    return std::nullopt;
  }
  if (e[0].text() != "hash") {
    return std::vector<WaiterView>{};  // nobody waits (or the key is not a line: nobody redlock knows)
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t k = 0; k + 1 < e[2].elements.size(); k += 2) {
    fields.emplace_back(e[2].elements[k].text(), e[2].elements[k + 1].text());
  }
  return read_waiters(fields, reply_integer(e[1]));
}

}  // namespace redlock::lock
