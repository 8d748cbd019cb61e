// The lock hash as `status` reads it back (lock/layout: the plain layout's
// fields, or a semaphore's / readers' 'h:<token>' JSON entries), and the
// verdict across servers (status/verdict: judge). Whatever a server holds under
// a lock's key, reading it never throws and never invents a holder.
//
// Input: a type byte ("none", a foreign "string", else "hash"), the
// server's time and the key's PTTL (8 bytes each), then field, value, field,
// value... separated by NUL bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "lock/layout.hpp"
#include "status/verdict.hpp"

namespace {

using redlock::lock::ServerView;
using redlock::status::Verdict;

long long take_ll(const uint8_t*& data, size_t& size) {
  long long v = 0;
  if (size >= sizeof v) {
    std::memcpy(&v, data, sizeof v);
    data += sizeof v;
    size -= sizeof v;
  }
  return v;
}

void check(const Verdict& v) {
  if ((v.state == Verdict::State::k_held) == v.holders.empty()) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  ServerView view;
  view.endpoint = "redis://fuzz";
  view.type = data[0] == 0 ? "none" : data[0] == 1 ? "string" : "hash";
  ++data;
  --size;
  // Redis's TIME in milliseconds: positive, and far below 2^45 for centuries.
  view.now_ms = static_cast<long long>(static_cast<unsigned long long>(take_ll(data, size)) % (1ULL << 45));
  view.ttl_ms = take_ll(data, size);
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      parts.emplace_back();
    } else {
      parts.back().push_back(static_cast<char>(data[i]));
    }
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t i = 0; i + 1 < parts.size(); i += 2) {
    fields.emplace_back(parts[i], parts[i + 1]);
  }
  redlock::lock::read_holders(view, fields);
  if (view.foreign && !view.holders.empty()) {
    std::abort();
  }
  check(redlock::status::judge("fuzz", {view}));
  ServerView down;
  down.endpoint = "redis://down";
  down.error = "unreachable";
  check(redlock::status::judge("fuzz", {view, view, down}));
  return 0;
}
