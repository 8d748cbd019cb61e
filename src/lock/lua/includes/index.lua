-- index: the held locks under the prefix, so that status lists them
-- without scanning a keyspace it may share with millions of other keys.
-- One sorted set, <prefix>index: the key of every held lock scored by the
-- end of its lease (server milliseconds), and the schema marker, member
-- k_schema with score +inf, without which the key is not redlock's and is
-- left alone. It lies in no lock's hash slot: the caller gives it as the
-- script's last key where one key may be named beside the lock's (one
-- server, Sentinel, Redlock) and leaves it out where it may not (a Redis
-- Cluster, or a user whose ACL does not cover it); then nothing here does
-- anything, and status finds the locks by SCAN.
-- It never expires, and never grows past the held locks and those that
-- expired since the last write: each write prunes up to k_index_prune
-- entries whose lease ended, the longest dead first (status skips the rest:
-- it reads each lock it lists). A lock given back or broken leaves at once.
-- The index only informs: every call on it goes through redis.pcall, and a
-- refusal there never stops a lock's script halfway.
-- - index_at(key): the index is `key` (KEYS[n] of the script: nil when the
--   caller left it out).
-- - index_sync(pttl): the entry of the lock at KEYS[1] made to match the
--   lock: the end of its lease while it exists, no entry once it is gone.
--   pttl is the lock's PTTL when the caller has just set it (0: deleted),
--   nil to have it read.
-- It builds on check_key (now, k_schema).
--@include check_key.lua
local k_index_prune = 8
local index_key = nil

local function index_at(key)
  index_key = key
end

-- Whether the index may be written: a sorted set with the marker, or, with
-- `make`, absent (made now, with the marker).
-- The marker's score answers at once for an index in use (a WRONGTYPE
-- error for a key of another type); only without it is the type asked.
local function index_ready(make)
  local marker = redis.pcall('ZSCORE', index_key, k_schema)
  if type(marker) == 'string' then return true end
  if marker ~= false then return false end
  local kind = redis.pcall('TYPE', index_key)
  if type(kind) ~= 'table' or kind.ok ~= 'none' then return false end
  return make and type(redis.pcall('ZADD', index_key, '+inf', k_schema)) == 'number'
end

local function index_sync(pttl)
  if not index_key then return end
  pttl = pttl or redis.call('PTTL', KEYS[1])
  if not index_ready(pttl > 0) then return end
  if pttl <= 0 then
    redis.pcall('ZREM', index_key, KEYS[1])
    return
  end
  redis.pcall('ZADD', index_key, string.format('%d', now + pttl), KEYS[1])
  local dead = redis.pcall('ZRANGEBYSCORE', index_key, '-inf', now, 'LIMIT', 0, k_index_prune)
  if type(dead) == 'table' and #dead > 0 then redis.pcall('ZREM', index_key, unpack(dead)) end
end
