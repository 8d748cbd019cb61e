-- check_key: the prologue of every script that touches a lock. It
-- classifies the key at KEYS[1] and reads the server's clock, and returns
-- {'foreign', what} at once for a key that is not redlock's.
-- - t == 'none': free.
-- - a hash that carries redlock's schema marker (field 'schema' =
--   k_schema, REDLOCK_LOCK_SCHEMA in CMakeLists.txt; no other writer sets it
--   by accident, and a redlock of another layout has another: README.md):
--   - with token and count fields: a plain (exclusive) lock; h holds token,
--     count, fence, host, pid (then mode, limit, schema, cmd, since_ms);
--   - with a mode field: a semaphore ('semaphore', with its limit) or the
--     readers of a readers/writer lock ('shared'), named by multi; every
--     holder is a field 'h:<token>' holding JSON {count, fence, expiry,
--     since, ttl, host, pid, cmd} with its own expiry in server
--     milliseconds (the fence as a string: cjson keeps only 14 digits of a
--     number), and the key lives as long as the longest-lived holder.
-- Anything else is foreign and is never touched.
-- clock is the server's TIME, now the same in milliseconds.
-- - holders(): a semaphore's or readers' live holders, each with its
--   token (dead ones are removed from the hash).
-- - entry_of(list, token): the holder in list with that token, or nil.
-- - keep_alive(list): the key lives as long as the longest-lived holder in
--   list, and goes with the last one; returns its PTTL (0: gone).
-- - extend(ttl): a plain lock's lease made at least ttl ms (never shorter);
--   the lease it has now.
-- - lengthen(v, ttl): holder v's expiry made at least ttl ms from now.
-- - none_exist(keys): whether none of these keys exists, by one EXISTS where
--   the caller would otherwise ask each key's TYPE; nil when this user may
--   not call EXISTS (the least ACL of redlock 0.2 did not name it): the
--   caller then asks each key.
local k_schema = '@SCHEMA@'
local t = redis.call('TYPE', KEYS[1])['ok']
local h = nil
local multi = nil
if t == 'hash' then
  h = redis.call('HMGET', KEYS[1], 'token', 'count', 'fence', 'host', 'pid', 'mode', 'limit', 'schema', 'cmd',
                 'since_ms')
  if h[8] ~= k_schema then
    -- A redlock of another layout (an older or newer version) marks its own.
    if h[8] and string.sub(h[8], 1, 8) == 'redlock/' then return {'foreign', 'hash of redlock layout ' .. h[8]} end
    return {'foreign', 'hash without redlock\'s schema field'}
  end
  if h[6] == 'semaphore' or h[6] == 'shared' then multi = h[6]
  elseif not h[1] or not h[2] then return {'foreign', 'hash without redlock fields'} end
elseif t ~= 'none' then
  return {'foreign', t}
end
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local function holders()
  local out = {}
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'h:' then
      local v = cjson.decode(all[i + 1])
      if v.expiry <= now then redis.call('HDEL', KEYS[1], all[i])
      else v.token = string.sub(all[i], 3); out[#out + 1] = v end
    end
  end
  return out
end
local function entry_of(list, token)
  for _, v in ipairs(list) do if v.token == token then return v end end
  return nil
end
local function keep_alive(list)
  local last = now
  for _, v in ipairs(list) do if v.expiry > last then last = v.expiry end end
  if last > now then
    redis.call('PEXPIRE', KEYS[1], last - now)
    return last - now
  end
  redis.call('DEL', KEYS[1])
  return 0
end
local function extend(ttl)
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl >= ttl then return pttl end
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('HSET', KEYS[1], 'ttl_ms', string.format('%d', ttl))
  return ttl
end
local function lengthen(v, ttl)
  if v.expiry < now + ttl then v.expiry = now + ttl; v.ttl = ttl end
end
local function none_exist(keys)
  if redis.acl_check_cmd and not redis.acl_check_cmd('EXISTS', unpack(keys)) then return nil end
  local n = redis.pcall('EXISTS', unpack(keys))
  if type(n) ~= 'number' then return nil end
  return n == 0
end
