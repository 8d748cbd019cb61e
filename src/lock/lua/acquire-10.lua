-- acquire: take the lock, or re-enter it.
--
-- Atomic so that the lock never exists without its TTL, the fence is
-- raised exactly once per new holder, a re-entry is granted only to a token
-- that holds the lock at this instant and in a mode at least as strong as
-- asked (a reader's share never becomes exclusive), and a semaphore never
-- has more live holders than its limit on this server.
-- Fences are a hybrid logical clock: max(counter + 1, server TIME in µs),
-- so they keep increasing across a restart that lost the counter as long
-- as the server's clock does not go back. Numbers go to Redis through
-- string.format('%d'): Lua would print 16 digits in exponent notation.
-- A minimum hold (exec --hold-at-least, plain locks only) makes the first
-- expiry at least that long, so a holder that is killed or whose host dies
-- still keeps the lock for its minimum hold.
-- Fair waiting: re-entry by the holder's token comes first and never
-- waits; otherwise, while anyone is in line, a newcomer gets the lock only
-- when everyone ahead of it would too (never, for a plain lock): a waiter
-- gets it in ticket order. A busy answer puts a waiter that gave its id in
-- line (or refreshes its entry: the heartbeat) and says its place.
-- 'unfair' skips the line altogether.
-- Told on the lock's events channel (includes/events.lua): 'acquired',
-- 'reentered', and 'joined' when a waiter first enters the line (never on
-- its heartbeats).
-- The run ledger (includes/ledger.lua): an exec that records its run starts
-- it here, with its grant, and names any run before it that never ended
-- (its redlock died and its lock expired: abandoned). An exec of several
-- names only has the ledger checked here: its runs begin once every name
-- is held (start-run-3.lua), so that one that dies while it waits for the
-- next name leaves no run of a command that never ran. With a skip window,
-- a grant is refused ('skipped') when the last ok run ended within it:
-- checked here, in the same atomic step as the grant, so that two hosts
-- never both decide to run.
-- A suspended name (redlock suspend) is taken by nobody new: only its
-- holder's re-entry passes; a waiter in line leaves it. Checked in the same
-- step as the grant, so that no acquire slips in after the suspension.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its fence counter, <prefix>{NAME}:fence
-- KEYS[3..6]  its line of waiters: line, beats, waiters, writers
--              (<prefix>{NAME}:line and so on; includes/line.lua)
-- KEYS[7]  its run ledger, <prefix>{NAME}:runs (includes/ledger.lua; read
--          and written only with a history or a skip window)
-- KEYS[8]  its suspension, <prefix>{NAME}:suspended (includes/suspension.lua)
-- KEYS[9]  the index of held locks, <prefix>index (includes/index.lua;
--          left out on a Redis Cluster)
-- KEYS[10] the index of names with a ledger, <prefix>ledgers
--          (includes/ledger.lua; left out with KEYS[9])
--
-- ARGV[1]   token         the token a new holder gets
-- ARGV[2]   ttl_ms        the lease, in milliseconds
-- ARGV[3]   host          who asks (kept for status): host,
-- ARGV[4]   pid           process id,
-- ARGV[5]   cmd           and command
-- ARGV[6]   reenter       the token to re-enter ('' for none)
-- ARGV[7]   mode          'exclusive', 'semaphore' or 'shared'
-- ARGV[8]   limit         a semaphore's places ('1' exclusive, '0' shared)
-- ARGV[9]   min_hold_ms   the minimum hold, in milliseconds (0: none)
-- ARGV[10]  waiter        the waiter's id in line ('' to not wait in line)
-- ARGV[11]  fairness      'fair' or 'unfair'
-- ARGV[12]  lease_ms      how long the waiter's entry lives unrefreshed (cut
--                         to the near lease within the first places)
-- ARGV[13]  wait_left_ms  how much longer it waits (-1: forever)
-- ARGV[14]  ticket        '' (one server: the next number of the line's own
--                         sequence), 'clock' (Redlock: the server's clock in
--                         ms, when it first joins) or a number (Redlock: the
--                         ticket the waiter settled on, the same on every
--                         server, so that every server's line has the same
--                         order)
-- ARGV[15]  max_waiters   a newcomer is not put in line when this many
--                         already wait there ('0': no bound)
-- ARGV[16]  history       'run' (a new hold starts a run in the ledger),
--                         'check' (the ledger is checked as for a run, which
--                         start-run-3.lua begins later) or ''
-- ARGV[17]  skip_ok_ms    refuse the grant when the last ok run ended less
--                         than this long ago ('0': never)
-- ARGV[18]  note          kept with a new hold for status ('' for none)
--
-- Replies:
--   {'acquired'|'reentered', token, fence, count, ttl ms}, and after an
--    acquired one whose run found a run before it abandoned: that run's
--    host, pid and start (server ms)
--   {'skipped', host, pid, end (server ms), server time (ms)}   the last ok
--    run, which ended within the skip window: nothing taken
--   {'busy', holder's ttl ms, host, pid, place in line (0: not in line;
--    dead entries ahead that are not yet pruned count),
--    waiters ahead of a newcomer, the waiter's ticket (0: none), the
--    holder's command, how many hold it, 'kept' or '', how long the
--    holder has held it in ms (the longest of several; -1: unknown),
--    'full' (a newcomer not put in line: max_waiters wait) or ''}   (a
--    waiting acquire's first line names the holder from it, with no round
--    trip of its own)
--   {'mismatch'|'upgrade', mode, limit}   the lock is held in another mode
--   {'suspended', reason, host, pid, since (server ms), until (server ms;
--    -1: until resumed), server time (ms)}   nothing taken; a waiter that
--    gave its id is out of line
--   {'foreign', what}     the lock's key, the line's, or the fence
--                         counter's (not a string) is not redlock's
--   an error reply        a fence counter redlock cannot increase, or an
--                         ACL that would not let the lock be given back:
--                         nothing written
--@optional-keys 2
--@include check_key.lua
--@include events.lua
--@include line.lua
--@include fence.lua
--@include index.lua
--@include ledger.lua
--@include suspension.lua

local token = ARGV[1]
local ttl_ms = ARGV[2]
local host = ARGV[3]
local pid = ARGV[4]
local cmd = ARGV[5]
local reenter = ARGV[6]
local mode = ARGV[7]
local limit = ARGV[8]
local min_hold_ms = ARGV[9]
local waiter = ARGV[10]
local fairness = ARGV[11]
local lease_ms = ARGV[12]
local wait_left_ms = ARGV[13]
local ticket = ARGV[14]
local max_waiters = tonumber(ARGV[15]) or 0
local history = ARGV[16] or ''
local skip_ok_ms = tonumber(ARGV[17]) or 0
local note = ARGV[18] or ''
index_at(KEYS[9])
ledger_at(KEYS[7], KEYS[10])
local ledgered = history ~= '' or skip_ok_ms > 0

-- A user who may take the lock but not give it back would leave it held for
-- its whole TTL: what a release, a renewal and waking the line need is
-- checked before anything is written (Redis 7; earlier servers cannot),
-- and so is what leaving the line needs.
if redis.acl_check_cmd then
  local channel = KEYS[1] .. ':released'
  for _, c in ipairs({{'PUBLISH', channel, 'released'}, {'DEL', KEYS[1]}, {'HDEL', KEYS[1], 'token'},
                      {'HMGET', KEYS[1], 'token'}, {'HINCRBY', KEYS[1], 'count', '1'}, {'PEXPIRE', KEYS[1], '1'},
                      {'PTTL', KEYS[1]}, {'ZREM', KEYS[3], 'id'}, {'HDEL', KEYS[5], 'id'}}) do
    if not redis.acl_check_cmd(unpack(c)) then
      local what = c[1] == 'PUBLISH' and ('PUBLISH to ' .. channel) or (c[1] .. ' on ' .. KEYS[1])
      return redis.error_reply('NOPERM this user may take the lock but may not ' .. what ..
                               ', which giving it back needs: nothing was written')
    end
  end
  -- And what ending a run needs of its ledger, or the run would hold the
  -- lock and never be recorded.
  if ledgered then
    for _, c in ipairs({{'XADD', KEYS[7], '*', 'f', 'v'}, {'XDEL', KEYS[7], '0-1'}, {'XREVRANGE', KEYS[7], '+', '-'},
                        {'XLEN', KEYS[7]}, {'DEL', KEYS[7]}, {'PEXPIRE', KEYS[7], '1'}, {'TYPE', KEYS[7]}}) do
      if not redis.acl_check_cmd(unpack(c)) then
        return redis.error_reply('NOPERM this user may not ' .. c[1] .. ' on ' .. KEYS[7] ..
                                 ', which the run ledger needs: nothing was written (--no-history runs without it)')
      end
    end
  end
end
-- A fence counter that is not a string is someone else's key, said as such
-- (a GET would fail with a bare WRONGTYPE): never touched, and no lock is
-- taken whose fence could not be raised. Read here, once, for the grant.
local counter = redis.pcall('GET', KEYS[2])
if type(counter) == 'table' and counter.err then
  local fence_type = redis.call('TYPE', KEYS[2])['ok']
  if fence_type == 'none' or fence_type == 'string' then return counter end
  return {'foreign', fence_type .. ' where its fence counter (' .. KEYS[2] .. ') belongs'}
end
-- A name nobody suspended and nobody waits for, the common case, is found
-- so by one EXISTS rather than a TYPE of each of those five keys; not asked
-- when the lock is held, whose line is likely there.
local bare = nil
if t == 'none' then bare = none_exist({KEYS[8], KEYS[3], KEYS[4], KEYS[5], KEYS[6]}) end
suspension_at(KEYS[8])
local suspended = nil
if not bare then suspended = suspension() end
if suspended and suspended[1] == 'foreign' then return suspended end
local ttl = tonumber(ttl_ms)
local hold = tonumber(min_hold_ms) or 0
local fair = fairness == 'fair'
-- The ticket the waiter settled on, if it has (Redlock).
local settled = tonumber(ticket)
-- A newcomer finds the line full: it is busy at once, and not put in it.
local full = false
if fair then
  local bad = line_bad(bare and 'absent' or 'some')
  if bad then return {'foreign', bad} end
  if prune() > 0 then moved() end
  full = waiter ~= '' and max_waiters > 0 and not entry_of_waiter(waiter) and live_count() >= max_waiters
end
-- Puts the waiter in line, or refreshes its entry (the heartbeat); returns
-- its entry and its rank (0: the head). Once per call of the script.
local entered = nil
local function enter()
  if entered then return entered[1], entered[2] end
  local v = entry_of_waiter(waiter)
  local joined = false
  if not v then
    local first = settled
    if not first and ticket == 'clock' then first = now end
    if not first then first = redis.call('HINCRBY', waiters_key, 'seq', 1) end
    v = {ticket = first, since = now, host = host, pid = tonumber(pid), cmd = cmd, mode = mode, limit = limit}
    joined = true
  elseif settled then
    v.ticket = settled
  end
  v.deadline = -1
  if wait_left_ms ~= '-1' then v.deadline = now + tonumber(wait_left_ms) end
  line_written()
  redis.call('HSET', waiters_key, 'schema', k_schema, waiter, cjson.encode(v))
  -- A heartbeat keeps its ticket (one server): its place needs no write.
  local rank = false
  if not joined and not settled then rank = redis.call('ZRANK', line_key, waiter) end
  local new_writer = false
  if not rank then
    redis.call('ZADD', line_key, v.ticket, waiter)
    new_writer = mode ~= 'shared' and redis.call('ZADD', writers_key, v.ticket, waiter) == 1
    rank = redis.call('ZRANK', line_key, waiter)
  end
  if joined then
    event('joined', {waiter = waiter, host = host, pid = pid, cmd = cmd, mode = mode, place = rank + 1})
  end
  -- Near the head a lease is short whatever the waiter asked: one that
  -- stops there is skipped within k_near_lease.
  local lease = tonumber(lease_ms)
  if rank < k_near and lease > k_near_lease then lease = k_near_lease end
  redis.call('ZADD', beats_key, now + lease, waiter)
  keep_line(lease, new_writer)
  entered = {v, rank}
  return v, rank
end
-- who: the holder named (host, pid, cmd, how many hold, 'kept' when it is
-- held only for a finished holder's minimum hold, and since when, server
-- ms), or nil.
local function busy(left, who)
  who = who or {'', '', '', 0, '', nil}
  local place, ahead, mine = 0, 0, 0
  if fair and (waiter == '' or full) then
    ahead = live_count()
  elseif fair then
    local v, rank = enter()
    place, ahead, mine = rank + 1, rank, v.ticket
  end
  local held = -1
  if who[6] then held = math.max(0, now - who[6]) end
  return {'busy', left, who[1], who[2], place, ahead, mine, who[3], who[4], who[5], held, full and 'full' or ''}
end
local function dequeue()
  -- Over several servers the waiter keeps its place until it has its
  -- majority (then it leaves every line): a grant here that is undone must
  -- not let the next waiter overtake it on this server alone.
  if not fair or waiter == '' or (ticket or '') ~= '' then return end
  drop(waiter)
  moved()
end
-- Tells of a hold taken or re-entered by the caller.
local function told(kind, holder, fence, count, lease)
  local e = {holder = hold_id(holder), host = host, pid = pid, cmd = cmd, mode = mode, limit = limit,
             fence = string.format('%d', fence), count = count, ttl_ms = lease}
  if kind == 'acquired' and note ~= '' then e.note = note end
  event(kind, e)
end
-- A waiter whose wait is over without the lock leaves the line, on every
-- server, and is told as having left for `reason`.
local function leave_line(reason)
  if not fair or waiter == '' then return end
  local v = entry_of_waiter(waiter)
  if v then
    waiter_left(waiter, v, reason)
    drop(waiter)
    moved()
  end
end
-- Suspended: nobody new takes the lock, and a waiter in line leaves it.
if suspended and reenter == '' then
  leave_line('suspended')
  return suspended
end
-- The first holder of a semaphore or shared lock, named in a busy answer.
local holding = nil
if multi then
  local list = holders()
  local first = nil
  local soonest = nil
  local oldest = nil
  for _, v in ipairs(list) do
    if reenter ~= '' and v.token == reenter then
      if multi == 'shared' and mode ~= 'shared' then return {'upgrade', multi, ''} end
      if multi == 'semaphore' and (mode ~= 'semaphore' or h[7] ~= limit) then
        return {'mismatch', multi, h[7] or ''}
      end
      local fence = tonumber(v.fence)
      if not usable_fence(fence) then
        return fence_refused('the fence of this hold of ' .. KEYS[1], v.fence,
                             not_a_fence .. ': it cannot be re-entered; redlock break frees it')
      end
      v.count = v.count + 1
      lengthen(v, ttl)
      v.token = nil
      redis.call('HSET', KEYS[1], 'h:' .. reenter, cjson.encode(v))
      index_sync(keep_alive(list))
      told('reentered', reenter, fence, v.count, v.expiry - now)
      return {'reentered', reenter, fence, v.count, v.expiry - now}
    end
    first = first or v
    if not soonest or v.expiry - now < soonest then soonest = v.expiry - now end
    if v.since and (not oldest or v.since < oldest) then oldest = v.since end
  end
  if #list > 0 then
    holding = {first.host, tostring(first.pid), first.cmd or '', #list, '', oldest}
    if mode ~= multi or (multi == 'semaphore' and h[7] ~= limit) then
      if multi == 'shared' and mode == 'exclusive' then return busy(soonest, holding) end
      return {'mismatch', multi, h[7] or ''}
    end
    if multi == 'semaphore' and #list >= tonumber(h[7]) then return busy(soonest, holding) end
  else
    redis.call('DEL', KEYS[1])
    t = 'none'
  end
elseif t == 'hash' then
  -- A semaphore's --limit disagrees with a plain lock, its holder's token or not.
  if mode == 'semaphore' then return {'mismatch', 'exclusive', '1'} end
  if reenter ~= '' and h[1] == reenter then
    local fence = tonumber(h[3])
    if not usable_fence(fence) then
      return fence_refused('the fence of the lock ' .. KEYS[1], h[3],
                           not_a_fence .. ': it cannot be re-entered; redlock break frees it')
    end
    local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
    local since = tonumber(h[10]) or now
    local lease = extend(math.max(ttl, since + hold - now))
    index_sync(lease)
    told('reentered', h[1], fence, count, lease)
    return {'reentered', h[1], fence, count, lease}
  end
  local kept = ''
  if h[1] == '' then kept = 'kept' end
  return busy(redis.call('PTTL', KEYS[1]), {h[4] or '', h[5] or '', h[9] or '', 1, kept, tonumber(h[10])})
end
-- A token to re-enter that holds nothing here is a newcomer.
if suspended then
  leave_line('suspended')
  return suspended
end
if fair then
  -- Over several servers a waiter is in every line on every try, even where
  -- the lock is free: a grant here that the others outvote and that is
  -- undone leaves it in its place.
  if waiter ~= '' and (ticket or '') ~= '' and not full then enter() end
  local st = lock_state()
  local soonest = 0
  if st.count > 0 then soonest = redis.call('PTTL', KEYS[1]) end
  -- Where the caller stands: its entry's ticket here, else (a Redlock
  -- waiter whose entry here went: its grant on this server was undone) the
  -- ticket it keeps; a caller with neither is behind everyone.
  local mine = nil
  if waiter ~= '' then mine = tonumber(redis.call('ZSCORE', line_key, waiter)) or settled end
  local function ahead_of_me(w)
    if w.id == waiter then return false end
    return mine == nil or w.ticket < mine or (w.ticket == mine and w.id < waiter)
  end
  local blocked = false
  local complete
  if mode == 'shared' then
    -- Readers in line go together: only a writer waiting ahead stops one.
    complete = walk(writers_key, function(w)
      blocked = ahead_of_me(w)
      return false
    end, 1)
  else
    -- Free (or with room): it is this caller's turn only if everyone ahead
    -- of it in line would be let in too.
    complete = walk(line_key, function(w)
      if not ahead_of_me(w) then return false end
      if not admits(st, w.mode, w.limit) then
        blocked = true
        return false
      end
      admit(st, w.mode, w.limit)
      return true
    end, k_wake)
  end
  -- A walk cut short by its bounds (a head of many dead entries, pruned by
  -- the calls to come) does not know: the caller waits its turn.
  if blocked or not complete or not admits(st, mode, limit) then return busy(soonest, holding) end
end
-- A ledger that is not redlock's is never written, nor is the lock taken
-- with a run it could not record: checked where the lock would be taken,
-- not on every try of a waiter. One that finds it leaves the line, on
-- every server (over several, it entered the line before its turn came).
if ledgered then
  local bad = ledger_bad()
  if bad then
    leave_line('left')
    return {'foreign', bad .. ' where its run ledger (' .. KEYS[7] .. ') belongs'}
  end
end
-- The last ok run ended within the skip window: this period's run is done.
if skip_ok_ms > 0 then
  local ok = ledger_last_ok()
  if ok and (tonumber(ok.end_ms) or 0) + skip_ok_ms > now then
    dequeue()
    return {'skipped', ok.host or '', ok.pid or '', ok.end_ms, string.format('%d', now)}
  end
end
local last = 0
if counter then
  -- Refused before anything is written: a counter redlock cannot increase
  -- exactly would hand out a fence that is not larger than the last one.
  last = tonumber(counter)
  if not last or (last ~= 0 and not usable_fence(last)) or last >= k_max_fence then
    return fence_refused('the fence counter ' .. KEYS[2], counter,
                         'which redlock cannot increase exactly (a whole number from 0 to 9007199254740990): ' ..
                         'redlock did not write it; delete it only if you know no holder relies on its fences')
  end
end
local fence = math.max(last + 1, clock[1] * 1000000 + clock[2])
local fence_text = string.format('%d', fence)
-- A new hold's run begins: the runs before it that hold nothing now (not
-- in `live`, the run ids of the holders) were abandoned, and are named.
local function started(reply, live)
  if history ~= 'run' then return reply end
  local gone = ledger_abandon(live, mode ~= 'exclusive')
  ledger_start(hold_id(token), host, pid, cmd, fence_text)
  if gone then
    reply[#reply + 1] = gone.host or ''
    reply[#reply + 1] = gone.pid or ''
    reply[#reply + 1] = gone.start_ms or ''
  end
  return reply
end
redis.call('SET', KEYS[2], fence_text)
local since = string.format('%d', now)
if mode == 'exclusive' then
  if t == 'none' then
    redis.call('HSET', KEYS[1], 'schema', k_schema, 'token', token, 'count', 1, 'fence', fence_text,
               'host', host, 'pid', pid, 'cmd', cmd, 'since_ms', since, 'ttl_ms', ttl_ms)
    if note ~= '' then redis.call('HSET', KEYS[1], 'note', note) end
    redis.call('PEXPIRE', KEYS[1], math.max(ttl, hold))
    dequeue()
    index_sync(math.max(ttl, hold))
    told('acquired', token, fence, 1, math.max(ttl, hold))
    return started({'acquired', token, fence, 1, math.max(ttl, hold)}, {})
  end
end
local holder = {count = 1, fence = fence_text, expiry = now + ttl, since = now, ttl = ttl,
                host = host, pid = tonumber(pid), cmd = cmd}
if note ~= '' then holder.note = note end
redis.call('HSET', KEYS[1], 'schema', k_schema, 'mode', mode, 'limit', limit,
           'h:' .. token, cjson.encode(holder))
local pttl = redis.call('PTTL', KEYS[1])
if pttl < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
dequeue()
index_sync(math.max(pttl, ttl))
told('acquired', token, fence, 1, ttl)
local live = {}
for _, v in ipairs(holders()) do live[hold_id(v.token)] = true end
return started({'acquired', token, fence, 1, ttl}, live)
