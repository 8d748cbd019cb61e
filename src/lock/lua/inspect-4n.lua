-- inspect: read everything status shows of some locks.
--
-- One script, so that status sees each lock in one consistent snapshot,
-- with the server's clock for ages and expiries; and many locks a call, so
-- that listing a thousand locks costs a few calls, not a thousand round
-- trips. It reads and never writes: a foreign key is shown for what it is.
-- It stops once its reply holds about k_budget bytes (after one lock at
-- least), so that a batch of large locks (semaphores of thousands of
-- holders) stays within what a client reads at once: the caller asks again
-- for the locks it did not get.
--
-- KEYS  four per lock, for as many locks as asked, in order:
--   KEYS[4i-3]  the lock's hash, <prefix>{NAME}
--   KEYS[4i-2]  its fence counter, <prefix>{NAME}:fence
--   KEYS[4i-1]  its suspension, <prefix>{NAME}:suspended
--   KEYS[4i]    its revoke mark, <prefix>{NAME}:revoke
--
-- ARGV[1]  optional: how many of the four keys each lock gives, 4 (the
--          default), 2 (the hash and the fence counter: no marks read) or 1
--          (one key alone, read as a lock's hash). On a Redis Cluster a
--          script whose keys are not all on the node gets TRYAGAIN while
--          their slot moves, and the marks seldom exist: there each is read
--          on its own.
--
-- Replies {'locks', lock, ...}: the first locks asked for, in order, each
-- {type, now_ms, fence, pttl, fields, suspension, revoke}: the type of the
-- lock's key ('none' when free), the server's clock in milliseconds, the
-- fence counter ('' when absent or not a string), the key's PTTL (-2 unless
-- a hash), the hash's fields as {field, value, ...} ({} unless a hash), and
-- the suspension's and the revoke mark's fields likewise ({} unless a
-- hash).

local k_budget = 262144

local clock = redis.call('TIME')
local now_ms = string.format('%d', clock[1] * 1000 + math.floor(clock[2] / 1000))
local out = {'locks'}
local bytes = 0
-- A mark's fields, if it is a hash.
local function fields_of(key)
  if redis.call('TYPE', key)['ok'] ~= 'hash' then return {} end
  return redis.call('HGETALL', key)
end
local per = tonumber(ARGV[1]) or 4
if per ~= 1 and per ~= 2 then per = 4 end
for at = 1, #KEYS - per + 1, per do
  local t = redis.call('TYPE', KEYS[at])['ok']
  local fence = per > 1 and redis.pcall('GET', KEYS[at + 1]) or ''
  if type(fence) ~= 'string' then fence = '' end
  local lock = {t, now_ms, fence, -2, {}, {}, {}}
  if per == 4 then
    lock[6] = fields_of(KEYS[at + 2])
    lock[7] = fields_of(KEYS[at + 3])
  end
  local size = 64 + #fence
  if t == 'hash' then
    lock[4] = redis.call('PTTL', KEYS[at])
    lock[5] = redis.call('HGETALL', KEYS[at])
  end
  for i = 5, 7 do
    for _, v in ipairs(lock[i]) do size = size + #v + 8 end
  end
  if #out > 1 and bytes + size > k_budget then break end
  out[#out + 1] = lock
  bytes = bytes + size
end
return out
