-- hold_id: the public name of a hold, made from its token. The events
-- name a holder by it, and the ledger a run (a run is one hold of exec).
-- - hold_id(token): the first 16 hex digits of the token's SHA-1 ('' for
--   ''): it tells holds apart, and the servers of a Redlock agree on it,
--   without telling anyone the token (lock::hold_id in C++, the same).
local function hold_id(token)
  if token == nil or token == '' then return '' end
  return string.sub(redis.sha1hex(token), 1, 16)
end
