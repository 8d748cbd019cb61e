-- queue: the line of waiters at '<prefix>{NAME}:queue' (in the lock's
-- hash slot; each function takes its key): a hash with the schema marker, a
-- 'seq' counter that hands out tickets (HINCRBY: the server's order, never
-- a client's clock) and one field 'w:<id>' per waiter holding JSON {ticket,
-- expiry, since, deadline, host, pid, cmd, mode, limit}. A waiter keeps its
-- entry alive by heartbeat (expiry); an entry whose expiry passed is dead
-- and is skipped (and removed when the line is next written). The key
-- expires with its longest-lived entry, and is deleted with its last one.
-- It builds on check_key (t, multi, h and now: what holds the lock; k_schema).
-- - queue_bad(key): nil when the key is absent or redlock's, else what it is.
-- - line_of(key, prune): the live waiters, first come first.
-- - lock_state(): what holds the lock now (mode, count of live holders, limit).
-- - heads(st, line): the ids at the head of the line that the lock, in state
--   st, admits now, in order: FIFO over a semaphore's places, readers that
--   queued together go together, and nobody passes a waiter that cannot go.
-- - wake(channel, st, line): PUBLISH 'released <id>...' naming those heads,
--   on the lock's channel (for waiters not in line, and redlocks that listen
--   there only) and on each named waiter's own channel '<channel>:<id>',
--   where it listens (the waiters not named are not woken at all).
--@include check_key.lua
local function queue_bad(key)
  local qt = redis.call('TYPE', key)['ok']
  if qt == 'none' then return nil end
  if qt == 'hash' and redis.call('HMGET', key, 'schema')[1] == k_schema then return nil end
  return qt .. ' at ' .. key
end
local function line_of(key, prune)
  local out = {}
  local all = redis.call('HGETALL', key)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'w:' then
      local v = cjson.decode(all[i + 1])
      if v.expiry > now then v.id = string.sub(all[i], 3); out[#out + 1] = v
      elseif prune then redis.call('HDEL', key, all[i]) end
    end
  end
  table.sort(out, function(a, b) return a.ticket < b.ticket or (a.ticket == b.ticket and a.id < b.id) end)
  return out
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
local function heads(st, line)
  local ids = {}
  for _, w in ipairs(line) do
    if not admits(st, w.mode, w.limit) then break end
    admit(st, w.mode, w.limit)
    ids[#ids + 1] = w.id
  end
  return ids
end
local function wake(channel, st, line)
  local ids = heads(st, line)
  local msg = 'released'
  if #ids > 0 then msg = msg .. ' ' .. table.concat(ids, ' ') end
  redis.call('PUBLISH', channel, msg)
  for _, id in ipairs(ids) do redis.call('PUBLISH', channel .. ':' .. id, msg) end
end
