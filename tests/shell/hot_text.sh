#!/usr/bin/env bash
# The code a call runs lies together at the start of the binary's text
# (packaging/hot.ld.in): the release builds have a .text.hot section, the
# profile's functions that are still in the binary are all inside it, and
# the profile still names most of the functions (a profile gone stale after
# a rename lays out nothing). Registered for the builds that link with it.
# Usage: hot_text.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
source "$src/tests/shell/lib/check.bash"
profile=$src/packaging/hot-functions.txt
refresh="refresh the profile: python3 bench/hot_functions.py --redlock build/redlock --out packaging/hot-functions.txt"

read -r start size < <(readelf -SW "$bin" | sed -n 's/.*\] \.text\.hot  *PROGBITS  *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\) .*/\1 \2/p')
if [ -z "${start:-}" ]; then
  fail "$bin has no .text.hot section: was it linked with generated/hot.ld?"
  exit 1
fi
start=$((16#$start)) end=$((16#$start + 16#$size))

# The profile's names against the binary's function symbols.
declare -A where
while read -r addr type name; do
  case $type in t | T | w | W) where[$name]=$((16#$addr)) ;; esac
done < <(nm --defined-only "$bin")
total=0 found=0 outside=()
while read -r name; do
  total=$((total + 1))
  [ -n "${where[$name]:-}" ] || continue
  found=$((found + 1))
  a=${where[$name]}
  # _start and the static initialisers live in sections of their own.
  if { [ "$a" -lt "$start" ] || [ "$a" -ge "$end" ]; } && [[ $name != _start && $name != _GLOBAL__sub_I_* ]]; then
    outside+=("$name")
  fi
done <"$profile"
[ "$total" -gt 100 ] || fail "the profile names only $total functions; $refresh"
[ $((found * 100)) -ge $((total * 70)) ] ||
  fail "only $found of the profile's $total functions are in the binary; $refresh"
# A few names are aliases of another function's body (GCC folds identical
# functions): they lie where that function's section goes.
[ $((${#outside[@]} * 50)) -le "$found" ] ||
  fail "${#outside[@]} of the profile's $found functions lie outside .text.hot, e.g. ${outside[0]}"
echo "hot_text: $found of $total profiled functions in the binary, ${#outside[@]} outside .text.hot ($((16#$size / 1024)) KB)"
exit $((failures > 0))
