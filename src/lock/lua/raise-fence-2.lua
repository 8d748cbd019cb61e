-- raise-fence: Redlock fencing, after a grant by a quorum.
--
-- Raises this server's counter (and the holder's fence) to the quorum's
-- maximum, so any later quorum, which shares a server with this one, hands
-- out a larger fence. Atomic so that the counter and the holder's fence
-- move together.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its fence counter, <prefix>{NAME}:fence
--
-- ARGV[1]  token  the new holder's token
-- ARGV[2]  fence  the quorum's fence (a whole number from 1 to 2^53 - 1)
--
-- Replies:
--   {'raised', fence}
--   {'foreign', what}     the lock's key is not redlock's: nothing written
--   an error reply        the fence is not one redlock hands out, or the
--                         counter is not a number: nothing written
--@include check_key.lua
--@include fence.lua

local token = ARGV[1]
local fence = ARGV[2]

local f = tonumber(fence)
-- A fence no server of redlock's could have handed out (a broken or hostile
-- server's) would leave this counter where no fence can follow it.
if not usable_fence(f) then
  return fence_refused('the request to raise ' .. KEYS[2], fence, not_a_fence .. ': nothing was written')
end
local fence_text = string.format('%d', f)
local stored = redis.call('GET', KEYS[2])
local cur = tonumber(stored or '0')
-- A counter that is not a number is not redlock's: left as it is.
if not cur then return redis.error_reply('the fence counter ' .. KEYS[2] .. ' is not a number') end
if cur < f then redis.call('SET', KEYS[2], fence_text) end
if multi then
  local v = redis.call('HGET', KEYS[1], 'h:' .. token)
  if v then
    local d = cjson.decode(v)
    d.fence = fence_text
    redis.call('HSET', KEYS[1], 'h:' .. token, cjson.encode(d))
  end
elseif t == 'hash' and h[1] == token then
  redis.call('HSET', KEYS[1], 'fence', fence_text)
end
return {'raised', f}
