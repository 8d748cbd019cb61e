#!/usr/bin/env bash
# The zsh and fish completions: both parse (`zsh -n`, `fish -n`), and both
# behave: fish through `complete -C`, zsh through an interactive zsh on a
# pseudo-terminal (zsh/zpty) that presses Tab and reports every candidate
# offered. Checks subcommands, every option the binary's --help lists,
# --on-lost values, lock names from a redis-server this script starts,
# nothing when it is unreachable, and command completion after `exec NAME --`.
# Usage: completion_zsh_fish.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
source "$src/tests/shell/lib/redis.bash"

tmp=$(mktemp -d)
trap 'stop_redis; rm -rf "$tmp"' EXIT
source "$src/tests/shell/lib/check.bash"

unset REDLOCK_URL REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_SENTINEL_PASSWORD REDLOCK_TOKEN
# The binary under test is `redlock` for both shells; keep their own
# configuration and history out of it.
mkdir -p "$tmp/bin" "$tmp/home"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/bin/redlock"
export PATH="$tmp/bin:$PATH" HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share"

# --- syntax -------------------------------------------------------------------
zsh -n "$src/completions/_redlock" || fail "zsh -n completions/_redlock"
fish -n "$src/completions/redlock.fish" || fail "fish -n completions/redlock.fish"

# --- drivers --------------------------------------------------------------------
# fish_complete LINE: the candidates fish offers for LINE, sorted, one a line.
fish_complete() {
  fish --no-config -c 'source $argv[1]; complete -C"$argv[2]"' "$src/completions/redlock.fish" "$1" |
    cut -f1 | sort
}

# zsh_complete LINE: the candidates zsh offers when Tab is pressed after LINE.
# An interactive `zsh -f` on a pty loads _redlock through compinit; compadd is
# wrapped to print each candidate it would add; the shell exits after the
# completion (comppostfuncs).
cat >"$tmp/zsh-init.zsh" <<'EOF'
PS1='' PS2='' RPS1=''
autoload -Uz compinit && compinit -u -D
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
__null_line() { print -rn -- $'\0' }
compprefuncs=(__null_line)
comppostfuncs=(__null_line exit)
compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "$@"
    return
  fi
  local -a __hits
  builtin compadd -A __hits "$@"
  local __h
  for __h in $__hits; do print -r -- "HIT:$__h"; done
  (( $#__hits ))
}
EOF
cat >"$tmp/zsh-drive.zsh" <<'EOF'
# zsh -f zsh-drive.zsh INIT FPATH_DIR LINE
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "LISTMAX=100000; fpath=(${(q)2} \$fpath); source ${(q)1}"
zpty -w -n z "$3"$'\t'
local out= chunk
while zpty -r z chunk 2>/dev/null; do out+=$chunk; done
zpty -d z 2>/dev/null
out=${out//$'\0'/$'\n'}
print -r -- ${(F)${(M)${(f)out//$'\r'/}:#HIT:*}#HIT:}
EOF
zsh_works=1
zsh -f -c 'zmodload zsh/zpty' 2>/dev/null || zsh_works=0
zsh_complete() {
  timeout 20 zsh -f "$tmp/zsh-drive.zsh" "$tmp/zsh-init.zsh" "$src/completions" "$1" | grep -v '^$' | sort -u
}

# expect SHELL LINE WORD...: each word is among SHELL's candidates for LINE.
expect() {
  local sh=$1 line=$2 w got
  shift 2
  got=$("${sh}_complete" "$line")
  for w in "$@"; do
    grep -qxF -- "$w" <<<"$got" || fail "$sh: '$line' did not offer '$w' (got: $(echo $got))"
  done
}
# expect_not SHELL LINE WORD...: none of the words is offered.
expect_not() {
  local sh=$1 line=$2 w got
  shift 2
  got=$("${sh}_complete" "$line")
  for w in "$@"; do
    grep -qxF -- "$w" <<<"$got" && fail "$sh: '$line' offered '$w'"
  done
}
# expect_none SHELL LINE: nothing is offered.
expect_none() {
  local got
  got=$("${1}_complete" "$2")
  [[ -z $got ]] || fail "$1: '$2' offered [$(echo $got)], expected nothing"
}

# Long options as the binary's own --help lists them (not the footer's examples).
help_options() {
  redlock "$@" --help | grep -oE -- '^ +(-[a-zA-Z],)?--[a-z][-a-z]*' | sed 's/^.*[ ,]//' | sort -u
}

start_redis "$tmp" || exit 1
url=$REDIS_URL
for name in deploy db:migrate; do
  redlock --redis "$url" acquire --ttl 10m "$name" >/dev/null || fail "acquire $name"
done
redlock --redis "$url" --prefix other: acquire --ttl 10m elsewhere >/dev/null || fail "acquire elsewhere"
closed=$(closed_port)
mkdir -p "$tmp/dir" && touch "$tmp/dir/file-a"

shells=(fish zsh)
# scripts/setup installs zsh, whose zsh/zpty drives it: without it, fail
# rather than pass on a check that was never made.
((zsh_works)) || fail "zsh/zpty is not available: cannot check the zsh completion's behaviour"

for sh in "${shells[@]}"; do
  expect "$sh" "redlock ac" acquire
  expect_not "$sh" "redlock ac" release status
  expect "$sh" "redlock " acquire release renew status break exec history suspend resume doctor events help
  expect "$sh" "redlock help " acquire release renew status break exec history suspend resume doctor events
  # The older spellings of break --grace and history --max-age: not offered.
  expect_not "$sh" "redlock " overdue revoke
  expect "$sh" "redlock --" --version --redis
  # shellcheck disable=SC2046
  expect "$sh" "redlock --" $(help_options)
  for sub in acquire release renew status break exec history overdue revoke; do
    # shellcheck disable=SC2046
    expect "$sh" "redlock $sub --" $(help_options "$sub")
    expect "$sh" "redlock $sub --" --redis --prefix --redis-timeout
  done
  expect_not "$sh" "redlock release --" --ttl --json --wait
  expect "$sh" "redlock exec --on-lost " term kill ignore
  expect "$sh" "redlock status --columns " name state host pid age ttl fence count waiting command
  expect "$sh" "redlock --redis $url release " deploy db:migrate
  expect_not "$sh" "redlock --redis $url release " elsewhere
  expect "$sh" "redlock status --redis $url --prefix other: " elsewhere
  expect_not "$sh" "redlock status --redis $url --prefix other: " deploy
  expect "$sh" "redlock --redis $url status deploy " db:migrate
  expect "$sh" "redlock --redis $url break " deploy db:migrate
  expect "$sh" "redlock --redis $url break deploy " db:migrate
  # release takes several NAMEs; history takes one: no more names after it.
  expect "$sh" "redlock --redis $url release deploy " db:migrate
  expect_not "$sh" "redlock --redis $url history deploy " deploy db:migrate
  expect_none "$sh" "redlock --redis redis://127.0.0.1:$closed release "
  # Options of exec go anywhere before `--`, also after NAME.
  expect "$sh" "redlock exec deploy --t" --ttl --token --timeout
  expect "$sh" "redlock exec deploy -" --ttl --wait
  [[ $sh == zsh ]] && expect zsh "redlock exec deploy -" --
  expect "$sh" "redlock exec deploy -- ech" echo
  expect_not "$sh" "redlock exec deploy -- ech" --ttl
  # fish offers the whole word, zsh the part after the directory it keeps.
  [[ $sh == fish ]] && file=$tmp/dir/file-a || file=file-a
  expect "$sh" "redlock exec --ttl 5s deploy -- cat $tmp/dir/fi" "$file"
  # Options before the subcommand and after it both count.
  expect "$sh" "redlock -q st" status
  expect "$sh" "redlock --prefix status " acquire exec
done

if ((failures)); then
  echo "$failures completion check(s) failed" >&2
  exit 1
fi
echo "zsh and fish completion: all checks passed"
