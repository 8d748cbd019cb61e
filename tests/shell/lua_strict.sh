#!/usr/bin/env bash
# scripts/lua-strict catches each kind of script strict servers refuse: run
# on each fixture of tests/shell/lua_strict/ alone (copied into a folder of
# its own, where it is the only script), it fails and names the file, the
# line and the rule broken; run on the lock's scripts, it passes.
# Usage: lua_strict.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$2
source "$src/tests/shell/lib/check.bash"
command -v lua5.1 >/dev/null || { echo "FAIL: lua5.1 is not installed (scripts/setup installs it)" >&2; exit 1; }

# Each fixture, the line of its finding and words of the rule it breaks.
fixtures=(
  "command-from-argv-1.lua 4 must name its command as a string literal"
  "key-concatenated-1.lua 4 is a concatenation: pass every key in KEYS"
  "key-variable-concatenated-1.lua 2 passed as a key, is a concatenation"
  "key-from-argv-1.lua 3 is taken from ARGV: pass every key in KEYS"
  "key-literal-1.lua 3 is a literal: pass every key in KEYS"
  "no-key-0.lua 1 a script takes at least one key"
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for row in "${fixtures[@]}"; do
  read -r file line words <<<"$row"
  [ -r "$src/tests/shell/lua_strict/$file" ] || { fail "no fixture $file"; continue; }
  dir=$work/${file%.lua}
  mkdir -p "$dir"
  cp "$src/tests/shell/lua_strict/$file" "$dir/"
  out=$("$src/scripts/lua-strict" "$dir" 2>&1) && status=0 || status=$?
  [ "$status" -eq 1 ] || fail "$file: lua-strict exited $status, not 1:"$'\n'"$out"
  grep -qF "$dir/$file:$line: " <<<"$out" || fail "$file: no finding at $file:$line:"$'\n'"$out"
  grep -qF "$words" <<<"$out" || fail "$file: the finding does not say '$words':"$'\n'"$out"
  n=$(grep -c "^$dir/$file:" <<<"$out")
  [ "$n" -eq 1 ] || fail "$file: $n findings, not 1 (a fixture breaks one rule):"$'\n'"$out"
done
# Every fixture here is in the table above.
for path in "$src"/tests/shell/lua_strict/*.lua; do
  file=${path##*/}
  printf '%s\n' "${fixtures[@]}" | grep -q "^$file " || fail "the fixture $file is not checked"
done

out=$("$src/scripts/lua-strict" "$src/src/lock/lua" 2>&1) || fail "lua-strict fails on src/lock/lua:"$'\n'"$out"
if ((failures)); then
  exit 1
fi
echo "lua-strict: ${#fixtures[@]} fixtures each caught; $out"
