-- leave: a waiter leaves the line (its --wait ran out, or it was stopped).
--
-- Atomic so that the waiters it was holding up are woken exactly when it
-- goes. Its leaving is told as 'left' on the lock's events channel
-- (includes/events.lua, through line.lua).
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- KEYS[2]  its fence counter (not read)
-- KEYS[3..6]  its line of waiters (includes/line.lua)
--
-- ARGV[1]  waiter   the leaving waiter's id
-- ARGV[2]  channel  the release channel, <prefix>{NAME}:released
--
-- Replies:
--   {'left'}              (also when the waiter was not in line)
--   {'foreign', what}     the lock's key or the line's is not redlock's
--@include check_key.lua
--@include line.lua

local waiter = ARGV[1]
-- ARGV[2], the release channel, is KEYS[1] .. ':released' (line.lua's).

local bad = line_bad()
if bad then return {'foreign', bad} end
local was = redis.call('ZSCORE', line_key, waiter)
if was then waiter_left(waiter, entry_of_waiter(waiter), 'left') end
drop(waiter)
prune()
-- Whoever it held up can go now.
if was and #heads(lock_state()) > 0 then wake(lock_state()) end
moved()
return {'left'}
