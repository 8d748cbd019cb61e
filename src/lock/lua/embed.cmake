# Builds the C++ headers that carry the lock's Lua scripts into redlock (and
# script_names.hpp beside it, ScriptName, made from the same list):
#   cmake -DLUA_DIR=src/lock/lua -DSCHEMA=redlock/1 -DOUT=<header> -P embed.cmake
# (CMakeLists.txt runs it whenever a .lua file or this file changes).
#
# Each script is LUA_DIR/<name>-<keys>.lua, or LUA_DIR/<name>-<keys>n.lua for
# one that takes <keys> keys for each of any number of locks (status reads
# many locks a call). What a file sends to Redis is the
# file without its header (the comment lines it opens with), with every
# `--@include <file>` line replaced by LUA_DIR/includes/<file>, itself
# without its header. An include is pulled in once per script: a second
# `--@include` of it (an include's own, for what it needs) is dropped, so
# an include may name what it builds on. '@SCHEMA@' in a script becomes
# SCHEMA, the marker of the lock's layout. See README.md beside this file.
#
# The text is handled with string(FIND) and string(SUBSTRING), never as a
# CMake list: Lua is full of semicolons and brackets.

cmake_minimum_required(VERSION 3.20)

foreach(var LUA_DIR SCHEMA OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed.cmake: -D${var}=... is required")
  endif()
endforeach()

# `text` without its header: the comment lines at its top, up to the first
# line that is code, blank or an --@ directive.
function(strip_header text out)
  while(TRUE)
    string(SUBSTRING "${text}" 0 3 start)
    if(NOT start MATCHES "^--" OR start STREQUAL "--@")
      break()
    endif()
    string(FIND "${text}" "\n" nl)
    if(nl EQUAL -1)
      set(text "")
      break()
    endif()
    math(EXPR nl "${nl} + 1")
    string(SUBSTRING "${text}" ${nl} -1 text)
  endwhile()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The text of `file` as sent: header stripped, includes expanded. The
# includes already pulled in are in the global property embed_included.
function(expand file out)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "embed.cmake: ${file} does not exist")
  endif()
  file(READ "${file}" text)
  strip_header("${text}" text)
  set(done "")
  while(TRUE)
    string(FIND "${text}" "--@" at)
    if(at EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" 0 ${at} before)
    string(SUBSTRING "${text}" ${at} -1 rest)
    string(FIND "${rest}" "\n" nl)
    if(nl EQUAL -1)
      message(FATAL_ERROR "embed.cmake: ${file}: a directive must end with a newline")
    endif()
    string(SUBSTRING "${rest}" 0 ${nl} line)
    math(EXPR nl "${nl} + 1")
    string(SUBSTRING "${rest}" ${nl} -1 rest)
    if(NOT (before STREQUAL "" OR before MATCHES "\n$"))
      message(FATAL_ERROR "embed.cmake: ${file}: '${line}' must start its line")
    endif()
    set(inserted "")
    if(line MATCHES "^--@optional-keys ([0-9]+)$")
      # How many of the script's last KEYS it can do without (see below):
      # said by the script itself, never by an include.
      if(NOT file STREQUAL "${LUA_DIR}/${script}")
        message(FATAL_ERROR "embed.cmake: ${file}: only a script says --@optional-keys, not an include")
      endif()
      set_property(GLOBAL PROPERTY embed_optional "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^--@include ([a-z0-9_]+\\.lua)$")
      set(name "${CMAKE_MATCH_1}")
      get_property(included GLOBAL PROPERTY embed_included)
      if(NOT "|${name}|" IN_LIST included)
        set_property(GLOBAL APPEND PROPERTY embed_included "|${name}|")
        expand("${LUA_DIR}/includes/${name}" inserted)
      endif()
    else()
      message(FATAL_ERROR "embed.cmake: ${file}: '${line}' is neither '--@include <file>.lua' nor '--@optional-keys N'")
    endif()
    string(APPEND done "${before}${inserted}")
    set(text "${rest}")
  endwhile()
  set(${out} "${done}${text}" PARENT_SCOPE)
endfunction()

file(GLOB scripts RELATIVE "${LUA_DIR}" "${LUA_DIR}/*.lua")
list(SORT scripts)
if(NOT scripts)
  message(FATAL_ERROR "embed.cmake: no scripts in ${LUA_DIR}")
endif()

set(header "// Made by src/lock/lua/embed.cmake from src/lock/lua/*.lua when redlock is\n")
string(APPEND header "// built: edit the .lua files, not this.\n")
string(APPEND header "#pragma once\n\n#include <string_view>\n\nnamespace redlock::lock::lua {\n\n")
string(APPEND header "// A script as it is sent to Redis: its name (its file's, without the key\n")
string(APPEND header "// count), how many of its arguments are KEYS (with per_lock, how many for\n")
string(APPEND header "// each of the locks it is given), how many of its last KEYS it can do\n")
string(APPEND header "// without (its --@optional-keys: the indexes, which a Redis Cluster or a\n")
string(APPEND header "// user's ACL may refuse beside a lock's keys), and its text.\n")
string(APPEND header "struct Embedded {\n  std::string_view name;\n  int keys;\n  bool per_lock;\n  int optional_keys;\n  std::string_view text;\n};\n")
# The one table of scripts, in file order: ScriptName (names.hpp) follows it.
set(table "")
set(enum "")

foreach(script ${scripts})
  if(NOT script MATCHES "^([a-z][a-z-]*)-([0-9]+)(n?)\\.lua$")
    message(FATAL_ERROR "embed.cmake: ${script} is not named <name>-<number of keys>.lua or <name>-<keys per lock>n.lua")
  endif()
  set(name "${CMAKE_MATCH_1}")
  set(keys "${CMAKE_MATCH_2}")
  set(per_lock false)
  if(CMAKE_MATCH_3 STREQUAL "n")
    set(per_lock true)
  endif()
  set_property(GLOBAL PROPERTY embed_included "")
  set_property(GLOBAL PROPERTY embed_optional 0)
  expand("${LUA_DIR}/${script}" text)
  get_property(optional GLOBAL PROPERTY embed_optional)
  if(optional GREATER keys)
    message(FATAL_ERROR "embed.cmake: ${script} says --@optional-keys ${optional}, more than its ${keys} keys")
  endif()

  # The key count in the name is the one the script reads: its highest KEYS[n].
  # A script of many locks reads them by their place in each lock's group,
  # never by a fixed number.
  string(REGEX MATCHALL "KEYS\\[[0-9]+\\]" used "${text}")
  set(highest 0)
  foreach(k ${used})
    string(REGEX REPLACE "KEYS\\[([0-9]+)\\]" "\\1" n "${k}")
    if(n GREATER highest)
      set(highest ${n})
    endif()
  endforeach()
  if(per_lock AND NOT highest EQUAL 0)
    message(FATAL_ERROR "embed.cmake: ${script} takes its keys per lock, but reads KEYS[${highest}]")
  elseif(NOT per_lock AND NOT highest EQUAL keys)
    message(FATAL_ERROR "embed.cmake: ${script} reads KEYS up to KEYS[${highest}], its name says ${keys}")
  endif()
  string(REPLACE "@SCHEMA@" "${SCHEMA}" text "${text}")
  string(REGEX MATCH "@[A-Z_]+@" unknown "${text}")
  if(unknown)
    message(FATAL_ERROR "embed.cmake: ${script} has ${unknown}, which embed.cmake does not fill in")
  endif()
  string(FIND "${text}" ")lua\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "embed.cmake: ${script} contains ')lua\"', which would end its C++ raw string")
  endif()

  string(REPLACE "-" "_" id "${name}")
  string(APPEND header "\n// ${script}\n")
  string(APPEND header "inline constexpr Embedded k_${id}{\"${name}\", ${keys}, ${per_lock}, ${optional}, R\"lua(${text})lua\"};\n")
  string(APPEND table "    &k_${id},\n")
  string(APPEND enum "  k_${id},\n")
endforeach()
string(APPEND header "\n// Every script, in the order of ScriptName.\n")
string(APPEND header "inline constexpr const Embedded* k_all[] = {\n${table}};\n")
string(APPEND header "\n}  // namespace redlock::lock::lua\n")

# ScriptName, one name a script file, in the table's order.
set(names "// Made by src/lock/lua/embed.cmake from src/lock/lua/*.lua when redlock is\n")
string(APPEND names "// built: edit the .lua files, not this.\n#pragma once\n\nnamespace redlock::lock {\n\n")
string(APPEND names "// Every read-check-write on a lock is one of these scripts: Redis runs a\n")
string(APPEND names "// script atomically, so no other client can act between our check of the\n")
string(APPEND names "// token and our write. Each is a file in src/lock/lua/ whose header says\n")
string(APPEND names "// what it guarantees, its KEYS, its ARGV and its replies.\n")
string(APPEND names "enum class ScriptName {\n${enum}};\n\n}  // namespace redlock::lock\n")
get_filename_component(out_dir "${OUT}" DIRECTORY)
file(WRITE "${out_dir}/script_names.hpp.tmp" "${names}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${out_dir}/script_names.hpp.tmp"
                        "${out_dir}/script_names.hpp")
file(REMOVE "${out_dir}/script_names.hpp.tmp")

# Written only when it changes, so that nothing recompiles for nothing.
file(WRITE "${OUT}.tmp" "${header}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
