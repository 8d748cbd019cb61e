-- revoke: ask the lock's holders to stop and give it back (redlock break --grace, or revoke).
--
-- One script, so that the mark names exactly the holders of this instant
-- and the message goes out with it. The mark is a hash of the run ids of
-- the holders asked (the first 16 hex digits of the SHA-1 of a token, as
-- the run ledger names runs: never the token itself), each with who asked
-- and the grace. A holder that is an exec listens on the revoke channel
-- and hears the message at once; one that subscribes later finds its run
-- in the mark. The mark names runs, never the lock: a holder that ends and
-- a new one that takes the lock are not affected by it, and it expires by
-- itself.
-- Each holder asked is told as 'revoked' on the lock's events channel
-- (includes/events.lua), with who asked; its release follows as usual.
-- A lock kept for a finished holder's minimum hold (--hold-at-least) has no
-- holder to ask: it is named with an empty run, for the caller to break.
-- The message also goes to each run's own channel, <revoke channel>:<run>,
-- where only that run's exec listens: how many heard it there tells the
-- caller which holders are execs (to wait for) and which are not (to break
-- after the grace). An exec of a version before these channels listens on
-- the lock's channel only: it is counted in listeners, not in its run's.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its revoke mark, <prefix>{NAME}:revoke
--
-- ARGV[1]  host      who asks: host
-- ARGV[2]  pid       and process id
-- ARGV[3]  grace_ms  how long a holder has to stop ('0': its own
--                    --kill-after)
-- ARGV[4]  channel   the revoke channel, <prefix>{NAME}:revoke
--
-- Replies:
--   {'revoking', listeners (the clients the message reached on the lock's
--    channel), now_ms, {{run, host, pid, cmd, since_ms, fence, heard}, ...}}
--    the holders asked; heard: the clients that listen on the run's own
--    channel (0 for a lock kept under no token)
--   {'free'}
--   {'foreign', what}   the lock's key or the mark is not redlock's
--@include check_key.lua
--@include events.lua
--@include ledger.lua

local host = ARGV[1]
local pid = ARGV[2]
local grace_ms = tonumber(ARGV[3]) or 0
local channel = ARGV[4]
local k_mark_keep_ms = 60000

if t == 'none' then return {'free'} end
local mark_type = redis.call('TYPE', KEYS[2])['ok']
if mark_type ~= 'none' and (mark_type ~= 'hash' or redis.call('HGET', KEYS[2], 'schema') ~= k_schema) then
  return {'foreign', mark_type .. ' where the revoke mark of ' .. KEYS[1] .. ' (' .. KEYS[2] .. ') belongs'}
end
local asked = {}
if multi then
  for _, v in ipairs(holders()) do
    asked[#asked + 1] = {hold_id(v.token), v.host or '', tostring(v.pid or ''), v.cmd or '',
                         string.format('%d', v.since or 0), tostring(v.fence or '')}
  end
else
  local run = ''
  if h[1] ~= '' then run = hold_id(h[1]) end
  asked[1] = {run, h[4] or '', h[5] or '', h[9] or '', h[10] or '', h[3] or ''}
end
if #asked == 0 then return {'free'} end
local runs = {}
local since = string.format('%d', now)
redis.call('HSET', KEYS[2], 'schema', k_schema)
for _, a in ipairs(asked) do
  if a[1] ~= '' then
    runs[#runs + 1] = a[1]
    redis.call('HSET', KEYS[2], 'r:' .. a[1],
               cjson.encode({host = host, pid = pid, grace_ms = grace_ms, since_ms = since}))
  end
end
local keep = grace_ms + k_mark_keep_ms
if redis.call('PTTL', KEYS[2]) < keep then redis.call('PEXPIRE', KEYS[2], keep) end
for _, a in ipairs(asked) do
  event('revoked', {holder = a[1], host = a[2], pid = a[3], fence = a[6], by_host = host, by_pid = pid,
                    grace_ms = grace_ms})
end
local listeners = 0
if #runs > 0 then
  listeners = redis.call('PUBLISH', channel,
                         cjson.encode({runs = runs, host = host, pid = pid, grace_ms = grace_ms}))
end
for _, a in ipairs(asked) do
  local heard = 0
  if a[1] ~= '' then
    heard = redis.call('PUBLISH', channel .. ':' .. a[1],
                       cjson.encode({runs = {a[1]}, host = host, pid = pid, grace_ms = grace_ms}))
  end
  a[7] = heard
end
return {'revoking', listeners, since, asked}
