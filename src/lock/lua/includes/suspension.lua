-- suspension: whether the name of the lock at KEYS[1] is suspended
-- (redlock suspend), read from its marker <prefix>{NAME}:suspended: a hash
-- {schema, reason, host, pid, since_ms, until_ms} (until_ms -1: until
-- resumed) whose PEXPIRE ends a suspension for a while by itself. A marker
-- that is not redlock's is foreign and never touched.
-- - suspension_at(key): the marker is `key`.
-- - suspension(): nil when the name is not suspended; else the reply
--   {'suspended', reason, host, pid, since_ms, until_ms, now_ms}, or
--   {'foreign', what} for a marker that is not redlock's.
-- It builds on check_key (now, k_schema).
--@include check_key.lua
local suspension_key = nil

local function suspension_at(key)
  suspension_key = key
end

local function suspension()
  local kind = redis.call('TYPE', suspension_key)['ok']
  if kind == 'none' then return nil end
  local s = nil
  if kind == 'hash' then
    s = redis.call('HMGET', suspension_key, 'schema', 'reason', 'host', 'pid', 'since_ms', 'until_ms')
  end
  if not s or s[1] ~= k_schema then
    return {'foreign', kind .. ' where the suspension of ' .. KEYS[1] .. ' (' .. suspension_key .. ') belongs'}
  end
  return {'suspended', s[2] or '', s[3] or '', s[4] or '', s[5] or '0', s[6] or '-1', string.format('%d', now)}
end
