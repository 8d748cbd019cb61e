-- events: what happens to a lock, told to `redlock events` on the lock's
-- events channel, <prefix>{NAME}:events (KEYS[1] .. ':events'), one JSON
-- object a message: {"event": kind, "ms": the server's clock in ms, and
-- what the kind has}. Numbers that may need more than the 14 digits cjson
-- writes (fences, times) go as strings of digits. A new kind is one call
-- of event() where it happens (and its line in src/events/events.cpp).
-- Nobody acts on these messages (waiters listen on ':released', which is
-- untouched): a PUBLISH the user's ACL refuses is ignored, so telling
-- never stops a script halfway. Each message is one PUBLISH, which costs
-- next to nothing without subscribers (on a Redis Cluster, one message on
-- the cluster bus to each node); nothing is told per heartbeat or renewal.
-- - event(kind, fields): publishes it.
-- A holder is named by its hold_id (includes/hold_id.lua).
--@include check_key.lua
--@include hold_id.lua
local events_channel = KEYS[1] .. ':events'

local function event(kind, fields)
  fields.event = kind
  fields.ms = string.format('%d', now)
  redis.pcall('PUBLISH', events_channel, cjson.encode(fields))
end

