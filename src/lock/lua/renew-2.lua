-- renew: extend the holder's lease.
--
-- Atomic so that an expired hold is never recreated and only the holder's
-- token extends it. A lease is the longest that any of its levels asked
-- for: a nested holder's shorter --ttl never shortens it.
-- A renewal is told to nobody (it comes every ttl/3: `redlock events`
-- notices an expiry by reading the lease it expects to end); one that
-- finds the token no longer holding the lock is told as 'lost'
-- (includes/events.lua).
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  the index of held locks, <prefix>index (includes/index.lua;
--          left out on a Redis Cluster)
--
-- ARGV[1]  token   the holder's token
-- ARGV[2]  ttl_ms  the lease asked for, in milliseconds
--
-- Replies (the quorum a renewal needs depends on the mode and limit):
--   {'renewed', lease left ms, mode, limit}
--   {'notheld'}           the token holds nothing here
--   {'foreign', what}     the key is not redlock's: left alone
--@optional-keys 1
--@include check_key.lua
--@include events.lua
--@include index.lua

local token = ARGV[1]
local ttl_ms = ARGV[2]
index_at(KEYS[2])

local ttl = tonumber(ttl_ms)
if multi then
  local list = holders()
  local v = entry_of(list, token)
  if v then
    lengthen(v, ttl)
    v.token = nil
    redis.call('HSET', KEYS[1], 'h:' .. token, cjson.encode(v))
  end
  index_sync(keep_alive(list))
  if not v then
    event('lost', {holder = hold_id(token)})
    return {'notheld'}
  end
  return {'renewed', v.expiry - now, multi, h[7] or '1'}
end
if t == 'none' or h[1] ~= token then
  event('lost', {holder = hold_id(token)})
  return {'notheld'}
end
local lease = extend(ttl)
index_sync(lease)
return {'renewed', lease, 'exclusive', '1'}
