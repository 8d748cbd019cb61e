-- A key made inside the script by concatenation: a server that checks the
-- keys against KEYS (Dragonfly) refuses it.
local lock = KEYS[1]
return redis.call('GET', lock .. ':fence')
