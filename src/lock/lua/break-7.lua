-- break: free the lock, whoever holds it and in whatever mode.
--
-- The operator's way out of a stuck lock. Atomic so that the holders it
-- reports are exactly the ones it removed. Deleting the hash clears a
-- semaphore's or readers' mode and limit too; the fence counter is left
-- alone, so fences keep increasing across the break. A foreign key is
-- reported and left alone. The waiters at the head of the line are woken
-- as by a release (dead entries pruned first, the line moved). PUBLISH
-- comes before the DEL: a user whose ACL refuses the channel must find the
-- lock untouched. Each holder removed is told as 'broken' on the lock's
-- events channel (includes/events.lua), and on its run's revoke channel
-- (<revoke channel>:<run>, as revoke-2.lua), with who broke it: the exec
-- that held it hears at once that its lock is gone, and why, instead of
-- running on unlocked until its next renewal.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its fence counter (not read)
-- KEYS[3..6]  its line of waiters (includes/line.lua)
-- KEYS[7]  the index of held locks, <prefix>index (includes/index.lua;
--          left out on a Redis Cluster)
--
-- ARGV[1]  channel  the release channel, <prefix>{NAME}:released
-- ARGV[2]  runs     '' (every holder), or the run ids (includes/ledger.lua)
--                   of the only holders to remove, space-separated, with
--                   '-' for a lock kept under no token (revoke, after its
--                   grace: a holder that came since is left alone)
-- ARGV[3]  revoke   the revoke channel, <prefix>{NAME}:revoke
-- ARGV[4]  host     who breaks it: host
-- ARGV[5]  pid      and process id
--
-- Replies:
--   {'broken', mode, limit, now_ms, {{token, host, pid, cmd, since_ms,
--    fence, count}, ...}}   the holders it removed
--   {'free'}
--   {'foreign', what}     the lock's key is not redlock's: left alone
--@optional-keys 1
--@include check_key.lua
--@include events.lua
--@include line.lua
--@include index.lua
--@include ledger.lua

local channel = ARGV[1]
local only = nil
if (ARGV[2] or '') ~= '' then
  only = {}
  for run in string.gmatch(ARGV[2], '%S+') do only[run] = true end
end
-- Whether the holder of `token` is one to remove ('' : the lock kept
-- under no token).
local function chosen(token)
  if not only then return true end
  if token == '' then return only['-'] == true end
  return only[hold_id(token)] == true
end
index_at(KEYS[7])

if t == 'none' then
  index_sync()
  return {'free'}
end
local out = {}
local kept_others = false  -- holders of a semaphore's or readers' that stay
if multi then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'h:' then
      local v = cjson.decode(all[i + 1])
      if v.expiry > now and chosen(string.sub(all[i], 3)) then
        out[#out + 1] = {string.sub(all[i], 3), v.host or '', tostring(v.pid or ''), v.cmd or '',
                         string.format('%d', v.since or 0), tostring(v.fence or ''), tostring(v.count or 1)}
      elseif v.expiry > now then
        kept_others = true
      end
    end
  end
elseif chosen(h[1]) then
  out[1] = {h[1], h[4] or '', h[5] or '', h[9] or '', h[10] or '', h[3] or '', h[2]}
end
if #out == 0 then
  if not kept_others and not (only and not multi) then redis.call('DEL', KEYS[1]) end
  index_sync()
  return {'free'}
end
for _, o in ipairs(out) do
  if o[1] ~= '' and (ARGV[3] or '') ~= '' then
    local run = hold_id(o[1])
    redis.call('PUBLISH', ARGV[3] .. ':' .. run,
               cjson.encode({broken = true, runs = {run}, host = ARGV[4] or '', pid = ARGV[5] or ''}))
  end
end
if line_bad() then
  redis.call('PUBLISH', channel, 'released')
else
  if prune() > 0 then moved() end
  -- Who may come in: everyone, unless holders of a semaphore's or
  -- readers' stay (then as many places as were freed).
  local st = {count = 0}
  if kept_others then
    st = lock_state()
    st.count = st.count - #out
  end
  wake(st)
end
if kept_others then
  for _, o in ipairs(out) do redis.call('HDEL', KEYS[1], 'h:' .. o[1]) end
  keep_alive(holders())
else
  redis.call('DEL', KEYS[1])
end
index_sync()
for _, o in ipairs(out) do
  event('broken', {holder = hold_id(o[1]), host = o[2], pid = o[3], fence = o[6], count = tonumber(o[7]) or 1})
end
return {'broken', multi or 'exclusive', h[7] or '1', string.format('%d', now), out}
