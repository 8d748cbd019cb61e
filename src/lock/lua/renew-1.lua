-- Extend the lease. Atomic so that an expired hold is never recreated and
-- only the holder's token extends it. A lease is the longest that any of its
-- levels asked for: a nested holder's shorter --ttl never shortens it.
-- Answers the lease left and the lock's mode and limit (the quorum a renewal
-- needs depends on them).
-- KEYS: lock hash. ARGV: token, ttl ms.
--@include check_key.lua

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
