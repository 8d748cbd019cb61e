#include "redis/reply.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>

namespace redlock::redis {

std::string Reply::text() const {
  if (type == Type::k_integer) {
    return std::to_string(integer);
  }
  return str;
}

Reply copy_reply(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.type = r->type == REDIS_REPLY_STRING   ? Reply::Type::k_string
                 : r->type == REDIS_REPLY_STATUS ? Reply::Type::k_status
                                                 : Reply::Type::k_error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::k_integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::k_array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) {
        out.elements.push_back(copy_reply(r->element[i]));
      }
      break;
    default:
      out.type = Reply::Type::k_nil;
      break;
  }
  return out;
}

namespace {

// What a bounded reader has taken in of the reply it is reading, and why
// it refused one (empty until it does).
struct Budget {
  size_t elements = 0;
  size_t bytes = 0;
  std::string refusal;
};

Budget& budget_of(const redisReadTask* task) {
  return *static_cast<Budget*>(task->privdata);
}

// The first object of a reply is its root: a new reply, a new budget.
Budget& budget_for(const redisReadTask* task) {
  Budget& b = budget_of(task);
  if (task->parent == nullptr) {
    b.elements = 1;
    b.bytes = 0;
  }
  return b;
}

// These reply object functions build the redisReply objects hiredis's own
// build (freeReplyObject frees them), each placed in its parent's slot, but
// refuse what would pass a bound before allocating for it: hiredis 0.14's
// own array function callocs as many slots as the server announces. A
// refusal (nullptr) fails the reader at once; it frees what it built.
void* place(const redisReadTask* task, redisReply* r) {
  if (r != nullptr && task->parent != nullptr) {
    static_cast<redisReply*>(task->parent->obj)->element[task->idx] = r;
  }
  return r;
}

redisReply* new_reply(int type) {
  auto* r = static_cast<redisReply*>(std::calloc(1, sizeof(redisReply)));
  if (r != nullptr) {
    r->type = type;
  }
  return r;
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
  Budget& b = budget_for(task);
  if (len > k_max_reply_bytes - b.bytes) {
    b.refusal =
        fmt::format("{} bytes of text, past the {} a reply to redlock may hold", b.bytes + len, k_max_reply_bytes);
    return nullptr;
  }
  b.bytes += len;
  redisReply* r = new_reply(task->type);
  char* copy = static_cast<char*>(std::malloc(len + 1));
  if (r == nullptr || copy == nullptr) {
    std::free(r);
    std::free(copy);
    return nullptr;
  }
  std::memcpy(copy, str, len);
  copy[len] = '\0';
  r->str = copy;
  r->len = len;
  return place(task, r);
}

void* create_array(const redisReadTask* task, int count) {
  Budget& b = budget_for(task);
  int depth = 1;
  for (const redisReadTask* t = task->parent; t != nullptr; t = t->parent) {
    ++depth;
  }
  const auto n = static_cast<size_t>(count);
  if (depth > k_max_reply_depth) {
    b.refusal = fmt::format("arrays nested {} deep, past the {} of any reply to redlock", depth, k_max_reply_depth);
    return nullptr;
  }
  if (n > k_max_reply_elements - b.elements) {
    b.refusal =
        fmt::format("an array of {} elements, past the {} a reply to redlock may hold", n, k_max_reply_elements);
    return nullptr;
  }
  b.elements += n;
  redisReply* r = new_reply(REDIS_REPLY_ARRAY);
  if (r == nullptr) {
    return nullptr;
  }
  if (n > 0) {
    r->element = static_cast<redisReply**>(std::calloc(n, sizeof(redisReply*)));
    if (r->element == nullptr) {
      std::free(r);
      return nullptr;
    }
  }
  r->elements = n;
  return place(task, r);
}

void* create_integer(const redisReadTask* task, long long value) {
  (void)budget_for(task);
  redisReply* r = new_reply(REDIS_REPLY_INTEGER);
  if (r != nullptr) {
    r->integer = value;
  }
  return place(task, r);
}

void* create_nil(const redisReadTask* task) {
  (void)budget_for(task);
  return place(task, new_reply(REDIS_REPLY_NIL));
}

redisReplyObjectFunctions k_bounded_functions = {create_string, create_array, create_integer, create_nil,
                                                 freeReplyObject};

// The length a bulk string announces at the start of `waiting` (the digits
// before "\r\n"), once they have all come.
std::optional<size_t> announced_length(std::string_view waiting) {
  const size_t end = waiting.find("\r\n");
  if (end == std::string_view::npos || end == 0 || end > 19) {  // 19 digits cannot overflow
    return std::nullopt;
  }
  static_assert(sizeof(size_t) >= 8);
  size_t n = 0;
  for (char c : waiting.substr(0, end)) {
    if (c < '0' || c > '9') {
      return std::nullopt;  // -1 (nil), or hiredis reports it
    }
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return n;
}

// Why the bytes waiting in `r` (the start of a reply, or of its next part)
// are more than a reply may hold, or "".
std::string oversized(const redisReader* r, const Budget& b) {
  if (r->ridx < 0 || r->pos > r->len) {
    return "";
  }
  const std::string_view waiting(r->buf + r->pos, r->len - r->pos);
  const size_t used = r->ridx == 0 ? 0 : b.bytes;  // a root starts a new reply
  const auto length = r->rstack[r->ridx].type == REDIS_REPLY_STRING ? announced_length(waiting) : std::nullopt;
  if (length && *length > k_max_reply_bytes - used) {
    return fmt::format("a string of {} bytes, past the {} a reply to redlock may hold", *length, k_max_reply_bytes);
  }
  if (waiting.size() > k_max_reply_bytes - used + 32) {
    return fmt::format("more than {} bytes in one reply", k_max_reply_bytes);
  }
  return "";
}

}  // namespace

redisReader* create_reader() {
  redisReader* r = redisReaderCreateWithFunctions(&k_bounded_functions);
  if (r == nullptr) {
    throw std::bad_alloc();
  }
  r->privdata = new Budget;
  return r;
}

void free_reader(redisReader* reader) {
  if (reader != nullptr) {
    delete static_cast<Budget*>(reader->privdata);
    redisReaderFree(reader);
  }
}

int read_reply(redisReader* reader, void** reply) {
  if (redisReaderGetReply(reader, reply) != REDIS_OK) {
    return REDIS_ERR;
  }
  auto& b = *static_cast<Budget*>(reader->privdata);
  if (*reply == nullptr) {
    if (std::string why = oversized(reader, b); !why.empty()) {
      // As hiredis fails a reader: every later call fails too.
      b.refusal = std::move(why);
      reader->err = REDIS_ERR_PROTOCOL;
      std::snprintf(reader->errstr, sizeof(reader->errstr), "%s", "reply past redlock's bounds");
      return REDIS_ERR;
    }
  }
  return REDIS_OK;
}

std::string reader_failure(const redisReader* reader) {
  const auto& b = *static_cast<const Budget*>(reader->privdata);
  if (!b.refusal.empty()) {
    return fmt::format("an unexpected reply: {} (is it a Redis server?)", b.refusal);
  }
  return fmt::format("a malformed reply: {}", reader->errstr);
}

ExitStatus classify_error(const std::string& e) {
  auto starts = [&](const char* p) { return e.rfind(p, 0) == 0; };
  if (starts("NOAUTH") || starts("WRONGPASS") || starts("NOPERM") || e.find("unauthenticated") != std::string::npos ||
      starts("ERR AUTH") || starts("ERR invalid password") || starts("ERR Client sent AUTH") ||
      e.find("The user executing the script can't") != std::string::npos ||
      e.find("no permissions to") != std::string::npos ||
      // Redis 7.2 and later, and Valkey, inside a script.
      e.find("ACL failure in script") != std::string::npos || e.find("No permissions to") != std::string::npos) {
    return ExitStatus::k_refused;
  }
  // A cluster that lost slots comes back, a server loading its data or
  // running a long script answers soon: like an unreachable server (a wait
  // waits them out).
  if (starts("CLUSTERDOWN") || starts("LOADING") || starts("BUSY ") || starts("MASTERDOWN") || starts("TRYAGAIN")) {
    return ExitStatus::k_unavailable;
  }
  return ExitStatus::k_protocol;
}

std::string error_hint(const std::string& e) {
  auto starts = [&](const char* p) { return e.rfind(p, 0) == 0; };
  if (starts("LOADING")) {
    return " (it is loading its data: try again shortly)";
  }
  if (starts("BUSY ")) {
    return " (another script is running on it: try again shortly, or end that script with SCRIPT KILL)";
  }
  if (starts("READONLY")) {
    return " (it is a replica: give redlock the master, or the sentinels with redis+sentinel://)";
  }
  if (starts("OOM")) {
    return " (it is out of memory: raise maxmemory or free some)";
  }
  if (starts("MASTERDOWN") || starts("TRYAGAIN") || starts("CLUSTERDOWN")) {
    return " (try again shortly)";
  }
  if (classify_error(e) == ExitStatus::k_refused) {
    return " (check the user's ACL permissions)";
  }
  return "";
}

}  // namespace redlock::redis
