-- inspect: read everything status shows.
--
-- One script, so that status sees one consistent snapshot, with the
-- server's clock for ages and expiries. It reads and never writes: a
-- foreign key is shown for what it is.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its fence counter, <prefix>{NAME}:fence
--
-- No ARGV.
--
-- Replies {type, now_ms, fence, pttl, fields}: the type of the lock's key
-- ('none' when free), the server's clock in milliseconds, the fence counter
-- ('' when absent or not a string), the key's PTTL (-2 unless a hash) and
-- the hash's fields as {field, value, ...} ({} unless a hash).

local t = redis.call('TYPE', KEYS[1])['ok']
local now = redis.call('TIME')
local now_ms = string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000))
local fence = redis.pcall('GET', KEYS[2])
if type(fence) ~= 'string' then fence = '' end
if t ~= 'hash' then return {t, now_ms, fence, -2, {}} end
return {t, now_ms, fence, redis.call('PTTL', KEYS[1]), redis.call('HGETALL', KEYS[1])}
