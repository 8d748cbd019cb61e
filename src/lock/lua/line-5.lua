-- line: read the head of the line of waiters, for status.
--
-- The first entries and how many are alive in all, never the whole line.
-- Keys of their own, read apart from the lock, so that status of a lock
-- whose slot is moving (Redis Cluster) never waits for a line that exists
-- only while someone waits. It reads and never writes.
--
-- KEYS[1]  the lock's hash (not read)
-- KEYS[2]  its fence counter (not read)
-- KEYS[3]  the line, <prefix>{NAME}:line (includes/line.lua)
-- KEYS[4]  its leases, <prefix>{NAME}:beats
-- KEYS[5]  its entries, <prefix>{NAME}:waiters
--
-- ARGV[1]  listed  how many live entries to list, from the head
--
-- Replies {type, now_ms, {'schema', marker, 'w:<id>', entry, ...}, live}:
-- the type of the waiters hash ({} and 0 unless a hash), the server's clock
-- in milliseconds, the entries as JSON with their expiry and ticket, and
-- how many waiters are alive in all.

local listed = ARGV[1]

local t = redis.call('TYPE', KEYS[5])['ok']
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local now_ms = string.format('%d', now)
if t ~= 'hash' then return {t, now_ms, {}, 0} end
local want = tonumber(listed) or 20
local out = {'schema', redis.call('HGET', KEYS[5], 'schema') or ''}
local shown = 0
-- Dead entries not yet pruned are skipped: a bounded number more is read.
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, want + 31)) do
  if shown >= want then break end
  local expiry = tonumber(redis.call('ZSCORE', KEYS[4], id))
  local v = redis.call('HGET', KEYS[5], id)
  if expiry and expiry > now and v then
    local ok, w = pcall(cjson.decode, v)
    if ok and type(w) == 'table' then
      w.expiry = expiry
      w.ticket = tonumber(redis.call('ZSCORE', KEYS[3], id))
      out[#out + 1] = 'w:' .. id
      out[#out + 1] = cjson.encode(w)
      shown = shown + 1
    end
  end
end
local total = redis.call('ZCOUNT', KEYS[4], '(' .. now_ms, '+inf')
return {t, now_ms, out, total}
