-- A key taken from ARGV instead of KEYS.
redis.call('EXISTS', KEYS[1])
return redis.call('DEL', ARGV[1])
