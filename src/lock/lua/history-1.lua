-- history: the newest runs of a lock name from its run ledger
-- (includes/ledger.lua), for `redlock history`, `overdue` and `status`.
-- A script so that the ledger's type, its marker and its entries are read
-- in one step, and one that is not redlock's is named, never read as runs.
--
-- KEYS[1]  the run ledger, <prefix>{NAME}:runs
--
-- ARGV[1]  count   how many of the newest entries to read
--
-- Replies:
--   {'runs', server time (ms), {field, value, ...}...}   newest first, each
--    entry's fields after its schema field, and its entry id as 'id'
--   {'foreign', what}   the key is not redlock's ledger
local k_schema = '@SCHEMA@'
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local kind = redis.call('TYPE', KEYS[1])['ok']
local out = {'runs', string.format('%d', now)}
if kind == 'none' then return out end
if kind ~= 'stream' then return {'foreign', kind} end
local entries = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', tonumber(ARGV[1]) or 1)
if #entries == 0 or entries[1][2][1] ~= 'schema' or entries[1][2][2] ~= k_schema then
  return {'foreign', 'stream without redlock\'s schema field'}
end
for _, e in ipairs(entries) do
  local f = e[2]
  if f[1] == 'schema' and f[2] == k_schema then
    local fields = {'id', e[1]}
    for i = 3, #f do fields[#fields + 1] = f[i] end
    out[#out + 1] = fields
  end
end
return out
