// RESP replies as a server might send them, whole or cut into pieces: the
// bytes go through hiredis's reader exactly as Connection feeds it, and every
// reply is copied into a Reply and read the way the lock core reads script
// answers (kind, integers, texts) and error replies (classify_error).
//
// Every reply is also read as each lock script's answer (lock/answers), the
// way Locker reads what a server said: whatever the bytes, a reader gives a
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

// hiredis 0.14 callocs an array's element pointers as soon as it reads the
// header ("*585477708\r\n": 4.6 GB) and has no limit of its own. Untouched,
// that memory costs nothing on Linux; too much of it is an out-of-memory
// error from the reader, reported as a protocol error. Inputs announcing
// more than 2^16 elements are left out so the fuzzer spends its time on
// replies instead of on the allocator.
bool announces_huge_array(const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != '*') {
      continue;
    }
    unsigned long long n = 0;
    for (size_t k = i + 1; k < size && data[k] >= '0' && data[k] <= '9' && n <= (1U << 16); ++k) {
      n = n * 10 + (data[k] - '0');
    }
    if (n > (1U << 16)) {
      return true;
    }
  }
  return false;
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
  if (size == 0 || announces_huge_array(data, size)) {
    return 0;
  }
  // The first byte sets the size of the pieces the rest arrives in (1-256).
  const size_t piece = static_cast<size_t>(data[0]) + 1;
  ++data;
  --size;
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(), redisReaderFree);
  for (size_t at = 0; at < size; at += piece) {
    const size_t n = size - at < piece ? size - at : piece;
    if (redisReaderFeed(reader.get(), reinterpret_cast<const char*>(data + at), n) != REDIS_OK) {
      return 0;
    }
    while (true) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) {
        return 0;  // malformed: the connection reports it and gives up
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
