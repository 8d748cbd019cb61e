#!/usr/bin/env bash
# status --format prometheus is read by Prometheus's own parser (Debian's
# python3-prometheus-client): every line parses, every family has its HELP
# and TYPE, and the numbers are the locks'. Usage: metrics.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
source "$src/tests/shell/lib/redis.bash"
source "$src/tests/shell/lib/check.bash"
# Debian's own python3 (another one earlier on PATH would not have the package).
py=/usr/bin/python3
"$py" -c 'import prometheus_client' 2>/dev/null || fail "python3-prometheus-client is not installed (scripts/setup installs it)"
tmp=$(mktemp -d)
waiter=
trap '[ -n "$waiter" ] && kill "$waiter" 2>/dev/null; stop_redis; rm -rf "$tmp"' EXIT
start_redis "$tmp" || exit 1
unset REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_PASSWORD_FILE REDLOCK_TOKEN
export REDLOCK_URL=$REDIS_URL

"$bin" acquire --ttl 1m 'nightly "report"' >/dev/null || fail "could not take the lock"
"$bin" acquire --ttl 1m --limit 3 pool >/dev/null || fail "could not take a place"
"$bin" acquire --ttl 1m 'back\slash' >/dev/null || fail "could not take a name with a backslash"
"$bin" acquire --wait 30s 'nightly "report"' >/dev/null 2>&1 &
waiter=$!
for _ in $(seq 1 100); do
  [ "$(redis-cli -p "$REDIS_PORT" zcard 'redlock:{nightly "report"}:line')" -ge 1 ] && break
  sleep 0.05
done
# A lock whose key someone else wrote with a name no redlock would accept:
# an invalid UTF-8 byte, a quote, a backslash and a newline.
# Such names read as the table shows them, marked name_escaped="true": two
# that differ only in a byte that is not UTF-8 are two series, an escape
# character is never raw, and a name spelling "\x1b" out (which redlock
# accepts, and labels as it is) is not the one holding the character.
# Keys written by hand are not in the index of held locks (as those of a
# redlock before 0.2 are not): --scan lists them too.
for odd in $'redlock:{odd\xff"\\\nname}' $'redlock:{odd\xfe"\\\nname}' $'redlock:{esc\e[2Jx}' 'redlock:{lit\x1b[2Jx}'; do
  redis-cli -p "$REDIS_PORT" hset "$odd" schema redlock/1 token t count 1 fence 1 host h pid 1 cmd c \
    since_ms 1 ttl_ms 60000 >/dev/null
  redis-cli -p "$REDIS_PORT" pexpire "$odd" 60000 >/dev/null
done
"$bin" status --scan --format prometheus >"$tmp/all" 2>"$tmp/err-all"
[ "$?" -eq 0 ] || fail "status --format prometheus (every lock) failed: $(cat "$tmp/err-all")"
"$py" - "$tmp/all" <<'PY' || fail "the metrics of every lock do not parse: $(cat -v "$tmp/all")"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding="utf-8").read()
assert "\x1b" not in text, "a raw escape character"
samples = [(s.name, s.labels["name"], s.labels.get("name_escaped", ""))
           for f in text_string_to_metric_families(text) for s in f.samples if "server" not in s.labels]
assert len(samples) == len(set(samples)), "a series twice"
names = {(name, escaped) for _, name, escaped in samples}
for odd in ('odd\\xff"\\\\\\nname', 'odd\\xfe"\\\\\\nname', 'esc\\x1b[2Jx'):
    assert (odd, "true") in names, (odd, names)
assert ('lit\\x1b[2Jx', "") in names, names
assert ('back\\slash', "") in names, ("a label reads back as the name", names)
PY
"$bin" status --format prometheus 'nightly "report"' pool free >"$tmp/metrics" 2>"$tmp/err"
status=$?
[ "$status" -eq 1 ] || fail "status --format prometheus with a free lock named exited $status, not 1: $(cat "$tmp/err")"

"$py" - "$tmp/metrics" "$REDIS_URL" <<'PY' || fail "the metrics do not parse as Prometheus text, or have the wrong numbers: $(cat "$tmp/metrics")"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
got = {}
for family in text_string_to_metric_families(text):
    assert family.type == "gauge", family
    assert family.documentation, family.name
    for s in family.samples:
        got[(s.name, s.labels.get("name", s.labels.get("server")))] = s.value
want = {
    ("redlock_lock_held", 'nightly "report"'): 1, ("redlock_lock_holders", 'nightly "report"'): 1,
    ("redlock_lock_waiters", 'nightly "report"'): 1, ("redlock_lock_held", "pool"): 1,
    ("redlock_lock_holders", "pool"): 1, ("redlock_lock_waiters", "pool"): 0,
    ("redlock_lock_held", "free"): 0, ("redlock_lock_holders", "free"): 0,
}
for key, value in want.items():
    assert got.get(key) == value, (key, got.get(key))
assert 0 < got[("redlock_lock_ttl_seconds", 'nightly "report"')] <= 60
assert got[("redlock_lock_age_seconds", "pool")] >= 0
assert ("redlock_lock_ttl_seconds", "free") not in got
assert got[("redlock_up", sys.argv[2])] == 1, got
assert got[("redlock_server_evicts_locks", sys.argv[2])] == 0, got
PY
# Redis down: still a whole exposition that parses, with redlock_up 0, and 69.
down="redis://127.0.0.1:1"  # nothing listens on port 1
"$bin" -r "$down" --connect-timeout 300ms status --format prometheus >"$tmp/down" 2>"$tmp/err-down"
status=$?
[ "$status" -eq 69 ] || fail "status --format prometheus with Redis down exited $status, not 69"
"$py" - "$tmp/down" "$down" <<'PY' || fail "the metrics with Redis down do not parse: $(cat "$tmp/down")"
import sys
from prometheus_client.parser import text_string_to_metric_families
up = [s for f in text_string_to_metric_families(open(sys.argv[1]).read()) for s in f.samples if s.name == "redlock_up"]
assert [(s.labels["server"], s.value) for s in up] == [(sys.argv[2], 0)], up
PY
# The alerting rule of docs/recipes.md, as pasted, against the metrics of every lock:
# an ok run of the job, its lock free (nearly always, and exactly when the
# rule must fire), has the series the rule reads; the rule stays quiet now
# and fires 27 hours on.
"$bin" exec nightly-backup -- true || fail "could not run the job"
"$bin" status --format prometheus >"$tmp/jobs" 2>"$tmp/err-jobs"
[ "$?" -eq 0 ] || fail "status --format prometheus (every lock) failed: $(cat "$tmp/err-jobs")"
"$py" - "$tmp/jobs" "$src/docs/recipes.md" <<'PY' || fail "the alerting rule of docs/recipes.md does not work on: $(cat "$tmp/jobs")"
import re, sys, time
from prometheus_client.parser import text_string_to_metric_families
samples = [s for f in text_string_to_metric_families(open(sys.argv[1]).read()) for s in f.samples]
doc = open(sys.argv[2]).read()
rules = [b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if "alert:" in b]
assert len(rules) == 1, "one alerting rule in docs/recipes.md"
expr = re.search(r"^\s*expr: (.*)$", rules[0], re.M).group(1)
# The one shape of rule docs/recipes.md gives: time() - max by (L) (M{K="V",...}) > N.
m = re.fullmatch(r'time\(\) - max by \((\w+)\) \((\w+)\{(.*)\}\) > ([0-9 *]+)', expr)
assert m, "a rule of another shape: " + expr
by, metric, matchers, threshold = m.group(1), m.group(2), m.group(3), eval(m.group(4))
want = dict(re.findall(r'(\w+)="([^"]*)"', matchers))
def alerts(now):
    groups = {}
    for s in samples:
        if s.name == metric and all(s.labels.get(k) == v for k, v in want.items()):
            groups[s.labels[by]] = max(groups.get(s.labels[by], 0), s.value)
    assert groups, "no series for " + expr
    return {k for k, v in groups.items() if now - v > threshold}
now = time.time()
assert alerts(now) == set(), "fires just after an ok run"
assert alerts(now + 27 * 3600) == {"nightly-backup"}, "does not fire a day and more on"
held = [s for s in samples if s.name == "redlock_lock_held" and s.labels["name"] == "nightly-backup"]
assert [s.value for s in held] == [0], held
PY
# Every metric is documented in redlock-status(1).
for m in $(grep -o '^redlock_[a-z_]*' "$tmp/metrics" | sort -u); do
  grep -qw -- "$m" "$src/man/redlock-status.1" || fail "metric $m is not documented in redlock-status(1)"
done
if ((failures)); then
  exit 1
fi
echo "metrics parse as Prometheus text: $(grep -c '^redlock_' "$tmp/metrics") samples"
