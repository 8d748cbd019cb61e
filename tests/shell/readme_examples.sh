#!/usr/bin/env bash
# Runs the examples of the README and of docs/*.md against a redis-server
# this script starts (REDLOCK_URL points at it) and asserts each command's
# exit status.
#
# A document marks the blocks it means with an HTML comment on the line just
# before the ```sh fence:
#   <!-- readme-test: each line… -->  every line is a command, run in order in
#                                      one shell; a trailing `# exit N` is its
#                                      expected status, else 0
#   <!-- readme-test: script -->       the block is a script; it must exit 0
# Each block gets a key prefix of its own.
# Usage: readme_examples.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
readme=$src/README.md
source "$src/tests/shell/lib/redis.bash"

tmp=$(mktemp -d)
trap 'stop_redis; rm -rf "$tmp"' EXIT
source "$src/tests/shell/lib/check.bash"

# The README opens with its title and what redlock is, then exactly the two
# set-up commands in its first fenced block, then "First steps" in four.
[ "$(head -n 1 "$readme")" = "# redlock" ] || fail "README.md does not open with its title"
sed -n '2,/^```/p' "$readme" | grep -q 'locks kept in Redis' ||
  fail "README.md does not say what redlock is before its first code block"
first_block=$(awk '/^```/ { n++; next } n == 1 { print } n == 2 { exit }' "$readme")
[ "$first_block" = $'./scripts/demo\n./scripts/test' ] ||
  fail "README.md's first code block is not the ./scripts/demo and ./scripts/test commands: $first_block"
steps=$(sed -n '/^## First steps$/,/^## /p' "$readme")
[ -n "$steps" ] || fail "README.md has no '## First steps' section"
[ "$(grep -c '^[1-9]\. ' <<<"$steps")" -eq 4 ] || fail "README.md's First steps are not four numbered steps"
for word in Install REDLOCK_URL 'redlock doctor' 'redlock exec'; do
  grep -qF "$word" <<<"$steps" || fail "README.md's First steps do not mention $word"
done
# The Environment section's table is one table: its rows are not broken by
# a paragraph (which would render the rest as text).
env_tables=$(sed -n '/^## Environment$/,/^## /p' "$readme" | awk '/^\|/ && !in_table { n++ } { in_table = /^\|/ } END { print n + 0 }')
[ "$env_tables" -eq 1 ] || fail "README.md's Environment section has $env_tables tables, not one"
# The README is the front door: what redlock is, how to install it, the
# first steps and recipes; the rest is in docs/ and the man pages.
lines=$(wc -l <"$readme")
[ "$lines" -le 350 ] || fail "README.md has $lines lines, more than 350: move detail to docs/ or the man pages"
first_steps_line=$(grep -n '^## First steps$' "$readme" | cut -d: -f1)
block_line=$(grep -n '^\./scripts/demo$' "$readme" | head -1 | cut -d: -f1)
[ "${block_line:-0}" -lt "${first_steps_line:-0}" ] || fail "README.md's First steps come before the set-up commands"

mkdir -p "$tmp/bin" "$tmp/work"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/bin/redlock"
unset REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_SENTINEL_PASSWORD REDLOCK_TOKEN REDLOCK_NAME REDLOCK_FENCE
export PATH="$tmp/bin:$PATH"
start_redis "$tmp" || exit 1
export REDLOCK_URL=$REDIS_URL

# Split the documents into the marked blocks: $tmp/block-N.{mode,sh,line},
# where .line is FILE:LINE of the block's first line.
n=0
for doc in "$readme" "$src"/docs/*.md; do
  [ -e "$doc" ] || continue
  n=$(awk -v dir="$tmp" -v n="$n" -v doc="${doc#"$src/"}" '
    /^<!-- readme-test: / { mode = ($3 == "script") ? "script" : "lines"; marked = FNR; next }
    /^```sh$/ && marked && marked == FNR - 1 {
      n++; inblock = 1
      print mode > (dir "/block-" n ".mode")
      print doc ":" FNR + 1 > (dir "/block-" n ".line")
      printf "" > (dir "/block-" n ".sh")
      next
    }
    /^```/ && inblock { inblock = 0; next }
    inblock { print > (dir "/block-" n ".sh") }
    END { print n }
  ' "$doc")
done

blocks=0 commands=0
all_commands=''
for mode_file in "$tmp"/block-*.mode; do
  [ -e "$mode_file" ] || break
  n=${mode_file##*/block-}
  n=${n%.mode}
  mode=$(cat "$mode_file")
  where=$(cat "$tmp/block-$n.line")  # FILE:LINE
  doc=${where%:*} first_line=${where##*:}
  block=$tmp/block-$n.sh
  log=$tmp/block-$n.log
  blocks=$((blocks + 1))
  all_commands+=$(cat "$block")$'\n'
  export REDLOCK_PREFIX="readme-$n:"

  if [ "$mode" = script ]; then
    commands=$((commands + 1))
    (cd "$tmp/work" && sh "$block") >"$log" 2>&1
    status=$?
    [ "$status" -eq 0 ] || fail "$where: the script exited $status:"$'\n'"$(cat "$log")"
    # Its EXIT trap gave every lock back.
    if locks=$(redlock status --json 2>/dev/null) && [ "$(tr -d ' \n' <<<"$locks")" != '[]' ]; then
      fail "$where: the script left locks behind: $locks"
    fi
    continue
  fi

  # One shell runs the block's lines in order (so tok=$(…) carries over),
  # checking each line's status as it goes.
  runner=$tmp/block-$n.run
  {
    echo 'cd "$1" || exit 2'
    echo '__failed=0'
    lineno=$first_line
    while IFS= read -r line; do
      if [[ -n $line && $line != '#'* ]]; then
        expected=0
        if [[ $line =~ \#\ exit\ ([0-9]+) ]]; then
          expected=${BASH_REMATCH[1]}
        fi
        commands=$((commands + 1))
        printf 'echo "$ "%q\n' "$line"
        printf '{ %s\n} </dev/null\n' "$line"
        printf '__status=$?; if [ "$__status" -ne %d ]; then ' "$expected"
        printf 'printf "FAIL: %s:%d: %%s exited %%s, expected %d\\n" %q "$__status" >&3; __failed=1; fi\n' \
          "$doc" "$lineno" "$expected" "$line"
      fi
      lineno=$((lineno + 1))
    done <"$block"
    echo 'exit $__failed'
  } >"$runner"
  if ! bash "$runner" "$tmp/work" >"$log" 2>&1 3>"$tmp/block-$n.failures"; then
    while IFS= read -r msg; do fail "${msg#FAIL: }"; done <"$tmp/block-$n.failures"
    echo "--- output of the block at $where:" >&2
    cat "$log" >&2
  fi
done

# The markers must not get lost: the tested examples cover every
# subcommand, the README has its own, and exec's command saw the fence.
((blocks >= 3)) || fail "only $blocks marked example blocks found in README.md and docs/"
((commands >= 10)) || fail "only $commands example commands found in README.md and docs/"
grep -qx 'README.md:[0-9]*' "$tmp"/block-*.line || fail "README.md has no marked example block"
for sub in acquire renew release status exec; do
  grep -qE "(^|[ (])redlock $sub " <<<"$all_commands" || fail "no tested example runs 'redlock $sub'"
done
# (grep reads the logs itself: `cat | grep -q` under pipefail fails when
# grep stops early and cat gets SIGPIPE.)
grep -qhE '^fence [0-9]+$' "$tmp"/block-*.log 2>/dev/null ||
  fail "the exec example did not print 'fence N' from \$REDLOCK_FENCE"
grep -qhx 'migrating indexes' "$tmp"/block-*.log 2>/dev/null ||
  fail "the script example did not run to its last step"

if ((failures)); then
  exit 1
fi
echo "README and docs: $commands example commands in $blocks blocks behaved as documented"
