#!/usr/bin/env bash
# man/redlock.1 is clean roff: `mandoc -T lint -W warning` exits 0 and
# `groff -man -ww -z` prints nothing (groff exits 0 even when it warns). It
# also has the sections the issue asks for and renders to text.
# Usage: man_lint.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$2
page=$src/man/redlock.1
source "$src/tests/shell/lib/check.bash"

[ -r "$page" ] || { echo "FAIL: no $page" >&2; exit 1; }

if ! out=$(mandoc -T lint -W warning "$page" 2>&1); then
  fail "mandoc -T lint -W warning:"$'\n'"$out"
fi

out=$(groff -man -ww -z "$page" 2>&1)
[ -z "$out" ] || fail "groff -man -ww -z printed:"$'\n'"$out"

for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT KEYS SAFETY EXAMPLES "SEE ALSO"; do
  grep -qE "^\.SH \"?$section\"?\$" "$page" || fail "no .SH $section"
done

# Rendered, the page shows each exit status and the environment CMD gets.
text=$(mandoc -T utf8 "$page" 2>/dev/null | sed 's/.\x08//g')
for status in 0 1 64 69 74 75 76 77 130; do
  grep -qE "^ +$status( |,|\$)" <<<"$text" || fail "EXIT STATUS does not list $status"
done
for var in REDLOCK_URL REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_SENTINEL_PASSWORD REDLOCK_TOKEN REDLOCK_NAME REDLOCK_FENCE; do
  grep -q "$var" <<<"$text" || fail "the page does not mention $var"
done
grep -q 'flock(1)' <<<"$text" || fail "SEE ALSO lacks flock(1)"
grep -q 'redis-cli(1)' <<<"$text" || fail "SEE ALSO lacks redis-cli(1)"

if ((failures)); then
  exit 1
fi
echo "man page: clean"
