#pragma once

// What each lock script's answer means, read without any I/O: one server's
// reply in, one vote out. The scripts promise a shape (an array whose first
// element names the outcome, see scripts.cpp); a reply of any other shape
// is std::nullopt, which the caller reports as an unexpected reply. These
// readers never throw and never trust a number they are given, so a
// hostile or broken server can only make a vote fail. `tally` runs a reader
// over every server's answer to one round; Locker (locker.hpp) does the
// talking, quorum.hpp the deciding.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lock/ledger.hpp"
#include "lock/quorum.hpp"
#include "redis/failure.hpp"
#include "redis/reply.hpp"
#include "util/exit_status.hpp"

namespace redlock::lock {

// What one server said to one script in one round.
struct Answer {
  std::optional<redis::Failure> failure;  // no usable answer: unreachable, refused, error reply
  redis::Reply reply;                     // the script's reply when there is no failure
  bool replicas_short = false;            // WAIT came back with fewer replicas than asked
  std::string node;                       // the node that ran the script, "" if unknown
  std::string wait_refused;               // WAIT's error reply: the server refuses WAIT ("" if not)
};

// The outcome a script's answer names (its first element), or "" when the
// reply is not an array that starts with one.
[[nodiscard]] std::string outcome_of(const redis::Reply& reply);

// The failure for a reply of a shape `script` never gives, from the server
// that `where` names.
[[nodiscard]] redis::Failure unexpected_reply(const std::string& where, std::string_view script);

// How replicas_failure's line ends: a server that answered is running, and
// what to do about it is in its own message.
inline constexpr std::string_view k_replicas_hint = "lower --min-replicas or attach replicas";

// A server at `where` that answered, but fewer than `wanted` of whose
// replicas acknowledged the `what` ("lock", "renewal") in time; or, when
// `wait_refused` holds WAIT's error reply, a server that refuses WAIT.
[[nodiscard]] redis::Failure replicas_failure(const std::string& where, int wanted, std::string_view what,
                                              const std::string& wait_refused = {});

// Where the servers were named, in words ("the URL came from
// $REDLOCK_URL"), for quorum_failure's hint when one cannot be reached:
// set once by the command line; "" says nothing.
[[nodiscard]] std::string& servers_named_in();

// The error for a round in which too few of `n` servers answered usably
// (`failures`, at least one; a quorum is `quorum`): the most specific status
// (refused > protocol error > unavailable) with every server's reason, so
// the user knows which ones to look at.
[[nodiscard]] Error quorum_failure(const std::vector<redis::Failure>& failures, size_t n, size_t quorum);

// The one per-server tally: every server's answer to `script` read into a
// vote. A server with no usable answer votes its failure; a reply that
// `read` (a reply in, std::optional<Vote> out) does not know is an
// unexpected reply from `servers[i]`. `Vote` fails by default and has an
// optional `failure`.
template <typename Vote, typename Read>
[[nodiscard]] std::vector<Vote> tally(const std::vector<Answer>& answers, const std::vector<std::string>& servers,
                                      std::string_view script, Read read) {
  std::vector<Vote> votes(answers.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    const Answer& a = answers[i];
    if (a.failure) {
      votes[i].failure = a.failure;
    } else if (std::optional<Vote> vote = read(a.reply)) {
      votes[i] = std::move(*vote);
    } else {
      votes[i].failure = unexpected_reply(servers[i], script);
    }
  }
  return votes;
}

// The votes of the servers whose answer is in (in[i]), nullopt for the
// others: a round so far, for the *_decided functions of quorum.hpp.
template <typename Vote>
[[nodiscard]] std::vector<std::optional<Vote>> votes_in(std::vector<Vote> votes, const std::vector<bool>& in) {
  std::vector<std::optional<Vote>> out(votes.size());
  for (size_t i = 0; i < votes.size(); ++i) {
    if (in[i]) {
      out[i] = std::move(votes[i]);
    }
  }
  return out;
}

// The failure of every vote that has one, in server order.
template <typename Vote>
[[nodiscard]] std::vector<redis::Failure> failures_of(const std::vector<Vote>& votes) {
  std::vector<redis::Failure> out;
  for (const Vote& v : votes) {
    if (v.failure) {
      out.push_back(*v.failure);
    }
  }
  return out;
}

// A reply element as an integer: an integer reply, or a string holding a
// decimal integer; anything else is 0.
[[nodiscard]] long long reply_integer(const redis::Reply& r);

// A reply element as a fence: an integer reply, or a string of decimal
// digits, that usable_fence (layout.hpp) accepts; nullopt for anything else.
[[nodiscard]] std::optional<long long> reply_fence(const redis::Reply& r);

// The acquire script: acquired / reentered / busy / mismatch / upgrade /
// foreign. The vote's `failure` is left empty. A grant or re-entry whose
// fence is not usable is no grant: a failed vote whose `taken` says what the
// server did all the same (so that it is undone) and `bad_fence` what it sent.
[[nodiscard]] std::optional<AcquireVote> read_acquire_answer(const redis::Reply& reply);

// Every server's acquire vote (tally with read_acquire_answer), each failed
// one with its reason: a grant or re-entry with an unusable fence says what
// was sent and that it is given back; one whose replicas fell short of
// `min_replicas` fails as if nothing were taken there.
[[nodiscard]] std::vector<AcquireVote> acquire_votes(const std::vector<Answer>& answers,
                                                     const std::vector<std::string>& servers, int min_replicas);

// The raise_fence script: raised.
[[nodiscard]] std::optional<RaiseVote> read_raise_answer(const redis::Reply& reply);

// The renew script: renewed (with the mode and limit held) / notheld / foreign.
[[nodiscard]] std::optional<RenewVote> read_renew_answer(const redis::Reply& reply);

// Every server's renew vote (tally with read_renew_answer): a server marked
// in `moved` (its sentinels failed over) does not hold it; a renewal whose
// replicas fell short of `min_replicas` fails.
[[nodiscard]] std::vector<RenewVote> renew_votes(const std::vector<Answer>& answers,
                                                 const std::vector<std::string>& servers, int min_replicas,
                                                 const std::vector<bool>& moved);

// The release script (a release, or the end of a hold): released / decremented
// / kept, each with the levels dropped (and kept, the time left), or
// notheld / foreign.
[[nodiscard]] std::optional<ReleaseVote> read_release_answer(const redis::Reply& reply);

// The break script: broken (with the mode, limit, server time and every
// holder it took the lock from) / free / foreign.
[[nodiscard]] std::optional<BreakVote> read_break_answer(const redis::Reply& reply);

// The inspect script (status): `view`'s type, server time, PTTL and holders
// (see read_holders). Nullopt for a reply of another shape.
[[nodiscard]] std::optional<ServerView> read_inspect_answer(const redis::Reply& reply);

// Every server's view of a lock from its answer to the inspect script
// (tally with read_inspect_answer), its `endpoint` from `servers`; one with
// no usable answer shows why as its `error`, and the reason is appended to
// `failures`.
[[nodiscard]] std::vector<ServerView> inspect_views(const std::vector<Answer>& answers,
                                                    const std::vector<std::string>& servers,
                                                    std::vector<redis::Failure>& failures);

// A reply of a script that reads many locks ({outcome, lock, ...}, see
// scripts.hpp): each lock's own reply, the first locks asked for first, at
// least one and at most `asked`; nullopt for a reply of another shape (or
// another outcome).
[[nodiscard]] std::optional<std::vector<redis::Reply>> per_lock_replies(redis::Reply reply, std::string_view outcome,
                                                                        size_t asked);

// The line script (status): the live waiters at the head of the line, first
// come first (see read_waiters), and how many are alive in all.
struct LineAnswer {
  std::vector<WaiterView> head;
  long long waiting = 0;
};
// Nullopt for a reply of another shape.
[[nodiscard]] std::optional<LineAnswer> read_line_answer(const redis::Reply& reply);

// One server's answer to the history script: its runs, newest first, and
// its clock; or a ledger that is not redlock's.
struct HistoryVote {
  enum class Kind { k_runs, k_foreign, k_failed };
  Kind kind = Kind::k_failed;
  std::vector<Run> runs;
  long long now_ms = 0;
  std::string foreign_type;
  std::optional<redis::Failure> failure;
};
// The history script: runs (entries read_run does not know are left out) / foreign.
[[nodiscard]] std::optional<HistoryVote> read_history_answer(const redis::Reply& reply);

// The start-run script's answer: whether the run began there, and the run
// before it that never ended, when it names one. Nullopt for a reply of
// another shape (and for notheld and foreign: nothing began).
struct StartedRun {
  std::optional<RunSeen> abandoned;
};
[[nodiscard]] std::optional<StartedRun> read_start_run_answer(const redis::Reply& reply);

// One server's answer for one name to the runs script (status). Nullopt for a reply of another shape.
[[nodiscard]] std::optional<LastRuns> read_runs_answer(const redis::Reply& reply);

// The suspend script (suspend and resume): suspended / resumed / foreign.
[[nodiscard]] std::optional<MarkVote> read_mark_answer(const redis::Reply& reply);

// The revoke script: revoking (the holders asked) / free / foreign.
[[nodiscard]] std::optional<RevokeVote> read_revoke_answer(const redis::Reply& reply);

}  // namespace redlock::lock
