-- A waiter leaves the line (its --wait ran out, or it was stopped). Atomic
-- so that the waiters it was holding up are woken exactly when it goes.
-- KEYS: lock hash, line of waiters. ARGV: waiter id, release channel.
--@include check_key.lua
--@include queue.lua

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
