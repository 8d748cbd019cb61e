-- Redlock fencing: raise this server's counter (and the holder's fence) to
-- the quorum's maximum, so any later quorum, which shares a server with this
-- one, hands out a larger fence.
-- KEYS: lock hash, fence counter. ARGV: token, fence.
--@include check_key.lua
--@include fence.lua

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
