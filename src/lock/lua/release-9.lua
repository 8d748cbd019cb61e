-- release: end a hold.
--
-- One level (release; release --hold-at-least; undoing an attempt) or
-- every level the token holds (exec's end: levels nested acquires took and
-- never gave back could not be renewed once exec is gone). Atomic so that
-- only the holder ends its hold, the lock never lacks an expiry, and
-- waiters are told (PUBLISH) exactly when a place becomes free.
-- When the last level goes less than the minimum hold after the lock was
-- taken (since_ms, the server's clock), the lock is kept until then under
-- no token: nobody can renew or release it, acquirers find it busy, and
-- status shows the finished holder.
-- The release message names the waiters at the head of the line that can
-- go now (direct handoff: the others sleep on); a waiter that is not named
-- stays asleep, one that finds no names (nobody in line) tries at once.
-- Dead entries are pruned first, and the line moves as on every prune: one
-- that comes within k_near of the head has its far lease cut and is told,
-- or a dead one there would hold the line for its far lease.
-- Undoing an attempt that never counted as held ('quiet') tells nobody: no
-- waiter, least of all the one undoing it, has anything to gain.
-- A floor keeps the levels that an exec running the caller holds: a
-- command that releases more than it acquired must not take its own
-- exec's level, or the next holder would start alongside it.
-- PUBLISH comes before any write: Redis does not roll a script back, and a
-- user whose ACL refuses the channel must find the lock untouched (the
-- waiters it wakes cannot act before the script ends).
-- The end of an exec's run goes to the run ledger (includes/ledger.lua) in
-- the same step: its outcome, or 'lost' when the token no longer holds the
-- lock (only where this server has the run: a Redlock server that never
-- granted it records nothing). An undone acquire takes its run out. A
-- ledger that is not redlock's is left alone, and the lock is released all
-- the same.
-- Told on the lock's events channel (includes/events.lua): 'released' for
-- every level dropped (with the levels left), and 'lost' when the token no
-- longer holds the lock (not when an attempt that never counted is undone,
-- 'quiet': the server that did not grant it has nothing to tell).
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its fence counter (not read)
-- KEYS[3..6]  its line of waiters (includes/line.lua)
-- KEYS[7]  its run ledger, <prefix>{NAME}:runs (includes/ledger.lua)
-- KEYS[8]  the index of held locks, <prefix>index (includes/index.lua;
--          left out on a Redis Cluster)
-- KEYS[9]  the index of names with a ledger, <prefix>ledgers
--          (includes/ledger.lua; left out with KEYS[8])
--
-- ARGV[1]  token        the holder's token
-- ARGV[2]  channel      the release channel, <prefix>{NAME}:released
-- ARGV[3]  min_hold_ms  the minimum hold, in milliseconds (0: none)
-- ARGV[4]  levels       'one' or 'all'
-- ARGV[5]  quiet        'quiet' (tell no waiter) or ''
-- ARGV[6]  floor        the levels that must stay ('0': none); a release
--                       that would go below it drops nothing
-- ARGV[7]  run_end      '' (no run), 'drop' (an acquire undone: its run is
--                       taken out) or the run's outcome: ok, failed,
--                       signalled, timed-out, revoked, lost
-- ARGV[8]  exit         the run's exit status ('' for none)
-- ARGV[9..12]  host, pid, cmd, fence   the run as exec knows it, for a
--                       ledger that lost its entry
--
-- Replies:
--   {'released', levels dropped, holders left}
--   {'decremented', 1, levels left}
--   {'kept', levels dropped, ms left}   held under no token until then
--   {'floor', levels held}   no more levels than the floor: nothing dropped
--   {'notheld'}
--   {'foreign', what}     the lock's key is not redlock's: left alone
--@optional-keys 2
--@include check_key.lua
--@include events.lua
--@include line.lua
--@include index.lua
--@include ledger.lua

local token = ARGV[1]
local channel = ARGV[2]
local min_hold_ms = ARGV[3]
local levels = ARGV[4]
local quiet = ARGV[5]
local floor = tonumber(ARGV[6]) or 0
local run_end = ARGV[7] or ''
index_at(KEYS[8])
ledger_at(KEYS[7], KEYS[9])

-- The run's end in the ledger: `held` says whether the token still held
-- the lock, and `since` when it took it (server ms; nil: not known).
local function ledger_end(held, since)
  if run_end == '' or ledger_bad() then return end
  local run = hold_id(token)
  if run_end == 'drop' then
    ledger_drop(run)
  elseif held then
    ledger_finish(run, run_end, ARGV[8],
                  {host = ARGV[9], pid = ARGV[10], cmd = ARGV[11], fence = ARGV[12], start_ms = since})
  else
    ledger_finish(run, 'lost', ARGV[8], nil)
  end
end

-- Tells that the token's hold (its host, pid and fence) dropped a level,
-- `left` levels remaining; `more` adds what the kind has.
local function told(host, pid, fence, left, more)
  local e = more or {}
  e.holder, e.host, e.pid, e.fence, e.count = hold_id(token), host or '', tostring(pid or ''), fence or '', left
  event('released', e)
end
local function lost()
  if quiet == 'quiet' then return end
  local pid = ARGV[10] or ''
  if pid == '0' then pid = '' end
  event('lost', {holder = hold_id(token), host = ARGV[9] or '', pid = pid})
end

local function announce(st)
  if quiet == 'quiet' then return end
  if line_bad() then redis.call('PUBLISH', channel, 'released') return end
  if prune() > 0 then moved() end
  wake(st)
end
if multi then
  local list = holders()
  local v = entry_of(list, token)
  if not v then
    index_sync(keep_alive(list))
    ledger_end(false)
    lost()
    return {'notheld'}
  end
  if v.count <= floor then return {'floor', v.count} end
  if levels ~= 'all' and v.count > 1 then
    v.count = v.count - 1
    v.token = nil
    redis.call('HSET', KEYS[1], 'h:' .. token, cjson.encode(v))
    told(v.host, v.pid, v.fence, v.count)
    return {'decremented', 1, v.count}
  end
  local rest = {}
  for _, w in ipairs(list) do if w.token ~= token then rest[#rest + 1] = w end end
  if #rest == 0 then announce({count = 0}) else announce({mode = multi, count = #rest, limit = h[7]}) end
  redis.call('HDEL', KEYS[1], 'h:' .. token)
  index_sync(keep_alive(rest))
  ledger_end(true, string.format('%d', v.since or now))
  told(v.host, v.pid, v.fence, 0, {held_ms = now - (v.since or now)})
  return {'released', v.count, #rest}
end
if t == 'none' or h[1] ~= token then
  ledger_end(false)
  lost()
  return {'notheld'}
end
local count = tonumber(h[2])
if count <= floor then return {'floor', count} end
if levels ~= 'all' and count > 1 then
  local left = redis.call('HINCRBY', KEYS[1], 'count', -1)
  told(h[4], h[5], h[3], left)
  return {'decremented', 1, left}
end
local since = tonumber(h[10]) or now
local left = since + tonumber(min_hold_ms) - now
if left > 0 then
  redis.call('HSET', KEYS[1], 'token', '', 'count', 0, 'finished_ms', string.format('%d', now))
  redis.call('PEXPIRE', KEYS[1], left)
  index_sync(left)
  ledger_end(true, string.format('%d', since))
  told(h[4], h[5], h[3], 0, {held_ms = now - since, kept_ms = left})
  return {'kept', count, left}
end
announce({count = 0})
redis.call('DEL', KEYS[1])
index_sync(0)
ledger_end(true, string.format('%d', since))
told(h[4], h[5], h[3], 0, {held_ms = now - since})
return {'released', count, 0}
