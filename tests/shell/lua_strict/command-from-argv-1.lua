-- A command whose name is not a string literal: a proxy that reads the
-- command to route or check it refuses the call (Redisson #5596).
local hash = KEYS[1]
return redis.call(unpack(ARGV), hash)
