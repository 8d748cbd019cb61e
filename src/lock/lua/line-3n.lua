-- line: read the head of the line of waiters of some locks, for status.
--
-- The first entries of each line and how many are alive in all, never a
-- whole line; many lines a call, as inspect reads many locks. Keys of their
-- own, read apart from the locks, so that status of a lock whose slot is
-- moving (Redis Cluster) never waits for a line that exists only while
-- someone waits. It reads and never writes. Like inspect, it stops once its
-- reply holds about k_budget bytes (after one line at least): the caller
-- asks again for the rest.
--
-- KEYS  three per lock, for as many locks as asked, in order:
--   KEYS[3i-2]  the line, <prefix>{NAME}:line (includes/line.lua)
--   KEYS[3i-1]  its leases, <prefix>{NAME}:beats
--   KEYS[3i]    its entries, <prefix>{NAME}:waiters
--
-- ARGV[1]  listed  how many live entries to list of each line, from the head
--
-- Replies {'lines', line, ...}: the first lines asked for, in order, each
-- {type, now_ms, {'schema', marker, 'w:<id>', entry, ...}, live}: the type
-- of the waiters hash ({} and 0 unless a hash), the server's clock in
-- milliseconds, the entries as JSON with their expiry and ticket, and how
-- many waiters are alive in all.

local listed = ARGV[1]

local k_budget = 262144

local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local now_ms = string.format('%d', now)
local want = tonumber(listed) or 20

-- The head of one line: {type, now_ms, entries, live}, and its size in bytes.
local function head(line_key, beats_key, waiters_key)
  local t = redis.call('TYPE', waiters_key)['ok']
  if t ~= 'hash' then return {t, now_ms, {}, 0}, 64 end
  local out = {'schema', redis.call('HGET', waiters_key, 'schema') or ''}
  local size = 64 + #out[2]
  local shown = 0
  -- Dead entries not yet pruned are skipped: a bounded number more is read.
  for _, id in ipairs(redis.call('ZRANGE', line_key, 0, want + 31)) do
    if shown >= want then break end
    local expiry = tonumber(redis.call('ZSCORE', beats_key, id))
    local v = redis.call('HGET', waiters_key, id)
    if expiry and expiry > now and v then
      local ok, w = pcall(cjson.decode, v)
      if ok and type(w) == 'table' then
        w.expiry = expiry
        w.ticket = tonumber(redis.call('ZSCORE', line_key, id))
        local entry = cjson.encode(w)
        out[#out + 1] = 'w:' .. id
        out[#out + 1] = entry
        size = size + #id + #entry + 16
        shown = shown + 1
      end
    end
  end
  return {t, now_ms, out, redis.call('ZCOUNT', beats_key, '(' .. now_ms, '+inf')}, size
end

local out = {'lines'}
local bytes = 0
for at = 1, #KEYS - 2, 3 do
  local line, size = head(KEYS[at], KEYS[at + 1], KEYS[at + 2])
  if #out > 1 and bytes + size > k_budget then break end
  out[#out + 1] = line
  bytes = bytes + size
end
return out
