#include "lock/scripts.hpp"

#include <array>

#include "util/sha1.hpp"

namespace redlock::lock {
namespace {

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
  "local function entry_of(list, token)\n"                                                                    \
  "  for _, v in ipairs(list) do if v.token == token then return v end end\n"                                 \
  "  return nil\n"                                                                                            \
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

// Fences: whole numbers from 1 to 2^53 - 1 (k_max_fence in layout.hpp).
// Lua's numbers are doubles, which skip integers past that: a counter there
// (or one that is not a whole number) cannot be increased exactly, and
// string.format('%d') of it is garbage. usable_fence(f) says whether f is a
// fence; fence_refused(what, value, why) is the error for a value that is
// not (at most 40 bytes of it: a key may hold anything), and not_a_fence
// the usual why.
#define REDLOCK_FENCE                                                                                    \
  "local k_max_fence = 9007199254740991\n"                                                               \
  "local not_a_fence = 'not a fence redlock hands out (a whole number from 1 to 9007199254740991)'\n"    \
  "local function usable_fence(f)\n"                                                                     \
  "  return f ~= nil and f == math.floor(f) and f >= 1 and f <= k_max_fence\n"                           \
  "end\n"                                                                                                \
  "local function fence_refused(what, value, why)\n"                                                     \
  "  return redis.error_reply(what .. ' holds ' .. string.sub(tostring(value), 1, 40) .. ', ' .. why)\n" \
  "end\n"

// Shared helpers for the line of waiters at KEYS[q] ('<prefix>{NAME}:queue',
// in the lock's hash slot): a hash with the schema marker, a 'seq' counter
// that hands out tickets (HINCRBY: the server's order, never a client's
// clock) and one field 'w:<id>' per waiter holding JSON {ticket, expiry,
// since, deadline, host, pid, cmd, mode, limit}. A waiter keeps its entry
// alive by heartbeat (expiry); an entry whose expiry passed is dead and is
// skipped (and removed when the line is next written). The key expires with
// its longest-lived entry, and is deleted with its last one.
// - queue_bad(key): nil when the key is absent or redlock's, else what it is.
// - line_of(key, prune): the live waiters, first come first.
// - lock_state(): what holds the lock now (mode, count of live holders, limit).
// - heads(st, line): the ids at the head of the line that the lock, in state
//   st, admits now, in order: FIFO over a semaphore's places, readers that
//   queued together go together, and nobody passes a waiter that cannot go.
// - wake(channel, st, line): PUBLISH 'released <id>...' naming those heads,
//   on the lock's channel (for waiters not in line, and redlocks that listen
//   there only) and on each named waiter's own channel '<channel>:<id>',
//   where it listens (the waiters not named are not woken at all).
#define REDLOCK_QUEUE                                                                                            \
  "local function queue_bad(key)\n"                                                                              \
  "  local qt = redis.call('TYPE', key)['ok']\n"                                                                 \
  "  if qt == 'none' then return nil end\n"                                                                      \
  "  if qt == 'hash' and redis.call('HMGET', key, 'schema')[1] == 'redlock/1' then return nil end\n"             \
  "  return qt .. ' at ' .. key\n"                                                                               \
  "end\n"                                                                                                        \
  "local function line_of(key, prune)\n"                                                                         \
  "  local out = {}\n"                                                                                           \
  "  local all = redis.call('HGETALL', key)\n"                                                                   \
  "  for i = 1, #all, 2 do\n"                                                                                    \
  "    if string.sub(all[i], 1, 2) == 'w:' then\n"                                                               \
  "      local v = cjson.decode(all[i + 1])\n"                                                                   \
  "      if v.expiry > now then v.id = string.sub(all[i], 3); out[#out + 1] = v\n"                               \
  "      elseif prune then redis.call('HDEL', key, all[i]) end\n"                                                \
  "    end\n"                                                                                                    \
  "  end\n"                                                                                                      \
  "  table.sort(out, function(a, b) return a.ticket < b.ticket or (a.ticket == b.ticket and a.id < b.id) end)\n" \
  "  return out\n"                                                                                               \
  "end\n"                                                                                                        \
  "local function lock_state()\n"                                                                                \
  "  if t == 'none' then return {count = 0} end\n"                                                               \
  "  if not multi then return {mode = 'exclusive', count = 1, limit = '1'} end\n"                                \
  "  local n = 0\n"                                                                                              \
  "  local all = redis.call('HGETALL', KEYS[1])\n"                                                               \
  "  for i = 1, #all, 2 do\n"                                                                                    \
  "    if string.sub(all[i], 1, 2) == 'h:' and cjson.decode(all[i + 1]).expiry > now then n = n + 1 end\n"       \
  "  end\n"                                                                                                      \
  "  if n == 0 then return {count = 0} end\n"                                                                    \
  "  return {mode = multi, count = n, limit = h[7]}\n"                                                           \
  "end\n"                                                                                                        \
  "local function admits(st, m, lim)\n"                                                                          \
  "  if st.count == 0 then return true end\n"                                                                    \
  "  if st.mode ~= m then return false end\n"                                                                    \
  "  if m == 'shared' then return true end\n"                                                                    \
  "  return m == 'semaphore' and st.limit == lim and st.count < tonumber(lim)\n"                                 \
  "end\n"                                                                                                        \
  "local function admit(st, m, lim)\n"                                                                           \
  "  if st.count == 0 then st.mode = m; st.limit = lim end\n"                                                    \
  "  st.count = st.count + 1\n"                                                                                  \
  "end\n"                                                                                                        \
  "local function heads(st, line)\n"                                                                             \
  "  local ids = {}\n"                                                                                           \
  "  for _, w in ipairs(line) do\n"                                                                              \
  "    if not admits(st, w.mode, w.limit) then break end\n"                                                      \
  "    admit(st, w.mode, w.limit)\n"                                                                             \
  "    ids[#ids + 1] = w.id\n"                                                                                   \
  "  end\n"                                                                                                      \
  "  return ids\n"                                                                                               \
  "end\n"                                                                                                        \
  "local function wake(channel, st, line)\n"                                                                     \
  "  local ids = heads(st, line)\n"                                                                              \
  "  local msg = 'released'\n"                                                                                   \
  "  if #ids > 0 then msg = msg .. ' ' .. table.concat(ids, ' ') end\n"                                          \
  "  redis.call('PUBLISH', channel, msg)\n"                                                                      \
  "  for _, id in ipairs(ids) do redis.call('PUBLISH', channel .. ':' .. id, msg) end\n"                         \
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
// Fair waiting: re-entry by the holder's token comes first and never
// waits; otherwise, while anyone is in line, a newcomer gets the lock only
// when everyone ahead of it would too (never, for a plain lock): a waiter
// gets it in ticket order. A busy answer puts a waiter that gave its id in
// line (or refreshes its entry: the heartbeat) and says its place.
// 'unfair' skips the line altogether.
// KEYS: lock hash, fence counter, line of waiters. ARGV: fresh token, ttl
// ms, host, pid, cmd, token to re-enter ('' for none), mode ('exclusive',
// 'semaphore' or 'shared'), limit, minimum hold ms, waiter id ('' to not
// wait in line),
// 'fair' or 'unfair', the entry's lease ms, ms left to wait (-1: forever),
// the waiter's ticket: '' (one server: the next number of the line's own
// sequence), 'clock' (Redlock: the server's clock in ms, when it first
// joins) or a number (Redlock: the ticket the waiter settled on, the same
// on every server, so that every server's line has the same order).
// Replies {'acquired'|'reentered', token, fence, count, ttl}, {'busy',
// holder's ttl, host, pid, place in line (0: not in line), waiters ahead
// of a newcomer, the waiter's ticket (0: none), the holder's command, how
// many hold it, 'kept' or ''} (a waiting acquire's first line names the
// holder from it, with no round trip of its own), {'mismatch'|'upgrade',
// mode, limit} or {'foreign', what}.
constexpr std::string_view k_acquire = REDLOCK_CHECK_KEY REDLOCK_QUEUE REDLOCK_FENCE R"lua(
-- A user who may take the lock but not give it back would leave it held for
-- its whole TTL: what a release, a renewal and waking the line need is
-- checked before anything is written (Redis 7; earlier servers cannot).
if redis.acl_check_cmd then
  local channel = KEYS[1] .. ':released'
  for _, c in ipairs({{'PUBLISH', channel, 'released'}, {'DEL', KEYS[1]}, {'HDEL', KEYS[1], 'token'},
                      {'HMGET', KEYS[1], 'token'}, {'HINCRBY', KEYS[1], 'count', '1'}, {'PEXPIRE', KEYS[1], '1'},
                      {'PTTL', KEYS[1]}}) do
    if not redis.acl_check_cmd(unpack(c)) then
      local what = c[1] == 'PUBLISH' and ('PUBLISH to ' .. channel) or (c[1] .. ' on ' .. KEYS[1])
      return redis.error_reply('NOPERM this user may take the lock but may not ' .. what ..
                               ', which giving it back needs: nothing was written')
    end
  end
end
local ttl = tonumber(ARGV[2])
local mode = ARGV[7]
local hold = tonumber(ARGV[9]) or 0
local fair = ARGV[11] == 'fair'
local ticket = tonumber(ARGV[14])
if fair then
  local bad = queue_bad(KEYS[3])
  if bad then return {'foreign', bad} end
end
-- The live line, read (and its dead entries pruned) once per call of the
-- script; enter() makes it read again.
local read_line = nil
local function live_line()
  if not read_line then read_line = line_of(KEYS[3], true) end
  return read_line
end
-- Puts the caller (waiter ARGV[10]) in line, or refreshes its entry (the
-- heartbeat); returns its entry and the live line. Once per call of the
-- script: a second call returns what the first did.
local entered = nil
local function enter()
  if entered then return entered[1], entered[2] end
  local line = live_line()
  local key = 'w:' .. ARGV[10]
  local v = nil
  for _, w in ipairs(line) do if w.id == ARGV[10] then v = w end end
  if not v then
    local first = ticket
    if not first and ARGV[14] == 'clock' then first = now end
    if not first then first = redis.call('HINCRBY', KEYS[3], 'seq', 1) end
    v = {ticket = first, since = now, host = ARGV[3], pid = tonumber(ARGV[4]), cmd = ARGV[5], mode = mode,
         limit = ARGV[8]}
  elseif ticket then
    v.ticket = ticket
  end
  local lease = tonumber(ARGV[12])
  v.expiry = now + lease
  v.deadline = -1
  if ARGV[13] ~= '-1' then v.deadline = now + tonumber(ARGV[13]) end
  v.id = nil
  redis.call('HSET', KEYS[3], 'schema', 'redlock/1', key, cjson.encode(v))
  if redis.call('PTTL', KEYS[3]) < lease then redis.call('PEXPIRE', KEYS[3], lease) end
  entered = {v, line}
  read_line = nil
  return v, line
end
-- who: the holder named (host, pid, cmd, how many hold, and 'kept' when it
-- is held only for a finished holder's minimum hold), or nil.
local function busy(left, who)
  who = who or {'', '', '', 0, ''}
  local place, ahead, mine = 0, 0, 0
  if fair and ARGV[10] == '' then
    ahead = #live_line()
  elseif fair then
    local v, line = enter()
    place = 1
    for _, w in ipairs(line) do
      if w ~= v and (w.ticket < v.ticket or (w.ticket == v.ticket and w.id < ARGV[10])) then
        place = place + 1
      end
    end
    ahead, mine = place - 1, v.ticket
  end
  return {'busy', left, who[1], who[2], place, ahead, mine, who[3], who[4], who[5]}
end
local function dequeue()
  -- Over several servers the waiter keeps its place until it has its
  -- majority (then it leaves every line): a grant here that is undone must
  -- not let the next waiter overtake it on this server alone.
  if not fair or ARGV[10] == '' or (ARGV[14] or '') ~= '' then return end
  redis.call('HDEL', KEYS[3], 'w:' .. ARGV[10])
  for _, w in ipairs(live_line()) do if w.id ~= ARGV[10] then return end end
  redis.call('DEL', KEYS[3])
end
-- The first holder of a semaphore or shared lock, named in a busy answer.
local holding = nil
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
      local fence = tonumber(v.fence)
      if not usable_fence(fence) then
        return fence_refused('the fence of this hold of ' .. KEYS[1], v.fence,
                             not_a_fence .. ': it cannot be re-entered; redlock break frees it')
      end
      v.count = v.count + 1
      lengthen(v, ttl)
      local token = v.token
      v.token = nil
      redis.call('HSET', KEYS[1], 'h:' .. token, cjson.encode(v))
      keep_alive(list)
      return {'reentered', token, fence, v.count, v.expiry - now}
    end
    first = first or v
    if not soonest or v.expiry - now < soonest then soonest = v.expiry - now end
  end
  if #list > 0 then
    holding = {first.host, tostring(first.pid), first.cmd or '', #list, ''}
    if mode ~= multi or (multi == 'semaphore' and h[7] ~= ARGV[8]) then
      if multi == 'shared' and mode == 'exclusive' then return busy(soonest, holding) end
      return {'mismatch', multi, h[7] or ''}
    end
    if multi == 'semaphore' and #list >= tonumber(h[7]) then return busy(soonest, holding) end
  else
    redis.call('DEL', KEYS[1])
    t = 'none'
  end
elseif t == 'hash' then
  -- A semaphore's --limit disagrees with a plain lock, its holder's token or not.
  if mode == 'semaphore' then return {'mismatch', 'exclusive', '1'} end
  if ARGV[6] ~= '' and h[1] == ARGV[6] then
    local fence = tonumber(h[3])
    if not usable_fence(fence) then
      return fence_refused('the fence of the lock ' .. KEYS[1], h[3],
                           not_a_fence .. ': it cannot be re-entered; redlock break frees it')
    end
    local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
    local since = tonumber(redis.call('HMGET', KEYS[1], 'since_ms')[1]) or now
    return {'reentered', h[1], fence, count, extend(math.max(ttl, since + hold - now))}
  end
  local kept = ''
  if h[1] == '' then kept = 'kept' end
  return busy(redis.call('PTTL', KEYS[1]), {h[4] or '', h[5] or '', redis.call('HMGET', KEYS[1], 'cmd')[1] or '', 1, kept})
end
if fair then
  -- Over several servers a waiter is in every line on every try, even where
  -- the lock is free: a grant here that the others outvote and that is
  -- undone leaves it in its place.
  if ARGV[10] ~= '' and (ARGV[14] or '') ~= '' then enter() end
  -- Free (or with room): it is this caller's turn only if everyone ahead of
  -- it in line would be let in too.
  local st = lock_state()
  local soonest = 0
  if st.count > 0 then soonest = redis.call('PTTL', KEYS[1]) end
  for _, w in ipairs(live_line()) do
    if w.id == ARGV[10] then break end
    -- A Redlock waiter whose entry here went (its grant on this server was
    -- undone) keeps its place by its ticket.
    if ticket and (w.ticket > ticket or (w.ticket == ticket and w.id > ARGV[10])) then break end
    if not admits(st, w.mode, w.limit) then return busy(soonest, holding) end
    admit(st, w.mode, w.limit)
  end
  if not admits(st, mode, ARGV[8]) then return busy(soonest, holding) end
end
local counter = redis.call('GET', KEYS[2])
local last = 0
if counter then
  -- Refused before anything is written: a counter redlock cannot increase
  -- exactly would hand out a fence that is not larger than the last one.
  last = tonumber(counter)
  if not last or (last ~= 0 and not usable_fence(last)) or last >= k_max_fence then
    return fence_refused('the fence counter ' .. KEYS[2], counter,
                         'which redlock cannot increase exactly (a whole number from 0 to 9007199254740990): ' ..
                         'redlock did not write it; delete it only if you know no holder relies on its fences')
  end
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
    dequeue()
    return {'acquired', ARGV[1], fence, 1, math.max(ttl, hold)}
  end
end
local holder = {count = 1, fence = fence_text, expiry = now + ttl, since = now, ttl = ttl,
                host = ARGV[3], pid = tonumber(ARGV[4]), cmd = ARGV[5]}
redis.call('HSET', KEYS[1], 'schema', 'redlock/1', 'mode', mode, 'limit', ARGV[8],
           'h:' .. ARGV[1], cjson.encode(holder))
local pttl = redis.call('PTTL', KEYS[1])
if pttl < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
dequeue()
return {'acquired', ARGV[1], fence, 1, ttl}
)lua";

// End a hold: one level (release; release --hold-at-least) or every level
// the token holds (exec's end: levels nested acquires took and never gave
// back could not be renewed once exec is gone). Atomic so that only the
// holder ends its hold, the lock never lacks an expiry, and waiters are told
// (PUBLISH) exactly when a place becomes free.
// When the last level goes less than the minimum hold after the lock was
// taken (since_ms, the server's clock), the lock is kept until then under no
// token: nobody can renew or release it, acquirers find it busy, and status
// shows the finished holder.
// The release message names the waiters at the head of the line that can go
// now (direct handoff: the others sleep on); a waiter that is not named
// stays asleep, one that finds no names (nobody in line) tries at once.
// Undoing an attempt that never counted as held ('quiet') tells nobody: no
// waiter, least of all the one undoing it, has anything to gain.
// PUBLISH comes before any write: Redis does not roll a script back, and a
// user whose ACL refuses the channel must find the lock untouched (the
// waiters it wakes cannot act before the script ends).
// KEYS: lock hash, line of waiters. ARGV: token, release channel, minimum
// hold ms, 'all' or 'one', 'quiet' or ''.
// Answers {'released', levels dropped, holders left}, {'decremented', 1,
// levels left}, {'kept', levels dropped, ms left} or {'notheld'}.
constexpr std::string_view k_finish = REDLOCK_CHECK_KEY REDLOCK_QUEUE R"lua(
local function announce(st)
  if ARGV[5] == 'quiet' then return end
  if queue_bad(KEYS[2]) then redis.call('PUBLISH', ARGV[2], 'released') return end
  wake(ARGV[2], st, line_of(KEYS[2], false))
end
if multi then
  local list = holders()
  local v = entry_of(list, ARGV[1])
  if not v then keep_alive(list) return {'notheld'} end
  if ARGV[4] ~= 'all' and v.count > 1 then
    v.count = v.count - 1
    v.token = nil
    redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(v))
    return {'decremented', 1, v.count}
  end
  local rest = {}
  for _, w in ipairs(list) do if w.token ~= ARGV[1] then rest[#rest + 1] = w end end
  if #rest == 0 then announce({count = 0}) else announce({mode = multi, count = #rest, limit = h[7]}) end
  redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
  keep_alive(rest)
  return {'released', v.count, #rest}
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
announce({count = 0})
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
  local v = entry_of(list, ARGV[1])
  if v then
    lengthen(v, ttl)
    v.token = nil
    redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(v))
  end
  keep_alive(list)
  if not v then return {'notheld'} end
  return {'renewed', v.expiry - now, multi, h[7] or '1'}
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
constexpr std::string_view k_raise_fence = REDLOCK_CHECK_KEY REDLOCK_FENCE R"lua(
local f = tonumber(ARGV[2])
-- A fence no server of redlock's could have handed out (a broken or hostile
-- server's) would leave this counter where no fence can follow it.
if not usable_fence(f) then
  return fence_refused('the request to raise ' .. KEYS[2], ARGV[2], not_a_fence .. ': nothing was written')
end
local fence_text = string.format('%d', f)
local stored = redis.call('GET', KEYS[2])
local cur = tonumber(stored or '0')
-- A counter that is not a number is not redlock's: left as it is.
if not cur then return redis.error_reply('the fence counter ' .. KEYS[2] .. ' is not a number') end
if cur < f then redis.call('SET', KEYS[2], fence_text) end
if multi then
  local v = redis.call('HGET', KEYS[1], 'h:' .. ARGV[1])
  if v then
    local d = cjson.decode(v)
    d.fence = fence_text
    redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], cjson.encode(d))
  end
elseif t == 'hash' and h[1] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'fence', fence_text)
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
// The waiters at the head of the line are woken as by a release.
// KEYS: lock hash, line of waiters. ARGV: release channel.
constexpr std::string_view k_break = REDLOCK_CHECK_KEY REDLOCK_QUEUE R"lua(
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
if queue_bad(KEYS[2]) then redis.call('PUBLISH', ARGV[1], 'released')
else wake(ARGV[1], {count = 0}, line_of(KEYS[2], false)) end
redis.call('DEL', KEYS[1])
return {'broken', multi or 'exclusive', h[7] or '1', string.format('%d', now), out}
)lua";

// A waiter leaves the line (its --wait ran out, or it was stopped). Atomic
// so that the waiters it was holding up are woken exactly when it goes.
// KEYS: lock hash, line of waiters. ARGV: waiter id, release channel.
constexpr std::string_view k_leave = REDLOCK_CHECK_KEY REDLOCK_QUEUE R"lua(
local bad = queue_bad(KEYS[2])
if bad then return {'foreign', bad} end
local rest = {}
local was = false
for _, w in ipairs(line_of(KEYS[2], false)) do
  if w.id == ARGV[1] then was = true else rest[#rest + 1] = w end
end
if was and #heads(lock_state(), rest) > 0 then wake(ARGV[2], lock_state(), rest) end
redis.call('HDEL', KEYS[2], 'w:' .. ARGV[1])
if #rest == 0 then redis.call('DEL', KEYS[2]) end
return {'left'}
)lua";

// Read the line of waiters, for `status`: a key of its own, read apart from
// the lock, so that status of a lock whose slot is moving (Redis Cluster)
// never waits for a line that exists only while someone waits.
// Replies {type, now_ms, {field, value, ...}}: the hash's fields as they
// are (dead entries included; the reader skips them by their expiry).
// KEYS: line of waiters.
constexpr std::string_view k_line = R"lua(
local t = redis.call('TYPE', KEYS[1])['ok']
local now = redis.call('TIME')
local now_ms = string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000))
if t ~= 'hash' then return {t, now_ms, {}} end
return {t, now_ms, redis.call('HGETALL', KEYS[1])}
)lua";

#undef REDLOCK_FENCE
#undef REDLOCK_QUEUE
#undef REDLOCK_CHECK_KEY

// Each script's SHA-1, computed by the compiler (static storage, so that a
// Script can refer to it); one constant each, as a compiler bounds the work
// of one constant expression.
constexpr std::array<std::string_view, 8> k_bodies = {k_acquire, k_renew,  k_inspect, k_raise_fence,
                                                      k_break,   k_finish, k_leave,   k_line};
constexpr Sha1Hex k_acquire_sha1 = sha1(k_acquire);
constexpr Sha1Hex k_renew_sha1 = sha1(k_renew);
constexpr Sha1Hex k_inspect_sha1 = sha1(k_inspect);
constexpr Sha1Hex k_raise_fence_sha1 = sha1(k_raise_fence);
constexpr Sha1Hex k_break_sha1 = sha1(k_break);
constexpr Sha1Hex k_finish_sha1 = sha1(k_finish);
constexpr Sha1Hex k_leave_sha1 = sha1(k_leave);
constexpr Sha1Hex k_line_sha1 = sha1(k_line);
constexpr std::array<const Sha1Hex*, 8> k_sha1s = {&k_acquire_sha1,     &k_renew_sha1, &k_inspect_sha1,
                                                   &k_raise_fence_sha1, &k_break_sha1, &k_finish_sha1,
                                                   &k_leave_sha1,       &k_line_sha1};
constexpr std::array<std::string_view, 8> k_names = {"acquire", "renew",  "inspect", "raise-fence",
                                                     "break",   "finish", "leave",   "line"};

}  // namespace

const Script& script(ScriptName name) {
  static const std::array<Script, 8> all = [] {
    std::array<Script, 8> scripts{};
    for (size_t i = 0; i < scripts.size(); ++i) {
      scripts[i] = Script{k_names[i], k_bodies[i], std::string_view(k_sha1s[i]->data(), k_sha1s[i]->size())};
    }
    return scripts;
  }();
  return all.at(static_cast<size_t>(name));
}

}  // namespace redlock::lock
