-- A key written in the script as a literal.
local held = redis.call('GET', KEYS[1])
return { held, redis.call('GET', 'redlock:settings') }
