-- start-run: begin an exec's run in the ledger of a name it holds already.
--
-- exec of several names takes them one at a time, waiting for each in
-- turn, and its acquires only check the ledgers: the runs begin once every
-- name is held, just before the command starts, so that an exec that dies
-- while it waits (a reboot during a long --wait) leaves no run of a command
-- that never ran. One script so that the hold is checked and the run
-- begun in one step: a run never begins here for a token that no longer
-- holds the lock (a Redlock server that never granted it records nothing,
-- as the release then records nothing there). As an acquire that starts a
-- run does, it names the runs before it that hold nothing now (their
-- redlock died and their lock expired: abandoned). Begun once: a second
-- call for the same hold finds its run running and writes nothing.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its run ledger, <prefix>{NAME}:runs (includes/ledger.lua)
-- KEYS[3]  the index of names with a ledger, <prefix>ledgers
--          (includes/ledger.lua; left out on a Redis Cluster)
--
-- ARGV[1]  token   the holder's token
-- ARGV[2]  host    the run as exec knows it: host,
-- ARGV[3]  pid     process id
-- ARGV[4]  cmd     and command
--
-- Replies:
--   {'started'}, and when a run before it was abandoned: that run's host,
--    pid and start (server ms)
--   {'notheld'}           the token holds no hold of the lock here
--   {'foreign', what}     the lock's key or its ledger is not redlock's:
--                         nothing written
--@optional-keys 1
--@include check_key.lua
--@include ledger.lua

local token = ARGV[1]
ledger_at(KEYS[2], KEYS[3])

local live = {}
local fence = nil
if multi then
  local list = holders()
  for _, v in ipairs(list) do
    live[hold_id(v.token)] = true
    if v.token == token then fence = v.fence end
  end
  -- The dead holders holders() took out may have been the last.
  if not fence then keep_alive(list) end
elseif t == 'hash' and h[1] == token then
  live[hold_id(token)] = true
  fence = h[3]
end
if not fence then return {'notheld'} end
local bad = ledger_bad()
if bad then return {'foreign', bad .. ' where its run ledger (' .. KEYS[2] .. ') belongs'} end
local run = hold_id(token)
for _, v in ipairs(ledger_newest(k_ledger_scan)) do
  if v.run == run and v.outcome == 'running' then return {'started'} end
end
local gone = ledger_abandon(live, multi ~= nil)
ledger_start(run, ARGV[2], ARGV[3], ARGV[4], fence)
if gone then return {'started', gone.host or '', gone.pid or '', gone.start_ms or ''} end
return {'started'}
