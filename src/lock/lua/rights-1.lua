-- rights: which of the commands redlock sends, and its scripts run, the
-- calling user may not run on a lock's keys, without running any of them.
--
-- `redlock doctor` runs it with EVAL; it writes nothing, so it takes no
-- lock. redis.acl_check_cmd (Redis 7) checks a command, its keys and its
-- channels against the user's ACL as if the user had sent it; it needs no
-- right of its own, so a user with the least ACL redlock(1) gives can run
-- this, where ACL DRYRUN would need +acl. The names are only checked, never
-- read or written; it still takes the lock's hash as its one key, since
-- servers that refuse a script with no key exist (ElastiCache Serverless),
-- and on a Cluster it runs on the node of that key's slot.
--
-- KEYS[1]  the lock's hash, <prefix>{NAME}
-- ARGV[1]  its fence counter, <prefix>{NAME}:fence
-- ARGV[2]  its channel, <prefix>{NAME}:released
-- ARGV[3..6]  its line of waiters: line, beats, waiters, writers
-- ARGV[7]  its run ledger, <prefix>{NAME}:runs
-- ARGV[8]  the index of held locks, <prefix>index
--
-- Replies:
--   'unknown'                    the server cannot check (before Redis 7)
--   {need, command, name, ...}   each command refused: what needs it ('lock',
--                                'ledger', 'index' or 'scan'), the command and
--                                the key or channel it was checked on ('' for
--                                none); empty when nothing is refused

if not redis.acl_check_cmd then
  return 'unknown'
end
local lock, fence, channel = KEYS[1], ARGV[1], ARGV[2]
local line, beats, waiters, writers = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local runs, index = ARGV[7], ARGV[8]
local checks = {
  {'lock', 'EVALSHA', '0000000000000000000000000000000000000000', '1', lock},
  {'lock', 'EVAL', 'return 0', '1', lock},
  {'lock', 'TIME'},
  {'lock', 'TYPE', lock}, {'lock', 'HGET', lock, 'f'}, {'lock', 'HMGET', lock, 'f'}, {'lock', 'HGETALL', lock},
  {'lock', 'HSET', lock, 'f', 'v'}, {'lock', 'HDEL', lock, 'f'}, {'lock', 'HINCRBY', lock, 'f', '1'},
  {'lock', 'DEL', lock}, {'lock', 'PEXPIRE', lock, '1'}, {'lock', 'PTTL', lock},
  {'lock', 'GET', fence}, {'lock', 'SET', fence, '1'},
  {'lock', 'PUBLISH', channel, 'released'}, {'lock', 'SUBSCRIBE', channel}, {'lock', 'UNSUBSCRIBE', channel},
  {'lock', 'ZADD', line, '1', 'id'}, {'lock', 'ZREM', line, 'id'}, {'lock', 'ZRANGE', line, '0', '1'},
  {'lock', 'ZRANGEBYSCORE', beats, '0', '1'}, {'lock', 'ZRANK', line, 'id'}, {'lock', 'ZSCORE', beats, 'id'},
  {'lock', 'ZCOUNT', writers, '0', '1'}, {'lock', 'ZCARD', line},
  {'lock', 'HSET', waiters, 'id', 'v'}, {'lock', 'HDEL', waiters, 'id'}, {'lock', 'HGET', waiters, 'id'},
  {'ledger', 'XADD', runs, '*', 'f', 'v'}, {'ledger', 'XDEL', runs, '0-1'}, {'ledger', 'XREVRANGE', runs, '+', '-'},
  {'ledger', 'XLEN', runs}, {'ledger', 'DEL', runs}, {'ledger', 'PEXPIRE', runs, '1'},
  {'index', 'ZADD', index, '1', lock}, {'index', 'ZREM', index, lock}, {'index', 'ZSCAN', index, '0'},
  {'scan', 'SCAN', '0'},
}
local refused = {}
for _, c in ipairs(checks) do
  local ok, allowed = pcall(redis.acl_check_cmd, unpack(c, 2))
  if ok and not allowed then
    refused[#refused + 1] = c[1]
    refused[#refused + 1] = c[2]
    local keyed = c[2] ~= 'EVALSHA' and c[2] ~= 'EVAL' and c[2] ~= 'TIME' and c[2] ~= 'SCAN'
    refused[#refused + 1] = keyed and c[3] or ''
  end
end
return refused
