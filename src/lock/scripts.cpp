#include "lock/scripts.hpp"

#include <array>

#include "util/sha1.hpp"

namespace redlock::lock {
namespace {

Script make(std::string_view name, std::string_view body) {
  return Script{name, body, sha1_hex(body)};
}

// Shared prologue: classify the key at KEYS[1] and read the clock.
// - t == 'none': free.
// - a hash that carries redlock's schema marker (field 'schema' =
//   'redlock/1'; no other writer sets it by accident):
//   - with token and count fields: a plain (exclusive) lock; h holds token,
//     count, fence, host, pid;
//   - with a mode field: a semaphore ('semaphore', with its limit) or the
//     readers of a readers/writer lock ('shared'); every holder is a field
//     'h:<token>' holding JSON {count, fence, expiry, since, ttl, host, pid,
//     cmd} with its own expiry in server milliseconds (the fence as a string:
//     cjson keeps only 14 digits of a number), and the key lives as long as
//     the longest-lived holder.
// Anything else is foreign and is never touched.
#define REDLOCK_CHECK_KEY                                                                                     \
  "local t = redis.call('TYPE', KEYS[1])['ok']\n"                                                             \
  "local h = nil\n"                                                                                           \
  "local multi = nil\n"                                                                                       \
  "if t == 'hash' then\n"                                                                                     \
  "  h = redis.call('HMGET', KEYS[1], 'token', 'count', 'fence', 'host', 'pid', 'mode', 'limit', 'schema')\n" \
  "  if h[8] ~= 'redlock/1' then return {'foreign', 'hash without redlock\\'s schema field'} end\n"           \
  "  if h[6] == 'semaphore' or h[6] == 'shared' then multi = h[6]\n"                                          \
  "  elseif not h[1] or not h[2] then return {'foreign', 'hash without redlock fields'} end\n"                \
  "elseif t ~= 'none' then\n"                                                                                 \
  "  return {'foreign', t}\n"                                                                                 \
  "end\n"                                                                                                     \
  "local clock = redis.call('TIME')\n"                                                                        \
  "local now = clock[1] * 1000 + math.floor(clock[2] / 1000)\n"                                               \
  "local function holders()\n"                                                                                \
  "  local out = {}\n"                                                                                        \
  "  local all = redis.call('HGETALL', KEYS[1])\n"                                                            \
  "  for i = 1, #all, 2 do\n"                                                                                 \
  "    if string.sub(all[i], 1, 2) == 'h:' then\n"                                                            \
  "      local v = cjson.decode(all[i + 1])\n"                                                                \
  "      if v.expiry <= now then redis.call('HDEL', KEYS[1], all[i])\n"                                       \
  "      else v.token = string.sub(all[i], 3); out[#out + 1] = v end\n"                                       \
  "    end\n"                                                                                                 \
  "  end\n"                                                                                                   \
  "  return out\n"                                                                                            \
  "end\n"                                                                                                     \
  "local function keep_alive(list)\n"                                                                         \
  "  local last = now\n"                                                                                      \
  "  for _, v in ipairs(list) do if v.expiry > last then last = v.expiry end end\n"                           \
  "  if last > now then redis.call('PEXPIRE', KEYS[1], last - now)\n"                                         \
  "  else redis.call('DEL', KEYS[1]) end\n"                                                                   \
  "end\n"                                                                                                     \
  "local function extend(ttl)\n"                                                                              \
  "  local pttl = redis.call('PTTL', KEYS[1])\n"                                                              \
  "  if pttl >= ttl then return pttl end\n"                                                                   \
  "  redis.call('PEXPIRE', KEYS[1], ttl)\n"                                                                   \
  "  redis.call('HSET', KEYS[1], 'ttl_ms', string.format('%d', ttl))\n"                                       \
  "  return ttl\n"                                                                                            \
  "end\n"                                                                                                     \
  "local function lengthen(v, ttl)\n"                                                                         \
  "  if v.expiry < now + ttl then v.expiry = now + ttl; v.ttl = ttl end\n"                                    \
  "end\n"

// Acquire or re-enter. Atomic so that the lock never exists without its
// TTL, the fence is raised exactly once per new holder, a re-entry is
// granted only to a token that holds the lock at this instant and in a mode
// at least as strong as asked (a reader's share never becomes exclusive),
// and a semaphore never has more live holders than its limit on this server.
// Fences are a hybrid logical clock: max(counter + 1, server TIME in µs), so
// they keep increasing across a restart that lost the counter as long as the
// server's clock does not go back. Numbers go to Redis through
// string.format('%d'): Lua would print 16 digits in exponent notation.
// A minimum hold (exec --hold-at-least, plain locks only) makes the first
// expiry at least that long, so a holder that is killed or whose host dies
// still keeps the lock for its minimum hold.
// KEYS: lock hash, fence counter. ARGV: fresh token, ttl ms, host, pid, cmd,
// token to re-enter ('' for none), mode ('exclusive', 'semaphore' or
// 'shared'), limit, minimum hold ms.
constexpr std::string_view k_acquire = REDLOCK_CHECK_KEY R"lua(
local ttl = tonumber(ARGV[2])
local mode = ARGV[7]
local hold = tonumber(ARGV[9]) or 0
if multi then
  local list = holders()
  local first = nil
  local soonest = nil
  for _, v in ipairs(list) do
    if ARGV[6] ~= '' and v.token == ARGV[6] then
      if multi == 'shared' and mode ~= 'shared' then return {'upgrade', multi, ''} end
      if multi == 'semaphore' and (mode ~= 'semaphore' or h[7] ~= ARGV[8]) then
        return {'mismatch', multi, h[7] or ''}
      end
      v.count = v.count + 1
      lengthen(v, ttl)
      local token = v.token
      v.token = nil
      redis.call('HSET', KEYS[1], 'h:' .. token, cjson.encode(v))
      keep_alive(list)
      return {'reentered', token, tonumber(v.fence), v.count, v.expiry - now}
    end
    first = first or v
    if not soonest or v.expiry - now < soonest then soonest = v.expiry - now end
  end
  if #list > 0 then
    if mode ~= multi or (multi == 'semaphore' and h[7] ~= ARGV[8]) then
      if multi == 'shared' and mode == 'exclusive' then
        return {'busy', soonest, first.host, tostring(first.pid)}
      end
      return {'mismatch', multi, h[7] or ''}
    end
    if multi == 'semaphore' and #list >= tonumber(h[7]) then
      return {'busy', soonest, first.host, tostring(first.pid)}
    end
  else
    redis.call('DEL', KEYS[1])
    t = 'none'
  end
elseif t == 'hash' then
  if ARGV[6] ~= '' and h[1] == ARGV[6] then
    local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
    local since = tonumber(redis.call('HMGET', KEYS[1], 'since_ms')[1]) or now
    return {'reentered', h[1], tonumber(h[3]), count, extend(math.max(ttl, since + hold - now))}
  end
  if mode == 'semaphore' then return {'mismatch', 'exclusive', '1'} end
  return {'busy', redis.call('PTTL', KEYS[1]), h[4] or '', h[5] or ''}
end
local counter = redis.call('GET', KEYS[2])
local last = 0
if counter then
  last = tonumber(counter)
  if not last then return redis.error_reply('the fence counter ' .. KEYS[2] .. ' is not a number') end
end
local fence = math.max(last + 1, clock[1] * 1000000 + clock[2])
local fence_text = string.format('%d', fence)
redis.call('SET', KEYS[2], fence_text)
local since = string.format('%d', now)
if mode == 'exclusive' then
  if t == 'none' then
    redis.call('HSET', KEYS[1], 'schema', 'redlock/1', 'token', ARGV[1], 'count', 1, 'fence', fence_text,
               'host', ARGV[3], 'pid', ARGV[4], 'cmd', ARGV[5], 'since_ms', since, 'ttl_ms', ARGV[2])
    redis.call('PEXPIRE', KEYS[1], math.max(ttl, hold))
    return {'acquired', ARGV[1], fence, 1, ttl}
  end
end
local holder = {count = 1, fence = fence_text, expiry = now + ttl, since = now, ttl = ttl,
                host = ARGV[3], pid = tonumber(ARGV[4]), cmd = ARGV[5]}
redis.call('HSET', KEYS[1], 'schema', 'redlock/1', 'mode', mode, 'limit', ARGV[8],
           'h:' .. ARGV[1], cjson.encode(holder))
local pttl = redis.call('PTTL', KEYS[1])
if pttl < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return {'acquired', ARGV[1], fence, 1, ttl}
)lua";

// Release one level. Atomic so that only a holder's token can remove its
// hold, and waiters are told (PUBLISH) exactly when a place becomes free.
// Undoing an attempt that never counted as held ('quiet') tells nobody:
// no waiter, least of all the one undoing it, has anything to gain.
// PUBLISH comes before any write: Redis does not roll a script back, and a
// user whose ACL refuses the channel must find the lock untouched (the
// waiters it wakes cannot act before the script ends).
// KEYS: lock hash. ARGV: token, release channel, 'quiet' or ''.
constexpr std::string_view k_release = REDLOCK_CHECK_KEY R"lua(
local function announce()
  if ARGV[3] ~= 'quiet' then redis.call('PUBLISH', ARGV[2], 'released') end
end
if multi then
  local list = holders()
  for _, v in ipairs(list) do
    if v.token == ARGV[1] then
      if v.count > 1 then
        v.count = v.count - 1
        v.token = nil
        redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(v))
        return {'decremented', v.count}
      end
      announce()
      redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
      local rest = {}
      for _, w in ipairs(list) do if w.token ~= ARGV[1] then rest[#rest + 1] = w end end
      keep_alive(rest)
      return {'released', #rest}
    end
  end
  keep_alive(list)
  return {'notheld'}
end
if t == 'none' or h[1] ~= ARGV[1] then return {'notheld'} end
if tonumber(h[2]) > 1 then return {'decremented', redis.call('HINCRBY', KEYS[1], 'count', -1)} end
announce()
redis.call('DEL', KEYS[1])
return {'released', 0}
)lua";

// End a hold: one level (release --hold-at-least), or every level the token
// holds (exec's end: levels nested acquires took and never gave back could
// not be renewed once exec is gone). When the last level goes less than the
// minimum hold after the lock was taken (since_ms, the server's clock), the
// lock is kept until then under no token: nobody can renew or release it,
// acquirers find it busy, and status shows the finished holder. Atomic so
// that only the holder ends its hold and the lock never lacks an expiry.
// KEYS: lock hash. ARGV: token, release channel, minimum hold ms, 'all' or
// 'one'. Answers the levels dropped, and what is left of a kept hold.
constexpr std::string_view k_finish = REDLOCK_CHECK_KEY R"lua(
local function announce() redis.call('PUBLISH', ARGV[2], 'released') end
if multi then
  local list = holders()
  for _, v in ipairs(list) do
    if v.token == ARGV[1] then
      if ARGV[4] ~= 'all' and v.count > 1 then
        v.count = v.count - 1
        v.token = nil
        redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(v))
        return {'decremented', 1, v.count}
      end
      announce()
      redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
      local rest = {}
      for _, w in ipairs(list) do if w.token ~= ARGV[1] then rest[#rest + 1] = w end end
      keep_alive(rest)
      return {'released', v.count, 0}
    end
  end
  keep_alive(list)
  return {'notheld'}
end
if t == 'none' or h[1] ~= ARGV[1] then return {'notheld'} end
local count = tonumber(h[2])
if ARGV[4] ~= 'all' and count > 1 then return {'decremented', 1, redis.call('HINCRBY', KEYS[1], 'count', -1)} end
local since = tonumber(redis.call('HMGET', KEYS[1], 'since_ms')[1]) or now
local left = since + tonumber(ARGV[3]) - now
if left > 0 then
  redis.call('HSET', KEYS[1], 'token', '', 'count', 0, 'finished_ms', string.format('%d', now))
  redis.call('PEXPIRE', KEYS[1], left)
  return {'kept', count, left}
end
announce()
redis.call('DEL', KEYS[1])
return {'released', count, 0}
)lua";

// Extend the lease. Atomic so that an expired hold is never recreated and
// only the holder's token extends it. A lease is the longest that any of its
// levels asked for: a nested holder's shorter --ttl never shortens it.
// Answers the lease left and the lock's mode and limit (the quorum a renewal
// needs depends on them).
// KEYS: lock hash. ARGV: token, ttl ms.
constexpr std::string_view k_renew = REDLOCK_CHECK_KEY R"lua(
local ttl = tonumber(ARGV[2])
if multi then
  local list = holders()
  for _, v in ipairs(list) do
    if v.token == ARGV[1] then
      lengthen(v, ttl)
      local left = v.expiry - now
      v.token = nil
      redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(v))
      keep_alive(list)
      return {'renewed', left, multi, h[7] or '1'}
    end
  end
  keep_alive(list)
  return {'notheld'}
end
if t == 'none' or h[1] ~= ARGV[1] then return {'notheld'} end
return {'renewed', extend(ttl), 'exclusive', '1'}
)lua";

// Read everything status shows in one consistent snapshot, with the
// server's clock for ages and expiries.
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

// Redlock fencing: raise this server's counter (and the holder's fence) to
// the quorum's maximum, so any later quorum, which shares a server with this
// one, hands out a larger fence.
// KEYS: lock hash, fence counter. ARGV: token, fence.
constexpr std::string_view k_raise_fence = REDLOCK_CHECK_KEY R"lua(
local f = tonumber(ARGV[2])
local cur = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if cur < f then redis.call('SET', KEYS[2], ARGV[2]) end
if multi then
  local v = redis.call('HGET', KEYS[1], 'h:' .. ARGV[1])
  if v then
    local d = cjson.decode(v)
    d.fence = ARGV[2]
    redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(d))
  end
elseif t == 'hash' and h[1] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'fence', ARGV[2])
end
return {'raised', f}
)lua";

// Break the lock, whoever holds it and in whatever mode: the operator's
// way out of a stuck lock. Atomic so that the holders it reports are exactly
// the ones it removed. Deleting the hash clears a semaphore's or readers'
// mode and limit too; the fence counter is left alone, so fences keep
// increasing across the break. A foreign key is reported and left alone.
// PUBLISH comes before the DEL: a user whose ACL refuses the channel must
// find the lock untouched.
// Replies {'broken', mode, limit, now, {{token, host, pid, cmd, since, fence,
// count}...}}, {'free'} or {'foreign', what}.
// KEYS: lock hash. ARGV: release channel.
constexpr std::string_view k_break = REDLOCK_CHECK_KEY R"lua(
if t == 'none' then return {'free'} end
local out = {}
if multi then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'h:' then
      local v = cjson.decode(all[i + 1])
      if v.expiry > now then
        out[#out + 1] = {string.sub(all[i], 3), v.host or '', tostring(v.pid or ''), v.cmd or '',
                         string.format('%d', v.since or 0), tostring(v.fence or ''), tostring(v.count or 1)}
      end
    end
  end
else
  local more = redis.call('HMGET', KEYS[1], 'cmd', 'since_ms')
  out[1] = {h[1], h[4] or '', h[5] or '', more[1] or '', more[2] or '', h[3] or '', h[2]}
end
if #out == 0 then
  redis.call('DEL', KEYS[1])
  return {'free'}
end
redis.call('PUBLISH', ARGV[1], 'released')
redis.call('DEL', KEYS[1])
return {'broken', multi or 'exclusive', h[7] or '1', string.format('%d', now), out}
)lua";

#undef REDLOCK_CHECK_KEY

}  // namespace

const Script& script(ScriptName name) {
  static const std::array<Script, 7> all = {
      make("acquire", k_acquire), make("release", k_release),         make("renew", k_renew),
      make("inspect", k_inspect), make("raise-fence", k_raise_fence), make("break", k_break),
      make("finish", k_finish),
  };
  return all.at(static_cast<size_t>(name));
}

}  // namespace redlock::lock
