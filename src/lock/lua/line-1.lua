-- line: read the line of waiters, for status.
--
-- A key of its own, read apart from the lock, so that status of a lock
-- whose slot is moving (Redis Cluster) never waits for a line that exists
-- only while someone waits. It reads and never writes.
--
-- KEYS[1]  the line of waiters, <prefix>{NAME}:queue
--
-- No ARGV.
--
-- Replies {type, now_ms, fields}: the type of the key, the server's clock in
-- milliseconds, and the hash's fields as they are, {field, value, ...} ({}
-- unless a hash; dead entries included: the reader skips them by their
-- expiry).

local t = redis.call('TYPE', KEYS[1])['ok']
local now = redis.call('TIME')
local now_ms = string.format('%d', now[1] * 1000 + math.floor(now[2] / 1000))
if t ~= 'hash' then return {t, now_ms, {}} end
return {t, now_ms, redis.call('HGETALL', KEYS[1])}
