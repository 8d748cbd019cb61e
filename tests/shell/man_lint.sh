#!/usr/bin/env bash
# Every page in man/ is clean roff: `mandoc -T lint -W warning` exits 0 and
# `groff -t -man -ww -z` prints nothing (groff exits 0 even when it warns),
# nor does groff when it renders the page as man(1) does at 80 columns. Each
# has the sections of its kind; redlock(1), the overview, has those the
# issue asks for, and shows each exit status and the environment CMD gets.
# (tests/unit/cli/docs_sync_test.cpp checks the options, the pages' widths and
# the overview's length.)
# Usage: man_lint.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$2
source "$src/tests/shell/lib/check.bash"

pages=("$src"/man/*.[1-8])
[ -r "$src/man/redlock.1" ] || { echo "FAIL: no $src/man/redlock.1" >&2; exit 1; }

# has_sections PAGE SECTION...: each is a .SH of PAGE.
has_sections() {
  local page=$1 section
  shift
  for section in "$@"; do
    grep -qE "^\.SH \"?$section\"?\$" "$page" || fail "${page#"$src/"}: no .SH $section"
  done
}

for page in "${pages[@]}"; do
  name=${page#"$src/"}
  if ! out=$(mandoc -T lint -W warning "$page" 2>&1); then
    fail "$name: mandoc -T lint -W warning:"$'\n'"$out"
  fi
  out=$(groff -t -man -ww -z "$page" 2>&1)
  [ -z "$out" ] || fail "$name: groff -t -man -ww -z printed:"$'\n'"$out"
  out=$(groff -t -man -Tutf8 -rLL=78n -rLT=78n "$page" 2>&1 >/dev/null)
  [ -z "$out" ] || fail "$name: groff printed as it rendered the page at 80 columns:"$'\n'"$out"
  case $name in
    man/redlock.1) ;;
    *.1) has_sections "$page" NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO" ;;
    *) has_sections "$page" NAME DESCRIPTION "SEE ALSO" ;;
  esac
done

page=$src/man/redlock.1
has_sections "$page" NAME SYNOPSIS DESCRIPTION COMMANDS EXAMPLES OPTIONS "EXIT STATUS" ENVIRONMENT FILES "SEE ALSO"
has_sections "$src/man/redlock-safety.7" SAFETY KEYS UPGRADING
has_sections "$src/man/redlock.conf.5" SYNOPSIS FORMAT SETTINGS EXAMPLES

# Rendered, the overview shows each exit status and the environment CMD gets.
text=$(mandoc -T utf8 "$page" 2>/dev/null | sed 's/.\x08//g')
for status in 0 1 64 69 74 75 76 77 130; do
  grep -qE "^ +$status( |,|\$)" <<<"$text" || fail "EXIT STATUS of redlock(1) does not list $status"
done
for var in REDLOCK_URL REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_SENTINEL_PASSWORD REDLOCK_TOKEN REDLOCK_NAME REDLOCK_FENCE; do
  grep -q "$var" <<<"$text" || fail "redlock(1) does not mention $var"
done
grep -q 'flock(1)' <<<"$text" || fail "SEE ALSO of redlock(1) lacks flock(1)"
grep -q 'redis-cli(1)' <<<"$text" || fail "SEE ALSO of redlock(1) lacks redis-cli(1)"
# exec's page has the environment its command gets, and the re-exec idiom.
exec_text=$(mandoc -T utf8 "$src/man/redlock-exec.1" 2>/dev/null | sed 's/.\x08//g')
for var in REDLOCK_NAME REDLOCK_TOKEN REDLOCK_FENCE REDLOCK_FENCES REDLOCK_EXEC_PID REDLOCK_EXEC_LEVEL; do
  grep -q "$var" <<<"$exec_text" || fail "redlock-exec(1) does not mention $var"
done
idiom='[ -n "$REDLOCK_NAME" ] || exec redlock exec --ttl 30s NAME -- "$0" "$@"'
grep -qF -- "$idiom" <<<"$text" || fail "redlock(1)'s EXAMPLES lack the re-exec idiom: $idiom"
grep -qF -- "$idiom" <<<"$exec_text" || fail "redlock-exec(1) lacks the re-exec idiom: $idiom"

if ((failures)); then
  exit 1
fi
echo "man pages: ${#pages[@]} clean"
