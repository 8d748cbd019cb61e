-- Read everything status shows in one consistent snapshot, with the
-- server's clock for ages and expiries.
-- KEYS: lock hash, fence counter.

local t = redis.call('TYPE', KEYS[1])['ok']
local now = redis.call('TIME')
local now_ms = string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000))
local fence = redis.pcall('GET', KEYS[2])
if type(fence) ~= 'string' then fence = '' end
if t ~= 'hash' then return {t, now_ms, fence, -2, {}} end
return {t, now_ms, fence, redis.call('PTTL', KEYS[1]), redis.call('HGETALL', KEYS[1])}
