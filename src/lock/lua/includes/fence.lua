-- fence: fences are whole numbers from 1 to 2^53 - 1 (k_max_fence in
-- layout.hpp). Lua's numbers are doubles, which skip integers past that: a
-- counter there (or one that is not a whole number) cannot be increased
-- exactly, and string.format('%d') of it is garbage.
-- - usable_fence(f): whether f is a fence.
-- - fence_refused(what, value, why): the error reply for a value that is not
--   (at most 40 bytes of it: a key may hold anything); not_a_fence is the
--   usual why.
local k_max_fence = 9007199254740991
local not_a_fence = 'not a fence redlock hands out (a whole number from 1 to 9007199254740991)'
local function usable_fence(f)
  return f ~= nil and f == math.floor(f) and f >= 1 and f <= k_max_fence
end
local function fence_refused(what, value, why)
  return redis.error_reply(what .. ' holds ' .. string.sub(tostring(value), 1, 40) .. ', ' .. why)
end
