// RESP replies as a server might send them, whole or cut into pieces: the
// bytes go through the bounded reader (redis/reply) exactly as Connection
// feeds it, and every reply is copied into a Reply and read the way the lock
// core reads script answers (kind, integers, texts) and error replies
// (classify_error). No announced size is too large to try: one past a bound
// fails the reader at once, before anything is allocated for it.
//
// Every reply is also read as each lock script's answer (lock/answers: all
// twelve readers), the way Locker reads what a server said: whatever the bytes, a reader gives a
// vote or "unexpected", and never a vote that breaks what the decisions
// rely on.
#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "lock/answers.hpp"
#include "redis/reply.hpp"
#include "util/exit_status.hpp"

namespace {

using redlock::ExitStatus;
using redlock::redis::Reply;

void walk(const Reply& r) {
  const std::string text = r.text();
  if (r.type == Reply::Type::k_integer ? text != std::to_string(r.integer) : text != r.str) {
    std::abort();
  }
  if (r.is_error()) {
    const ExitStatus s = redlock::redis::classify_error(r.str);
    if (s != ExitStatus::k_refused && s != ExitStatus::k_protocol && s != ExitStatus::k_unavailable) {
      std::abort();
    }
  }
  if (!r.is_array() && !r.elements.empty()) {
    std::abort();
  }
  for (const auto& e : r.elements) {
    walk(e);
  }
}

// A run read from a reply always has the id that makes it one run on
// every server.
void check_runs(const std::vector<redlock::lock::Run>& runs) {
  for (const auto& r : runs) {
    if (r.id.empty()) {
      std::abort();
    }
  }
}

// The ledger's readers: history, start-run and status's runs.
void read_ledger_answers(const Reply& reply) {
  if (auto v = redlock::lock::read_history_answer(reply)) {
    check_runs(v->runs);
    if (v->failure || (v->kind != redlock::lock::HistoryVote::Kind::k_runs && !v->runs.empty())) {
      std::abort();
    }
  }
  (void)redlock::lock::read_start_run_answer(reply);
  if (auto v = redlock::lock::read_runs_answer(reply)) {
    if ((v->last && v->last->id.empty()) || (v->last_ok && v->last_ok->id.empty())) {
      std::abort();
    }
  }
}

// The operators' marks: suspend and revoke.
void read_mark_answers(const Reply& reply) {
  if (auto v = redlock::lock::read_mark_answer(reply)) {
    if (v->failure) {
      std::abort();
    }
  }
  if (auto v = redlock::lock::read_revoke_answer(reply)) {
    if (v->failure || v->listeners < 0 || v->heard < 0 ||
        (v->kind != redlock::lock::RevokeVote::Kind::k_revoking && !v->asked.empty())) {
      std::abort();
    }
  }
}

// Reads `reply` as the answer of every script and checks what the quorum
// decisions rely on.
void read_as_answers(const Reply& reply) {
  using redlock::lock::AcquireVote;
  if (auto v = redlock::lock::read_acquire_answer(reply)) {
    // A failed vote comes only from a grant whose fence is unusable: the
    // server took something, which the caller must give back.
    const bool took = v->taken != AcquireVote::Kind::k_failed;
    const bool failed = v->kind == AcquireVote::Kind::k_failed;
    if (failed != took || v->failure || v->ttl_left.count() < 0) {
      std::abort();
    }
  }
  if (auto v = redlock::lock::read_renew_answer(reply)) {
    if (v->failure || v->claim.limit < 1 || v->claim.limit > 1'000'000) {
      std::abort();
    }
  }
  if (auto v = redlock::lock::read_release_answer(reply)) {
    if (v->failure || v->kept.count() < 0) {
      std::abort();
    }
  }
  (void)redlock::lock::read_raise_answer(reply);
  if (auto v = redlock::lock::read_break_answer(reply)) {
    if (v->failure || (v->kind != redlock::lock::BreakVote::Kind::k_broken && !v->holders.empty())) {
      std::abort();
    }
  }
  if (auto view = redlock::lock::read_inspect_answer(reply)) {
    for (const auto& h : view->holders) {
      if (h.token.empty()) {
        std::abort();
      }
    }
  }
  if (auto line = redlock::lock::read_line_answer(reply)) {
    if (line->waiting < 0) {
      std::abort();
    }
  }
  read_ledger_answers(reply);
  read_mark_answers(reply);
}

// Tallies `reply` as one server's answer, as a round does: a vote that
// counts for nothing always says why.
void tally_as_a_round(const Reply& reply) {
  using redlock::lock::AcquireVote;
  using redlock::lock::RenewVote;
  redlock::lock::Answer answer;
  answer.reply = reply;
  answer.replicas_short = !reply.elements.empty() && reply.elements.size() % 2 == 0;
  const std::vector<redlock::lock::Answer> answers = {answer};
  const std::vector<std::string> servers = {"redis://fuzz"};
  for (const auto& v : redlock::lock::acquire_votes(answers, servers, 1)) {
    if (v.kind == AcquireVote::Kind::k_failed && !v.failure) {
      std::abort();
    }
  }
  for (const auto& v : redlock::lock::renew_votes(answers, servers, 1, {false})) {
    if (v.kind == RenewVote::Kind::k_failed && !v.failure) {
      std::abort();
    }
  }
  std::vector<redlock::redis::Failure> failures;
  const auto views = redlock::lock::inspect_views(answers, servers, failures);
  if (views.size() != 1 || views[0].error.has_value() != (failures.size() == 1)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  // The first byte sets the size of the pieces the rest arrives in (1-256).
  const size_t piece = static_cast<size_t>(data[0]) + 1;
  ++data;
  --size;
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redlock::redis::create_reader(),
                                                              redlock::redis::free_reader);
  for (size_t at = 0; at < size; at += piece) {
    const size_t n = size - at < piece ? size - at : piece;
    if (redisReaderFeed(reader.get(), reinterpret_cast<const char*>(data + at), n) != REDIS_OK) {
      return 0;
    }
    while (true) {
      void* raw = nullptr;
      if (redlock::redis::read_reply(reader.get(), &raw) != REDIS_OK) {
        if (redlock::redis::reader_failure(reader.get()).empty()) {
          std::abort();
        }
        return 0;  // malformed or past a bound: the connection reports it and gives up
      }
      if (raw == nullptr) {
        break;
      }
      const Reply reply = redlock::redis::copy_reply(static_cast<redisReply*>(raw));
      freeReplyObject(raw);
      walk(reply);
      read_as_answers(reply);
      tally_as_a_round(reply);
    }
  }
  return 0;
}
