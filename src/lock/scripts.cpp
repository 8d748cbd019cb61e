#include "lock/scripts.hpp"

#include <openssl/sha.h>

#include <fmt/format.h>

namespace redlock::lock {
namespace {

std::string sha1_hex(std::string_view body) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest);
  std::string out;
  for (unsigned char b : digest) {
    out += fmt::format("{:02x}", b);
  }
  return out;
}

Script make(std::string_view name, std::string_view body) {
  return Script{name, body, sha1_hex(body)};
}

// Shared prologue: classify the key at KEYS[1]. Anything that is not a hash
// with our token and count fields is foreign and is never touched.
#define REDLOCK_CHECK_KEY                                                \
  "local t = redis.call('TYPE', KEYS[1])['ok']\n"                        \
  "local h = nil\n"                                                      \
  "if t == 'hash' then\n"                                                \
  "  h = redis.call('HMGET', KEYS[1], 'token', 'count', 'fence', 'host', 'pid')\n" \
  "  if not h[1] or not h[2] then return {'foreign', 'hash without redlock fields'} end\n" \
  "elseif t ~= 'none' then\n"                                            \
  "  return {'foreign', t}\n"                                            \
  "end\n"

// Acquire or re-enter. Atomic so that the lock never exists without its
// TTL, the fence is incremented exactly once per new holder, and a re-entry
// is granted only to the token that holds the lock at this instant.
// KEYS: lock hash, fence counter. ARGV: fresh token, ttl ms, host, pid, cmd,
// token to re-enter ('' for none).
constexpr std::string_view k_acquire = REDLOCK_CHECK_KEY R"lua(
local ttl = tonumber(ARGV[2])
if t == 'none' then
  local fence = redis.call('INCR', KEYS[2])
  local now = redis.call('TIME')
  local since = string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000))
  redis.call('HSET', KEYS[1], 'token', ARGV[1], 'count', 1, 'fence', fence, 'host', ARGV[3],
             'pid', ARGV[4], 'cmd', ARGV[5], 'since_ms', since, 'ttl_ms', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {'acquired', ARGV[1], fence, 1, ttl}
end
if ARGV[6] ~= '' and h[1] == ARGV[6] then
  local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('HSET', KEYS[1], 'ttl_ms', ARGV[2])
    pttl = ttl
  end
  return {'reentered', h[1], tonumber(h[3]), count, pttl}
end
return {'busy', redis.call('PTTL', KEYS[1]), h[4] or '', h[5] or ''}
)lua";

// Release one level. Atomic so that only the holder's token can delete the
// key, and waiters are told (PUBLISH) exactly when it becomes free.
// KEYS: lock hash. ARGV: token, release channel.
constexpr std::string_view k_release = REDLOCK_CHECK_KEY R"lua(
if t == 'none' or h[1] ~= ARGV[1] then return {'notheld'} end
local count = redis.call('HINCRBY', KEYS[1], 'count', -1)
if count > 0 then return {'decremented', count} end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], 'released')
return {'released', 0}
)lua";

// Extend the TTL. Atomic so that an expired lock is never recreated and only
// the holder's token extends it.
// KEYS: lock hash. ARGV: token, ttl ms.
constexpr std::string_view k_renew = REDLOCK_CHECK_KEY R"lua(
if t == 'none' or h[1] ~= ARGV[1] then return {'notheld'} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[1], 'ttl_ms', ARGV[2])
return {'renewed', tonumber(ARGV[2])}
)lua";

// Read everything status shows in one consistent snapshot, with the
// server's clock for the age.
// KEYS: lock hash, fence counter.
constexpr std::string_view k_inspect = R"lua(
local t = redis.call('TYPE', KEYS[1])['ok']
local now = redis.call('TIME')
local now_ms = string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000))
local fence = redis.pcall('GET', KEYS[2])
if type(fence) ~= 'string' then fence = '' end
if t ~= 'hash' then return {t, now_ms, fence, -2, {}} end
return {t, now_ms, fence, redis.call('PTTL', KEYS[1]), redis.call('HGETALL', KEYS[1])}
)lua";

// Redlock fencing: raise this server's counter (and the held lock's fence)
// to the quorum's maximum, so any later quorum, which shares a server with
// this one, hands out a larger fence.
// KEYS: lock hash, fence counter. ARGV: token, fence.
constexpr std::string_view k_raise_fence = REDLOCK_CHECK_KEY R"lua(
local f = tonumber(ARGV[2])
local cur = tonumber(redis.call('GET', KEYS[2]) or '0')
if cur < f then redis.call('SET', KEYS[2], ARGV[2]) end
if t == 'hash' and h[1] == ARGV[1] then redis.call('HSET', KEYS[1], 'fence', ARGV[2]) end
return {'raised', f}
)lua";

#undef REDLOCK_CHECK_KEY

}  // namespace

const Script& acquire_script() {
  static const Script s = make("acquire", k_acquire);
  return s;
}
const Script& release_script() {
  static const Script s = make("release", k_release);
  return s;
}
const Script& renew_script() {
  static const Script s = make("renew", k_renew);
  return s;
}
const Script& inspect_script() {
  static const Script s = make("inspect", k_inspect);
  return s;
}
const Script& raise_fence_script() {
  static const Script s = make("raise-fence", k_raise_fence);
  return s;
}

}  // namespace redlock::lock
