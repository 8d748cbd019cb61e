-- suspend: suspend a name (acquire refuses newcomers while it is), or
-- resume it.
--
-- One script, so that the marker and its entry in the index of held locks
-- change together, and a marker that is not redlock's is never touched.
-- The marker is a hash (includes/suspension.lua) whose PEXPIRE ends a
-- suspension given a duration. The index lists it as its own key, scored
-- by when it lapses, so that status lists a suspended name that nobody
-- holds, and the index's pruning drops it once it has lapsed. The lock
-- itself is not touched: a running holder goes on. Told as 'suspended'
-- (with the reason, who and until when) or 'resumed' on the lock's events
-- channel (includes/events.lua).
--
-- KEYS[1]  the lock's hash, <prefix>{NAME} (read only: is it redlock's)
-- KEYS[2]  its suspension, <prefix>{NAME}:suspended
-- KEYS[3]  the index of held locks, <prefix>index (includes/index.lua;
--          left out on a Redis Cluster)
--
-- ARGV[1]  action   'suspend' or 'resume'
-- ARGV[2]  reason   why (suspend)
-- ARGV[3]  host     who suspends it: host
-- ARGV[4]  pid      and process id
-- ARGV[5]  for_ms   how long it lasts ('0': until resumed)
--
-- Replies:
--   {'suspended', until (server ms; -1: until resumed), server time (ms)}
--   {'resumed', 1 if it was suspended, else 0}
--   {'foreign', what}   the lock's key or the marker is not redlock's
--@optional-keys 1
--@include check_key.lua
--@include events.lua
--@include index.lua
--@include suspension.lua

local action = ARGV[1]
local for_ms = tonumber(ARGV[5]) or 0
index_at(KEYS[3])
suspension_at(KEYS[2])
local was = suspension()
if was and was[1] == 'foreign' then return was end
-- The marker's entry in the index: forever is the largest score a lease
-- could never reach, below the schema marker's +inf.
local function index_marker(until_ms)
  if not index_key then return end
  if until_ms and index_ready(true) then
    redis.pcall('ZADD', index_key, string.format('%d', until_ms), KEYS[2])
  elseif not until_ms and index_ready(false) then
    redis.pcall('ZREM', index_key, KEYS[2])
  end
end
if action == 'resume' then
  redis.call('DEL', KEYS[2])
  index_marker(nil)
  if was then event('resumed', {by_host = ARGV[3], by_pid = ARGV[4]}) end
  return {'resumed', was and 1 or 0}
end
local until_ms = -1
if for_ms > 0 then until_ms = now + for_ms end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'schema', k_schema, 'reason', ARGV[2], 'host', ARGV[3], 'pid', ARGV[4],
           'since_ms', string.format('%d', now), 'until_ms', string.format('%d', until_ms))
if for_ms > 0 then redis.call('PEXPIRE', KEYS[2], for_ms) end
if until_ms > 0 then index_marker(until_ms) else index_marker(9007199254740991) end
event('suspended', {reason = ARGV[2], by_host = ARGV[3], by_pid = ARGV[4], until_ms = string.format('%d', until_ms)})
return {'suspended', string.format('%d', until_ms), string.format('%d', now)}
