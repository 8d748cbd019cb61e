-- ledger: the runs of a lock name, so that "did it run, where, and did it
-- work?" has an answer once the lock is free. One stream per name,
-- <prefix>{NAME}:runs, in the lock's hash slot: one entry per exec run,
-- written by the scripts exec already runs (acquire starts a run, release
-- ends it), so a run costs no round trip of its own.
-- An entry's fields, always in this order: schema (k_schema: a stream whose
-- newest entry lacks it is not redlock's and is never written), run (the
-- first 16 hex digits of the SHA-1 of the holder's token: the same run on
-- every Redlock server, and never the token itself), outcome ('running'
-- while it runs; then ok, failed, signalled, lost, timed-out, revoked or
-- abandoned), host, pid, cmd, fence, start_ms and end_ms (the server's
-- clock; end_ms '' while running and for an abandoned run) and exit (the
-- exit status, '' when there is none).
-- A run's entry is replaced when it ends (XDEL, then XADD): the stream is
-- in the order runs ended, and one that is still running is where it
-- started. It keeps the newest k_ledger_cap entries (MAXLEN), and every
-- write makes it live k_ledger_keep_ms more: a name that stops running
-- keeps its runs 30 days after its last one.
-- Every ledger's key is kept in the index of names with a ledger,
-- <prefix>ledgers, so that status lists the names whose locks are free but
-- whose runs a metric must carry (a job's dead man's switch fires while its
-- lock is free): a sorted set of ledger keys scored by when each expires
-- (server ms) and the schema marker, member k_schema with score +inf,
-- without which the key is not redlock's and is left alone. Like the index
-- of held locks (includes/index.lua) it lies in no lock's hash slot: the
-- caller gives it as the script's last key, or leaves it out (a Redis
-- Cluster, or an ACL that does not cover it) and nothing is kept; every
-- call on it goes through redis.pcall. Each write prunes up to
-- k_ledgers_prune entries whose ledger expired, the longest dead first; a
-- ledger deleted with its last entry leaves at once.
-- - ledger_at(key, ledgers): the ledger is `key` (KEYS[n] of the script),
--   the index of names with a ledger `ledgers` (nil when left out).
-- - ledger_bad(): nil when the ledger is absent or redlock's, else what it
--   holds (nothing may be written to it).
-- - ledger_start(run, host, pid, cmd, fence): a new run, 'running'.
-- - ledger_abandon(live, deep): every running run among the newest entries
--   whose id is not a key of `live` (its lock expired with no end) recorded
--   as abandoned; returns the newest of them, or nil. Only the newest two
--   are read unless `deep` (a lock of several holders, whose runs overlap)
--   or one of them is such a run: one holder at a time leaves nothing
--   running below its own newest entry.
-- - ledger_finish(run, outcome, exit, fallback): the run's end; when its
--   entry is not among the newest, `fallback` (host, pid, cmd, fence,
--   start_ms) makes one, unless `fallback` is nil.
-- - ledger_drop(run): the run taken out (an acquire undone).
-- - ledger_last_ok(): the newest ok run, or nil.
-- Every run found is a table of its fields, with `id` its entry's id.
-- It builds on check_key (now, k_schema).
--@include check_key.lua
--@include hold_id.lua
local k_ledger_cap = 100
local k_ledger_keep_ms = 30 * 24 * 3600 * 1000
-- How many of the newest entries are searched for a run still running.
local k_ledger_scan = 16
local k_run_fields = {'run', 'outcome', 'host', 'pid', 'cmd', 'fence', 'start_ms', 'end_ms', 'exit'}
local k_ledgers_prune = 8
local ledger_key = nil
local ledgers_key = nil

local function ledger_at(key, ledgers)
  ledger_key = key
  ledgers_key = ledgers
end

-- The ledger's entry in the index of names with a ledger made to match it:
-- `expires` (server ms) while it exists, nil once it is gone.
local function ledgers_sync(expires)
  if not ledgers_key then return end
  -- As the index of held locks (index.lua): the marker first, the type
  -- only without it.
  local marker = redis.pcall('ZSCORE', ledgers_key, k_schema)
  if type(marker) ~= 'string' then
    if marker ~= false then return end
    local kind = redis.pcall('TYPE', ledgers_key)
    if type(kind) ~= 'table' or kind.ok ~= 'none' then return end
    if not expires or type(redis.pcall('ZADD', ledgers_key, '+inf', k_schema)) ~= 'number' then return end
  end
  if not expires then
    redis.pcall('ZREM', ledgers_key, ledger_key)
    return
  end
  redis.pcall('ZADD', ledgers_key, string.format('%d', expires), ledger_key)
  local dead = redis.pcall('ZRANGEBYSCORE', ledgers_key, '-inf', string.format('(%d', now), 'LIMIT', 0,
                           k_ledgers_prune)
  if type(dead) == 'table' and #dead > 0 then redis.pcall('ZREM', ledgers_key, unpack(dead)) end
end


-- An entry {id, {f1, v1, ...}} as a table of its fields, or nil when it is
-- not redlock's.
local function ledger_entry(e)
  local f = e[2]
  if f[1] ~= 'schema' or f[2] ~= k_schema then return nil end
  local v = {id = e[1]}
  for i = 3, #f - 1, 2 do v[f[i]] = f[i + 1] end
  return v
end

-- The newest two entries, read once a call until the ledger is written:
-- the check of its marker, a run's end and the search for abandoned runs
-- all start there.
local k_ledger_head = 2
local ledger_head_page = nil
local function ledger_head()
  if not ledger_head_page then
    ledger_head_page = redis.call('XREVRANGE', ledger_key, '+', '-', 'COUNT', k_ledger_head)
  end
  return ledger_head_page
end

-- The head is read first: a ledger with entries, the common case, is found
-- redlock's by that one call. Only an error (another type) or no entry (no
-- ledger, or an empty stream) asks what the key is.
local function ledger_bad()
  local head = redis.pcall('XREVRANGE', ledger_key, '+', '-', 'COUNT', k_ledger_head)
  if head.err or #head == 0 then
    local kind = redis.call('TYPE', ledger_key)['ok']
    if kind == 'none' then return nil end
    if kind ~= 'stream' then return kind end
    -- A stream whose read failed for another reason (an ACL) fails as such.
    if head.err then redis.call('XREVRANGE', ledger_key, '+', '-', 'COUNT', k_ledger_head) end
    return 'stream without redlock\'s schema field'
  end
  ledger_head_page = head
  if not ledger_entry(head[1]) then return 'stream without redlock\'s schema field' end
  return nil
end

local function ledger_newest(count)
  local out = {}
  for _, e in ipairs(redis.call('XREVRANGE', ledger_key, '+', '-', 'COUNT', count)) do
    local v = ledger_entry(e)
    if v then out[#out + 1] = v end
  end
  return out
end

local function ledger_write(v)
  local fields = {}
  for _, f in ipairs(k_run_fields) do
    fields[#fields + 1] = f
    fields[#fields + 1] = v[f] or ''
  end
  ledger_head_page = nil
  redis.call('XADD', ledger_key, 'MAXLEN', k_ledger_cap, '*', 'schema', k_schema, unpack(fields))
  redis.call('PEXPIRE', ledger_key, k_ledger_keep_ms)
  ledgers_sync(now + k_ledger_keep_ms)
end

-- Takes entry `v` out; the ledger goes with its last entry (an empty stream
-- would read as someone else's), unless `rewritten`: its new entry follows.
local function ledger_remove(v, rewritten)
  ledger_head_page = nil
  redis.call('XDEL', ledger_key, v.id)
  if not rewritten and redis.call('XLEN', ledger_key) == 0 then
    redis.call('DEL', ledger_key)
    ledgers_sync(nil)
  end
end

local function ledger_start(run, host, pid, cmd, fence)
  ledger_write({run = run, outcome = 'running', host = host, pid = pid, cmd = cmd, fence = fence,
                start_ms = string.format('%d', now)})
end

local function ledger_abandon(live, deep)
  local newest = nil
  local found = {}
  for _, e in ipairs(ledger_head()) do
    local v = ledger_entry(e)
    if v then
      found[#found + 1] = v
      if v.outcome == 'running' and not live[v.run] then deep = true end
    end
  end
  if deep then found = ledger_newest(k_ledger_scan) end
  for i = #found, 1, -1 do
    local v = found[i]
    if v.outcome == 'running' and not live[v.run] then
      ledger_remove(v, true)
      v.outcome = 'abandoned'
      ledger_write(v)
      newest = v
    end
  end
  return newest
end

-- The first of the newest k_ledger_scan entries that `wanted` takes, or nil.
-- The newest two are read first: a run's own entry is nearly always among
-- them (every write goes to the end), and reading and converting sixteen
-- entries is most of what a release costs Redis; the rest only if needed.
local function ledger_find(wanted)
  local first = k_ledger_head
  local page = ledger_head()
  for _, e in ipairs(page) do
    local v = ledger_entry(e)
    if v and wanted(v) then return v end
  end
  if #page < first then return nil end
  -- From the last entry read (again: an exclusive start needs Redis 6.2).
  local rest = redis.call('XREVRANGE', ledger_key, page[#page][1], '-', 'COUNT', k_ledger_scan - first + 1)
  for i = 2, #rest do
    local v = ledger_entry(rest[i])
    if v and wanted(v) then return v end
  end
  return nil
end

local function ledger_finish(run, outcome, exit, fallback)
  local v = ledger_find(function(e) return e.run == run and (e.outcome == 'running' or e.outcome == 'abandoned') end)
  if v then
    ledger_remove(v, true)
  elseif fallback then
    v = fallback
    v.run = run
  else
    return
  end
  v.outcome = outcome
  v.exit = exit
  v.end_ms = string.format('%d', now)
  ledger_write(v)
end

local function ledger_drop(run)
  local v = ledger_find(function(e) return e.run == run and e.outcome == 'running' end)
  if v then ledger_remove(v) end
end

local function ledger_last_ok()
  for _, v in ipairs(ledger_newest(k_ledger_cap + k_ledger_scan)) do
    if v.outcome == 'ok' then return v end
  end
  return nil
end
