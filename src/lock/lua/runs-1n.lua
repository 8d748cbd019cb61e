-- runs: the last run and the last ok run of some names, from their run
-- ledgers (includes/ledger.lua), for status. Many names a call, as
-- inspect-2n.lua reads many locks; it reads and never writes.
-- Only each ledger's newest k_scan entries are read, so that a status of
-- many names stays cheap: an ok run older than those is not named here
-- (overdue and history read further).
--
-- KEYS  one per name, in order: its run ledger, <prefix>{NAME}:runs
--
-- No ARGV.
--
-- Replies {'runs', ledger, ...}: for each name, in order, {now_ms, last,
-- last_ok}: the server's clock in milliseconds, then the newest run (the
-- one that started last) and the newest ok run, each {field, value, ...}
-- as history-2.lua gives them, or {} when there is none. A ledger that is
-- absent or not redlock's has none.

local k_scan = 16
local k_schema = '@SCHEMA@'

local clock = redis.call('TIME')
local now_ms = string.format('%d', clock[1] * 1000 + math.floor(clock[2] / 1000))
local out = {'runs'}
for at = 1, #KEYS do
  local last, ok = {}, {}
  if redis.call('TYPE', KEYS[at])['ok'] == 'stream' then
    local newest_start = nil
    for _, e in ipairs(redis.call('XREVRANGE', KEYS[at], '+', '-', 'COUNT', k_scan)) do
      local f = e[2]
      if f[1] == 'schema' and f[2] == k_schema then
        local fields = {'id', e[1]}
        local v = {}
        for i = 3, #f - 1, 2 do
          fields[#fields + 1] = f[i]
          fields[#fields + 1] = f[i + 1]
          v[f[i]] = f[i + 1]
        end
        local start = tonumber(v.start_ms) or 0
        if not newest_start or start > newest_start then
          newest_start = start
          last = fields
        end
        if #ok == 0 and v.outcome == 'ok' then ok = fields end
      end
    end
  end
  out[#out + 1] = {now_ms, last, ok}
end
return out
