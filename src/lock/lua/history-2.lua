-- history: the newest runs of a lock name from its run ledger
-- (includes/ledger.lua), for `redlock history`, `overdue` and `status`.
-- A script so that the ledger's type, its marker and its entries are read
-- in one step, and one that is not redlock's is named, never read as runs.
-- The lock is read in the same step: a run still 'running' in the ledger
-- whose hold is not in the lock (its redlock died, and the lock expired or
-- another took it, with no run of its own to name it abandoned) is marked
-- so, never shown as running. It reads and never writes.
--
-- KEYS[1]  the run ledger, <prefix>{NAME}:runs
-- KEYS[2]  the lock's hash, <prefix>{NAME}
--
-- ARGV[1]  count   how many of the newest entries to read
--
-- Replies:
--   {'runs', server time (ms), {field, value, ...}...}   newest first, each
--    entry's fields after its schema field, and its entry id as 'id'; a
--    running run's ends with 'held', '1' while its hold is in the lock and
--    '0' once it is not (none when the lock's key is not redlock's)
--   {'foreign', what}   the key is not redlock's ledger
--@include hold_id.lua
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
-- The run ids of the lock's live holders (their hold_id),
-- or nil when the lock's key is not redlock's.
local function live_runs()
  local live = {}
  local lock = redis.call('TYPE', KEYS[2])['ok']
  if lock == 'none' then return live end
  if lock ~= 'hash' or redis.call('HGET', KEYS[2], 'schema') ~= k_schema then return nil end
  local all = redis.call('HGETALL', KEYS[2])
  local fields = {}
  for i = 1, #all, 2 do fields[all[i]] = all[i + 1] end
  local tokens = {}
  if fields.mode == 'semaphore' or fields.mode == 'shared' then
    for f, v in pairs(fields) do
      if string.sub(f, 1, 2) == 'h:' then
        local ok, holder = pcall(cjson.decode, v)
        if ok and type(holder) == 'table' and (tonumber(holder.expiry) or 0) > now then
          tokens[#tokens + 1] = string.sub(f, 3)
        end
      end
    end
  elseif fields.token and fields.token ~= '' then
    tokens[1] = fields.token
  end
  for _, token in ipairs(tokens) do live[hold_id(token)] = true end
  return live
end
local live = nil
for _, e in ipairs(entries) do
  local f = e[2]
  if f[1] == 'schema' and f[2] == k_schema then
    local fields = {'id', e[1]}
    local run, outcome = nil, nil
    for i = 3, #f - 1, 2 do
      fields[#fields + 1] = f[i]
      fields[#fields + 1] = f[i + 1]
      if f[i] == 'run' then run = f[i + 1] elseif f[i] == 'outcome' then outcome = f[i + 1] end
    end
    if outcome == 'running' then
      live = live or live_runs() or false
      if live then
        fields[#fields + 1] = 'held'
        fields[#fields + 1] = live[run] and '1' or '0'
      end
    end
    out[#out + 1] = fields
  end
end
return out
