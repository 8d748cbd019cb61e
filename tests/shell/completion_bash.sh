#!/usr/bin/env bash
# Drives completions/redlock.bash the way bash does (COMP_WORDS, COMP_CWORD,
# COMP_LINE, COMP_POINT, then the completion function), like git's t9902:
# subcommands, every option the binary's --help lists, --on-lost values,
# option values that are not subcommands, lock names from a real
# redis-server this script starts, nothing when the server is unreachable,
# and command completion after `exec NAME --`.
# Usage: completion_bash.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
source "$src/tests/shell/lib/redis.bash"

tmp=$(mktemp -d)
trap 'stop_redis; rm -rf "$tmp"' EXIT
source "$src/tests/shell/lib/check.bash"

COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
unset REDLOCK_URL REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_SENTINEL_PASSWORD REDLOCK_TOKEN
source "$src/completions/redlock.bash" || { echo "FAIL: cannot source completions/redlock.bash" >&2; exit 1; }

# Splits LINE into COMP_WORDS as readline does (blanks separate words, a
# run of `:` or `=` is a word of its own, quotes and backslashes keep a word
# together), puts the cursor at the end, runs _redlock and prints COMPREPLY
# sorted, one a line.
complete_line() {
  local line=$1 i c word='' kind='' quote='' started=0
  COMP_WORDS=()
  for ((i = 0; i < ${#line}; i++)); do
    c=${line:i:1}
    if [[ -n $quote ]]; then
      word+=$c
      [[ $c == "$quote" ]] && quote=''
      continue
    fi
    if [[ $c == ' ' ]]; then
      ((started)) && COMP_WORDS+=("$word")
      word='' kind='' started=0
      continue
    fi
    if [[ $c == [:=] ]]; then
      [[ $kind == w ]] && { COMP_WORDS+=("$word"); word=''; }
      kind=s started=1
      word+=$c
      continue
    fi
    [[ $kind == s ]] && { COMP_WORDS+=("$word"); word=''; }
    kind=w started=1
    if [[ $c == \\ ]]; then
      word+=$c${line:i+1:1}
      ((i++))
      continue
    fi
    [[ $c == [\"\'] ]] && quote=$c
    word+=$c
  done
  COMP_WORDS+=("$word")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  _redlock
  ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | sort
}

# expect_exactly LINE WORD...: the completions are exactly these words.
expect_exactly() {
  local line=$1
  shift
  local got want
  got=$(complete_line "$line")
  want=$( (($#)) && printf '%s\n' "$@" | sort)
  [[ $got == "$want" ]] || fail "'$line' completed to [$(echo $got)], expected [$*]"
}

# expect_includes LINE WORD...: each word is among the completions.
expect_includes() {
  local line=$1 w got
  shift
  got=$(complete_line "$line")
  for w in "$@"; do
    grep -qxF -- "$w" <<<"$got" || fail "'$line' did not offer '$w' (got: $(echo $got))"
  done
}

# expect_excludes LINE WORD...: none of the words is among the completions.
expect_excludes() {
  local line=$1 w got
  shift
  got=$(complete_line "$line")
  for w in "$@"; do
    grep -qxF -- "$w" <<<"$got" && fail "'$line' offered '$w'"
  done
}

# Long options as the binary's own --help lists them (the option lines, not
# the examples in the footer).
help_options() {
  "$bin" "$@" --help | grep -oE -- '^ +(-[a-zA-Z],)?--[a-z][-a-z]*' | sed 's/^.*[ ,]//' | sort -u
}

# --- subcommands ----------------------------------------------------------
expect_exactly "redlock " acquire release renew status break exec history suspend resume doctor events help
expect_exactly "redlock help " acquire release renew status break exec history suspend resume doctor events
expect_exactly "redlock help exec " # one subcommand only
# revoke and overdue, the older spellings of break --grace and history
# --max-age, are not offered; typed, they are completed (below).
expect_exactly "redlock re" release renew resume
expect_exactly "redlock -q st" status
# The value of an option is not the subcommand: `status` here is a prefix.
expect_exactly "redlock --prefix status " acquire release renew status break exec history suspend resume doctor events help
expect_exactly "redlock --redis-timeout 2s a" acquire

# --- options: everything --help lists, at the top and for each subcommand ---
top=$(help_options)
[[ -n $top ]] || fail "could not read options from '$bin --help'"
# shellcheck disable=SC2086
expect_includes "redlock --" $top
expect_includes "redlock -" -r -q -v -h
for sub in acquire release renew status break exec history overdue revoke suspend resume doctor events; do
  opts=$(help_options "$sub")
  [[ -n $opts ]] || fail "could not read options from '$bin $sub --help'"
  # shellcheck disable=SC2086
  expect_includes "redlock $sub --" $opts
  # Global options are accepted after the subcommand too.
  expect_includes "redlock $sub --" --redis --prefix --redis-timeout --quiet
  expect_excludes "redlock $sub --" --version
done
expect_includes "redlock exec -" -c
expect_exactly "redlock acquire --w" --wait --while-pid
expect_excludes "redlock release --" --ttl --json --wait
expect_excludes "redlock status --" --token --ttl
expect_includes "redlock break --" --grace --json
expect_includes "redlock history --" --max-age --limit --json
expect_exactly "redlock revoke --g" --grace
expect_exactly "redlock overdue --m" --max-age --min-replicas

# --- option values ----------------------------------------------------------
expect_exactly "redlock exec --on-lost " term kill ignore
expect_exactly "redlock exec --on-lost k" kill
expect_exactly "redlock exec --on-lost=" term kill ignore
expect_exactly "redlock exec --on-lost=i" ignore
expect_exactly "redlock exec deploy --on-lost t" term
expect_exactly "redlock acquire --ttl " # a duration: nothing to offer
# status -o: column names, after those the comma-separated list already has.
expect_exactly "redlock status -o " name state host pid age ttl fence count waiting command
expect_exactly "redlock status -o na" name
expect_exactly "redlock status --columns name,host,p" name,host,pid
expect_exactly "redlock status --columns=name,c" name,command name,count
expect_exactly "redlock status -o name deploy -o t" ttl
touch "$tmp/pw-file"
expect_includes "redlock --password-file $tmp/pw-" "$tmp/pw-file"

# --- lock names from a real server ------------------------------------------
start_redis "$tmp" || exit 1
url=$REDIS_URL
for name in deploy db:migrate "name with space"; do
  "$bin" --redis "$url" acquire --ttl 10m "$name" >/dev/null || fail "acquire $name against $url"
done
"$bin" --redis "$url" --prefix other: acquire --ttl 10m elsewhere >/dev/null || fail "acquire elsewhere"

expect_exactly "$bin --redis $url release " db:migrate deploy 'name\ with\ space'
expect_exactly "$bin release --redis $url d" db:migrate deploy
expect_exactly "$bin --redis=$url renew dep" deploy
# bash replaces only what follows the last `:` of the word.
expect_exactly "$bin --redis $url release db:m" migrate
expect_exactly "$bin --redis $url --prefix other: status " elsewhere
expect_exactly "$bin --redis $url status deploy " db:migrate deploy 'name\ with\ space'
# break takes several NAMEs, like status.
expect_exactly "$bin --redis $url break " db:migrate deploy 'name\ with\ space'
expect_exactly "$bin --redis $url break deploy d" db:migrate deploy
# release and renew take several NAMEs too; acquire and exec name new locks.
expect_exactly "$bin --redis $url release deploy " db:migrate deploy 'name\ with\ space'
expect_exactly "$bin --redis $url renew deploy d" db:migrate deploy
expect_exactly "$bin --redis $url acquire "
# history takes one NAME.
expect_exactly "$bin --redis $url history deploy "
# $REDLOCK_URL is used when the command line has no --redis.
got=$(REDLOCK_URL=$url complete_line "$bin status ")
grep -qx deploy <<<"$got" || fail "names not fetched through \$REDLOCK_URL (got: $(echo $got))"

# Unreachable: nothing, quietly and quickly.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
closed=$(closed_port)
got=$(complete_line "$bin --redis redis://127.0.0.1:$closed release " 2>&1)
[[ -z $got ]] || fail "unreachable server: expected nothing, got [$got]"
# A server that accepts and never answers: nothing, within the completion's
# short timeouts (300ms each), not redlock's default of 1s.
kill -STOP "$REDIS_PID"
start=$(now_ms)
got=$(complete_line "$bin --redis $url release " 2>&1)
elapsed=$(($(now_ms) - start))
kill -CONT "$REDIS_PID"
[[ -z $got ]] || fail "stopped server: expected nothing, got [$got]"
((elapsed < 900)) || fail "a stopped server kept completion waiting for ${elapsed}ms"
# And it works again once the server answers.
expect_includes "$bin --redis $url release " deploy

# --- exec NAME -- CMD ------------------------------------------------------------
expect_includes "redlock exec deploy -- ech" echo
expect_excludes "redlock exec deploy -- ech" --ttl
expect_excludes "redlock exec deploy -- ls --t" --ttl --token
mkdir -p "$tmp/dir" && touch "$tmp/dir/file-a"
expect_includes "redlock exec deploy -- cat $tmp/dir/fi" "$tmp/dir/file-a"
if [[ -r /usr/share/bash-completion/bash_completion ]]; then
  # With bash-completion loaded, CMD's own completion takes over.
  (
    failures=0
    # compopt only works while bash itself runs a completion; outside one
    # (as here) it complains, which says nothing about our completion.
    compopt() { builtin compopt "$@" 2>/dev/null || true; }
    source /usr/share/bash-completion/bash_completion
    source "$src/completions/redlock.bash"
    expect_includes "redlock exec deploy -- ech" echo
    expect_includes "redlock exec --ttl 5s deploy -- cat $tmp/dir/fi" "$tmp/dir/file-a"
    exit "$failures"
  ) || failures=$((failures + $?))
fi

if ((failures)); then
  echo "$failures completion check(s) failed" >&2
  exit 1
fi
echo "bash completion: all checks passed"
