-- leave: a waiter leaves the line (its --wait ran out, or it was stopped).
--
-- Atomic so that the waiters it was holding up are woken exactly when it
-- goes.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its line of waiters, <prefix>{NAME}:queue
--
-- ARGV[1]  waiter   the leaving waiter's id
-- ARGV[2]  channel  the release channel, <prefix>{NAME}:released
--
-- Replies:
--   {'left'}              (also when the waiter was not in line)
--   {'foreign', what}     the lock's key or the line's is not redlock's
--@include check_key.lua
--@include queue.lua

local waiter = ARGV[1]
local channel = ARGV[2]

local bad = queue_bad(KEYS[2])
if bad then return {'foreign', bad} end
local rest = {}
local was = false
for _, w in ipairs(line_of(KEYS[2], false)) do
  if w.id == waiter then was = true else rest[#rest + 1] = w end
end
if was and #heads(lock_state(), rest) > 0 then wake(channel, lock_state(), rest) end
redis.call('HDEL', KEYS[2], 'w:' .. waiter)
if #rest == 0 then redis.call('DEL', KEYS[2]) end
return {'left'}
