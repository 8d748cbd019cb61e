-- line: the line of waiters of one lock, kept in four keys of the lock's hash
-- slot so that no call reads the whole line: each is O(log N) in its length.
-- - KEYS[3] line (zset): waiter id -> ticket. ZRANGE 0 0 is the head, ZRANK
--   a place; equal tickets (Redlock) order by id, as Redis orders scores.
-- - KEYS[4] beats (zset): waiter id -> the end of its lease (server ms). A
--   waiter keeps its entry alive by heartbeat (a new try); one whose lease
--   ended is dead: skipped, and pruned a bounded number per call, the
--   longest dead first.
-- - KEYS[5] waiters (hash): the schema marker, 'seq' (the counter that hands
--   out one server's tickets: the server's order, never a client's clock)
--   and per id the entry as JSON {ticket, since, deadline, host, pid, cmd,
--   mode, limit}.
-- - KEYS[6] writers (zset): the waiters that are not readers, by ticket, so
--   that a reader tells in one step whether a writer waits ahead of it.
-- A waiter far back beats rarely, with a long lease; the first k_near of the
-- line beat often with a short one. Whenever the line moves, an entry that
-- comes within k_near of the head has its lease cut to k_near_lease and is
-- told ('moved <id>' on its own channel) so that a live one beats at once:
-- one that died far back is gone before it could hold anyone up.
-- The keys expire with the longest lease in them, and are deleted together
-- when the line empties.
-- - line_bad(known): nil when the line's keys are absent or redlock's, else
--   what; when they are all absent, the reads below skip the line until
--   line_written() says the call wrote to it. known is what the caller
--   already found: 'absent' (none of the keys exists), 'some' (one of them
--   may) or nil (none_exist() finds out).
-- - prune(), moved(): see above; drop(id) takes one entry out;
--   waiter_left(id, entry, reason) tells that a waiter left.
-- - walk(key, keep, most): the live waiters from the head on.
-- - lock_state(): what holds the lock now (mode, count of live holders, limit).
-- - heads(st): the ids at the head of the line that the lock, in state st,
--   admits now, in order: FIFO over a semaphore's places, readers that
--   queued together go together, and nobody passes a waiter that cannot go.
-- - wake(st): PUBLISH 'released <id>...' naming those heads, on the lock's
--   channel (for waiters not in line) and on each named waiter's own
--   channel '<channel>:<id>', where it listens (the others sleep on).
-- It builds on check_key (t, multi, h and now: what holds the lock; k_schema),
-- and tells of waiters that join and leave through events.lua: a dead entry
-- pruned is told as 'left' (reason 'dead'), never a heartbeat.
--@include check_key.lua
--@include events.lua
local k_near = 4
local k_near_lease = 2000
local k_prune = 16
local k_walk = 32
local line_key = KEYS[3]
local beats_key = KEYS[4]
local waiters_key = KEYS[5]
local writers_key = KEYS[6]
local release_channel = KEYS[1] .. ':released'

-- Known empty: set by line_bad() when none of the line's keys exists, and
-- cleared by the first write to the line in the call (line_written()).
-- Until then every read of the line is skipped: a lock nobody waits for
-- costs the one EXISTS that finds it so, not a prune and a walk as well.
local line_none = false
local function line_written()
  line_none = false
end

-- nil when the line's keys are absent or redlock's, else what is there. A
-- lock nobody waits for is the common case: one EXISTS finds it so, where
-- a TYPE of each key would take four calls.
local function line_bad(known)
  if known == nil and none_exist({line_key, beats_key, waiters_key, writers_key}) then known = 'absent' end
  line_none = known == 'absent'
  if line_none then return nil end
  local wt = redis.call('TYPE', waiters_key)['ok']
  if wt ~= 'none' and (wt ~= 'hash' or redis.call('HGET', waiters_key, 'schema') ~= k_schema) then
    return wt .. ' at ' .. waiters_key
  end
  for _, k in ipairs({line_key, beats_key, writers_key}) do
    local kt = redis.call('TYPE', k)['ok']
    -- The sorted sets exist only beside redlock's hash.
    if kt ~= 'none' and (kt ~= 'zset' or wt == 'none') then return kt .. ' at ' .. k end
  end
  -- (with no waiters hash, any sorted set there was refused above)
  line_none = wt == 'none'
  return nil
end

local function alive(id)
  local e = tonumber(redis.call('ZSCORE', beats_key, id))
  return e ~= nil and e > now
end

local function entry_of_waiter(id)
  if line_none then return nil end
  local v = redis.call('HGET', waiters_key, id)
  if v then return cjson.decode(v) end
  return nil
end

local function drop(id)
  if line_none then return end
  redis.call('ZREM', line_key, id)
  redis.call('ZREM', beats_key, id)
  redis.call('ZREM', writers_key, id)
  redis.call('HDEL', waiters_key, id)
end

-- Tells that waiter `id` (its entry v, or nil) left the line, and why.
local function waiter_left(id, v, reason)
  v = v or {}
  event('left', {waiter = id, host = v.host or '', pid = tostring(v.pid or ''), mode = v.mode or '', reason = reason})
end

-- Removes up to k_prune dead entries, those whose lease ended first.
local function prune()
  if line_none then return 0 end
  local dead = redis.call('ZRANGEBYSCORE', beats_key, '-inf', now, 'LIMIT', 0, k_prune)
  for _, id in ipairs(dead) do
    waiter_left(id, entry_of_waiter(id), 'dead')
    drop(id)
  end
  return #dead
end

-- After the line moved: deletes an empty line; cuts the lease of an entry
-- that has come within k_near of the head, and tells it.
local function moved()
  if line_none then return end
  if redis.call('ZCARD', line_key) == 0 then
    redis.call('DEL', line_key, beats_key, waiters_key, writers_key)
    return
  end
  local cap = now + k_near_lease
  for _, id in ipairs(redis.call('ZRANGE', line_key, 0, k_near - 1)) do
    local e = tonumber(redis.call('ZSCORE', beats_key, id))
    if e and e > cap then
      redis.call('ZADD', beats_key, cap, id)
      redis.call('PUBLISH', release_channel .. ':' .. id, 'moved ' .. id)
    end
  end
end

-- Calls keep(w) for the live waiters of sorted set `key` (the line, or its
-- writers) from the head on, in order, while it returns true. Dead entries
-- are skipped, at most k_walk of them, and at most `most` live ones are
-- visited: a head of many dead entries costs a bounded walk. Returns true
-- when keep() stopped it or the set ended, false when a bound did.
local function walk(key, keep, most)
  if line_none then return true end
  local from, skipped, seen = 0, 0, 0
  while true do
    local batch = redis.call('ZRANGE', key, from, from + 7, 'WITHSCORES')
    if #batch == 0 then return true end
    for i = 1, #batch, 2 do
      local id = batch[i]
      local w = nil
      if alive(id) then w = entry_of_waiter(id) end
      if w then
        w.id = id
        w.ticket = tonumber(batch[i + 1])
        if not keep(w) then return true end
        seen = seen + 1
        if seen >= most then return false end
      else
        skipped = skipped + 1
        if skipped >= k_walk then return false end
      end
    end
    from = from + 8
  end
end

local function lock_state()
  if t == 'none' then return {count = 0} end
  if not multi then return {mode = 'exclusive', count = 1, limit = '1'} end
  local n = 0
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'h:' and cjson.decode(all[i + 1]).expiry > now then n = n + 1 end
  end
  if n == 0 then return {count = 0} end
  return {mode = multi, count = n, limit = h[7]}
end
local function admits(st, m, lim)
  if st.count == 0 then return true end
  if st.mode ~= m then return false end
  if m == 'shared' then return true end
  return m == 'semaphore' and st.limit == lim and st.count < tonumber(lim)
end
local function admit(st, m, lim)
  if st.count == 0 then st.mode = m; st.limit = lim end
  st.count = st.count + 1
end

-- The ids at the head of the line that the lock, in state st, admits now,
-- in order (at most k_wake): FIFO over a semaphore's places, readers that
-- queued together go together, and nobody passes a waiter that cannot go.
local k_wake = 64
local function heads(st)
  local ids = {}
  walk(line_key, function(w)
    if not admits(st, w.mode, w.limit) then return false end
    admit(st, w.mode, w.limit)
    ids[#ids + 1] = w.id
    -- A writer, or a semaphore's last place, admits nobody after it: the
    -- next entry is not read.
    return st.mode == 'shared' or (st.mode == 'semaphore' and st.count < tonumber(st.limit))
  end, k_wake)
  return ids
end

-- PUBLISH 'released <id>...' naming the heads, on the lock's channel and on
-- each named waiter's own channel.
local function wake(st)
  local ids = heads(st)
  local msg = 'released'
  if #ids > 0 then msg = msg .. ' ' .. table.concat(ids, ' ') end
  redis.call('PUBLISH', release_channel, msg)
  for _, id in ipairs(ids) do redis.call('PUBLISH', release_channel .. ':' .. id, msg) end
end

-- The line's keys made to live at least `lease` ms more: the four share one
-- expiry, the longest lease in them, so the line's own PTTL stands for all.
-- (The writers' set, made again by a writer that joins after the last one
-- left, never outlives the line: both are set together from then on.)
-- new_writer: a writer just joined, whose set may have been made now.
local function keep_line(lease, new_writer)
  local pttl = redis.call('PTTL', line_key)
  if pttl == -1 or (pttl >= 0 and pttl < lease) then
    for _, k in ipairs({line_key, beats_key, waiters_key, writers_key}) do redis.call('PEXPIRE', k, lease) end
  elseif new_writer then
    redis.call('PEXPIRE', writers_key, pttl)
  end
end

-- How many live waiters are in line.
local function live_count()
  if line_none then return 0 end
  return redis.call('ZCOUNT', beats_key, '(' .. string.format('%d', now), '+inf')
end
