-- luacheck settings for the lock's Lua scripts (src/lock/lua/). Redis runs
-- them in Lua 5.1 with these libraries as globals; a script defines no
-- globals of its own (Redis refuses them).
std = "lua51"
read_globals = { "redis", "KEYS", "ARGV", "cjson", "cmsgpack", "bit", "struct" }
max_line_length = 120

-- A script is checked file by file, but Redis sees it with its includes in
-- place (src/lock/lua/embed.cmake): the top-level locals of the files it
-- pulls in (--@include, followed through includes of includes) are its
-- globals here, and an include's own top-level locals are used elsewhere.
-- Both are read from the files, so the list never falls behind.
-- luacheck finds this file by walking up from where it runs; so does this.
local here = ""
for _ = 1, 10 do
  local found = io.open(here .. "src/lock/lua/embed.cmake")
  if found then
    found:close()
    break
  end
  here = here .. "../"
end
local lua_dir = "src/lock/lua/"

local function read(path)
  local f = io.open(here .. path)
  if not f then
    return ""
  end
  local text = f:read("*a")
  f:close()
  return text
end

-- The includes a file names, and the top-level locals it defines.
local function scan(path)
  local text = read(path)
  local includes, names = {}, {}
  for line in text:gmatch("[^\n]*") do
    local include = line:match("^%-%-@include ([%w_]+%.lua)$")
    local name = line:match("^local function ([%w_]+)") or line:match("^local ([%w_]+)")
    if include then
      includes[#includes + 1] = include
    elseif name then
      names[#names + 1] = name
    end
  end
  return includes, names
end

-- Every name the includes of `path` give it, followed through nested includes.
local function given(path, out, seen)
  local includes = scan(path)
  for _, include in ipairs(includes) do
    if not seen[include] then
      seen[include] = true
      given(lua_dir .. "includes/" .. include, out, seen)
      local _, names = scan(lua_dir .. "includes/" .. include)
      for _, name in ipairs(names) do
        out[#out + 1] = name
      end
    end
  end
  return out
end

local function lua_files(dir)
  local out = {}
  for name in require("lfs").dir(here .. dir) do
    if name:match("%.lua$") then
      out[#out + 1] = dir .. name
    end
  end
  return out
end

for _, path in ipairs(lua_files(lua_dir)) do
  files[path] = { globals = given(path, {}, {}) }
end
for _, path in ipairs(lua_files(lua_dir .. "includes/")) do
  local _, names = scan(path)
  local unused = {}
  for _, name in ipairs(names) do
    unused[#unused + 1] = "[23][13]1/" .. name -- unused, never read, or its value never read
  end
  files[path] = { globals = given(path, {}, {}), ignore = unused }
end
