#include "redis/reply.hpp"

#include <hiredis/hiredis.h>

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

ExitStatus classify_error(const std::string& e) {
  auto starts = [&](const char* p) { return e.rfind(p, 0) == 0; };
  if (starts("NOAUTH") || starts("WRONGPASS") || starts("NOPERM") || e.find("unauthenticated") != std::string::npos ||
      starts("ERR AUTH") || starts("ERR invalid password") || starts("ERR Client sent AUTH") ||
      e.find("The user executing the script can't") != std::string::npos ||
      e.find("no permissions to") != std::string::npos) {
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
