-- A key held in a variable that was assigned a concatenation.
local fence = KEYS[1] .. ':fence'
return redis.call('INCR', fence)
