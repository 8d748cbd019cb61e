#!/usr/bin/env bash
# A fleet upgrades host by host, so a binary of the previous layout (the
# line of waiters in one hash, 7ef568f) and this one meet on one lock: they
# must never both hold it, and a waiter of either version behind a holder
# of the other gets the lock after the release, never hangs.
# Usage: upgrade_mixed.sh BINARY SOURCE_DIR BUILD_DIR. The old binary is
# $REDLOCK_OLD_BINARY, or built from commit 7ef568f of SOURCE_DIR's history
# into BUILD_DIR/old (once); without that history the test is skipped
# (exit 77, which ctest reports as skipped, never as passed).
set -uo pipefail
bin=$1
src=$2
build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/check.bash"
. "$here/lib/redis.bash"

old=${REDLOCK_OLD_BINARY:-}
if [ -z "$old" ]; then
  old=$build/old/build/redlock
  if [ ! -x "$old" ]; then
    if ! git -C "$src" cat-file -e 7ef568f^{commit} 2>/dev/null; then
      echo "SKIP: commit 7ef568f is not in $src's history and REDLOCK_OLD_BINARY is not set" >&2
      exit 77
    fi
    rm -rf "$build/old"
    mkdir -p "$build/old"
    git -C "$src" archive 7ef568f | tar -x -C "$build/old"
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # -O1 without debug information and without -Werror: half the build
    # time of its defaults, and a newer compiler's warnings cannot stop it.
    cmake -S "$build/old" -B "$build/old/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DREDLOCK_WERROR=OFF "${launcher[@]}" >/dev/null || exit 1
    cmake --build "$build/old/build" -j "$(nproc)" --target redlock >/dev/null || exit 1
  fi
fi

dir=$(mktemp -d)
trap 'stop_redis; rm -rf "$dir"' EXIT
start_redis "$dir" || exit 1
export REDLOCK_URL=$REDIS_URL

# status of either version lists the other's locks. The old one scans; a
# new one reads the index of held locks, which only new versions write:
# where there is none yet it scans too, and --scan finds the old holders
# once there is one (redlock-safety(7), UPGRADING).
otok=$("$old" acquire --ttl 30s O) || fail "$old could not take O"
"$bin" status --json >"$dir/st" || fail "the new status failed: $(cat "$dir/st")"
grep -q '"name": "O"' "$dir/st" || fail "the new status (no index yet) does not list the old holder's O"
ntok=$("$bin" acquire --ttl 30s N) || fail "$bin could not take N"
"$bin" status --json >"$dir/st" || fail "the new status failed"
grep -q '"name": "N"' "$dir/st" || fail "the new status does not list N from the index"
"$bin" status --json --scan >"$dir/st" || fail "status --scan failed"
grep -q '"name": "O"' "$dir/st" && grep -q '"name": "N"' "$dir/st" || fail "status --scan misses O or N: $(cat "$dir/st")"
"$bin" status O | grep -q held || fail "the new status O does not see the old holder"
"$old" status >"$dir/st" || fail "the old status failed"
grep -q '^N ' "$dir/st" && grep -q '^O ' "$dir/st" || fail "the old status misses O or N: $(cat "$dir/st")"
"$old" release --token "$otok" O || fail "$old could not release O"
"$bin" release --token "$ntok" N || fail "$bin could not release N"

# Each waiter of one version behind a holder of the other.
for pair in "$old $bin" "$bin $old"; do
  set -- $pair
  holder=$1 waiter=$2
  tok=$("$holder" acquire --ttl 30s L) || fail "$holder could not take L"
  "$waiter" acquire --ttl 30s --wait 20s L >"$dir/got" 2>"$dir/err" &
  w=$!
  sleep 0.5
  "$waiter" acquire L 2>/dev/null && fail "$waiter took L while $holder held it"
  "$holder" release --token "$tok" L || fail "$holder could not release L"
  start=$(date +%s%N)
  wait "$w" || fail "the waiter ($waiter) behind $holder exited $? ($(cat "$dir/err"))"
  took=$((($(date +%s%N) - start) / 1000000))
  [ "$took" -lt 5000 ] || fail "the waiter ($waiter) took L ${took} ms after the release"
  # Each version's status names the other's holder.
  "$holder" status L | grep -q held || fail "$holder's status does not see $waiter's hold"
  "$waiter" release --token "$(cat "$dir/got")" L || fail "$waiter could not release L"
done

# Both versions contend on one lock: never two in the section at once.
for i in 1 2 3 4 5 6; do
  b=$bin
  [ $((i % 2)) -eq 0 ] && b=$old
  "$b" exec --ttl 5s --wait 60s M -- sh -c \
    "mkdir '$dir/in' 2>/dev/null || { echo overlap >> '$dir/overlap'; exit 0; }; sleep 0.3; rmdir '$dir/in'" \
    2>>"$dir/contend.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do
  wait "$p" || fail "a contending exec exited $? ($(tail -1 "$dir/contend.err"))"
done
[ -e "$dir/overlap" ] && fail "an old and a new redlock held M at once"

[ "$failures" -eq 0 ] || exit 1
echo "ok: old and new redlocks share locks"
