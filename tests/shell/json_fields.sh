#!/usr/bin/env bash
# The JSON of acquire --json, renew --json, status --json, history --json,
# overdue --json, doctor --json, events --json and --log-format json is a
# stable interface: every field they print is documented in the JSON OUTPUT
# section of the command's page (redlock-acquire(1), redlock-status(1),
# redlock-history(1), redlock-doctor(1), redlock-events(1); --log-format's
# in redlock(1)). Usage: json_fields.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
source "$src/tests/shell/lib/redis.bash"
source "$src/tests/shell/lib/check.bash"
tmp=$(mktemp -d)
waiter=
revoker=
events=
trap '[ -n "$waiter" ] && kill "$waiter" 2>/dev/null; [ -n "$revoker" ] && kill "$revoker" 2>/dev/null; [ -n "$events" ] && kill "$events" 2>/dev/null; stop_redis; rm -rf "$tmp"' EXIT
# A Redlock needs servers of its own (one server named three times is
# refused): the last one started is the default server.
start_redis "$tmp" || exit 1
second=$REDIS_URL
start_redis "$tmp" || exit 1
third=$REDIS_URL
start_redis "$tmp" || exit 1
unset REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_PASSWORD_FILE REDLOCK_TOKEN
export REDLOCK_URL=$REDIS_URL

# The JSON OUTPUT section of a page (man/PAGE) as plain text.
json_doc() {
  sed -n '/^\.SH JSON OUTPUT/,/^\.SH /p' "$src/man/$1" | sed 's/\\-/-/g'
}
for page in redlock.1 redlock-acquire.1 redlock-status.1 redlock-history.1 redlock-doctor.1 redlock-events.1; do
  [ -n "$(json_doc "$page")" ] || fail "man/$page has no JSON OUTPUT section"
done

# Every object key anywhere in the JSON on stdin.
keys() { jq -r '[paths | .[] | strings] | unique | .[]'; }

# A lock with someone in its line, for status's waiters.
"$bin" acquire --ttl 1m queued >/dev/null
"$bin" acquire --wait 30s queued >/dev/null 2>&1 &
waiter=$!
for _ in $(seq 1 100); do
  [ "$(redis-cli -p "$REDIS_PORT" zcard 'redlock:{queued}:line')" -ge 1 ] && break
  sleep 0.05
done
# A note, a suspension, and a revoke pending (a script's hold, which revoke
# breaks only after its grace).
"$bin" acquire --ttl 1m --note 'web-3:8080' noted >/dev/null
"$bin" suspend paused --for 1h --reason maintenance >/dev/null
"$bin" acquire --ttl 1m revoking >/dev/null
"$bin" revoke revoking --grace 1m >/dev/null 2>&1 &
revoker=$!
for _ in $(seq 1 100); do
  [ "$(redis-cli -p "$REDIS_PORT" exists 'redlock:{revoking}:revoke')" -ge 1 ] && break
  sleep 0.05
done
# Each command's JSON in a file named for the page that documents it.
{
  tok=$("$bin" acquire --ttl 1m held)
  "$bin" acquire --json --ttl 1m fresh
  "$bin" acquire --json --ttl 1m fresh-a fresh-b
  "$bin" renew --json --token "$tok" held
  "$bin" -r "$REDIS_URL" -r "$second" -r "$third" acquire --json three
} >"$tmp/redlock-acquire.1.json" 2>"$tmp/err"
{
  "$bin" exec --hold-at-least 1m kept -- true
  redis-cli -p "$REDIS_PORT" set redlock:{odd} x >/dev/null
  "$bin" status --json held kept odd free queued noted paused revoking
} >"$tmp/redlock-status.1.json" 2>>"$tmp/err"
{
  "$bin" exec ran -- true
  "$bin" history --json ran
  "$bin" overdue --json --max-age 1h ran
} >"$tmp/redlock-history.1.json" 2>>"$tmp/err"
"$bin" doctor --json >"$tmp/redlock-doctor.1.json" 2>>"$tmp/err"
for f in "$tmp"/*.1.json; do
  [ -s "$f" ] || fail "no JSON printed for $(basename "$f" .json): $(cat "$tmp/err")"
done

# events --json: a hold from its acquire to its release, a waiter that joins
# and leaves, a minimum hold.
"$bin" events --json evt evk >"$tmp/events.json" 2>"$tmp/events.err" &
events=$!
for _ in $(seq 1 100); do
  [ "$(redis-cli -p "$REDIS_PORT" pubsub numsub 'redlock:{evk}:events' | tail -1)" -ge 1 ] && break
  sleep 0.05
done
etok=$("$bin" acquire --ttl 1m evt)
"$bin" acquire --token "$etok" evt >/dev/null
"$bin" acquire --wait 200ms evt 2>/dev/null
"$bin" release --token "$etok" evt
"$bin" exec --hold-at-least 1m evk -- true
for _ in $(seq 1 100); do
  [ "$(wc -l <"$tmp/events.json")" -ge 6 ] && break
  sleep 0.05
done
kill -TERM "$events"
wait "$events" || fail "events exited $? on SIGTERM: $(cat "$tmp/events.err")"
events=
[ "$(wc -l <"$tmp/events.json")" -ge 6 ] || fail "too few events: $(cat "$tmp/events.json")"
cp "$tmp/events.json" "$tmp/redlock-events.1.json"

# --log-format json: a line with the lock's fence, and one with the exit status.
"$bin" --log-format json exec logged -- /no/such/command 2>"$tmp/log.json"
"$bin" --log-format json -r redis://127.0.0.1:1 acquire logged 2>>"$tmp/log.json"
jq -e . "$tmp/log.json" >/dev/null || fail "a log line is not JSON: $(cat "$tmp/log.json")"
cp "$tmp/log.json" "$tmp/redlock.1.json"
fields=$(cat "$tmp"/*.1.json | keys | sort -u)
for f in name token fence count ttl_ms validity_ms voted state held type mode host pid cmd since_ms age_ms kept \
  finished_ms holders servers url error waiters position until_ms left_ms run outcome exit start_ms end_ms \
  duration_ms locks overdue max_age_ms last_ok note suspended reason revoke grace_ms check level server detail advice \
  event time time_ms holder limit held_ms kept_ms waiter place message; do
  grep -qx "$f" <<<"$fields" || [ "$f" = error ] || fail "expected field '$f' in the JSON, got: $fields"
done
for out in "$tmp"/*.1.json; do
  page=$(basename "$out" .json)
  doc=$(json_doc "$page")
  for f in $(keys <"$out" | sort -u); do
    grep -qw -- "$f" <<<"$doc" || fail "JSON field '$f' is not documented in the JSON OUTPUT of man/$page"
  done
done
if ((failures)); then
  exit 1
fi
echo "every JSON field is documented: $(echo $fields)"
