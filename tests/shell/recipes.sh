#!/usr/bin/env bash
# The README's recipes per scheduler, run as each scheduler would run them:
# every block marked `<!-- recipe: KIND [FILE] -->` (cron, systemd, kubernetes,
# ci) is read the way that scheduler reads it, its redlock command run with
# the built binary against a redis-server this script starts (the job itself
# replaced by `true`, the recipe's Redis by ours), and its exit status checked
# against what the scheduler counts as success, for the host that runs the
# job and for the one that finds it busy. The systemd units are checked with
# `systemd-analyze verify` where systemd is installed, and the YAML parsed
# with python3-yaml where it is. Each finds redlock where the install puts
# it: a crontab's PATH (cron's own is /usr/bin:/bin) holds /usr/local/bin,
# or its line names redlock by its full path; a unit's ExecStart names
# /usr/local/bin/redlock (./scripts/install, the tarball) or /usr/bin/redlock
# (the .deb); the Kubernetes image's Dockerfile copies the binary from this
# version's tarball into /usr/local/bin, which a container's PATH holds.
# Usage: recipes.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2
readme=$src/README.md
source "$src/tests/shell/lib/redis.bash"

tmp=$(mktemp -d)
trap 'stop_redis; rm -rf "$tmp"' EXIT
source "$src/tests/shell/lib/check.bash"

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "${3:-}/CMakeCache.txt" 2>/dev/null)
mkdir -p "$tmp/bin" "$tmp/units"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/bin/redlock"
unset REDLOCK_PREFIX REDLOCK_PASSWORD REDLOCK_SENTINEL_PASSWORD REDLOCK_TOKEN REDLOCK_NAME REDLOCK_FENCE
export PATH="$tmp/bin:$PATH"
start_redis "$tmp" || exit 1

# The marked blocks: $tmp/recipe-N.{kind,file,text}.
awk -v dir="$tmp" '
  /^<!-- recipe: / { kind = $3; file = ($4 == "-->") ? "" : $4; marked = NR; next }
  /^```/ && marked && marked == NR - 1 && !inblock {
    n++; inblock = 1
    print kind > (dir "/recipe-" n ".kind"); print file > (dir "/recipe-" n ".file")
    printf "" > (dir "/recipe-" n ".text")
    next
  }
  /^```$/ && inblock { inblock = 0; marked = 0; next }
  inblock { print > (dir "/recipe-" n ".text") }
' "$readme"

count() { ls "$tmp"/recipe-*.kind 2>/dev/null | xargs -r grep -lx "$1" | wc -l; }
for kind in cron systemd kubernetes dockerfile ci; do
  [ "$(count "$kind")" -gt 0 ] || fail "README.md has no recipe marked '<!-- recipe: $kind -->'"
done

# A recipe's redlock command with the job replaced by `true`: the words up
# to `--`, then `-- true`.
with_true() {
  local words=() w
  for w in "$@"; do
    [ "$w" = "--" ] && break
    words+=("$w")
  done
  printf '%s\0' "${words[@]}" -- true
}

# run_twice WHAT BUSY_STATUS ARGV...: the first run takes the lock and runs
# the job (0); a second one, while the first one's --hold-at-least keeps it,
# exits BUSY_STATUS. Each recipe gets a prefix of its own.
n_run=0
run_twice() {
  local what=$1 busy=$2 out rc
  shift 2
  n_run=$((n_run + 1))
  export REDLOCK_PREFIX="recipe$n_run:"
  mapfile -d '' argv < <(with_true "$@")
  out=$(REDLOCK_URL=$REDIS_URL "${argv[@]}" 2>&1)
  rc=$?
  [ "$rc" -eq 0 ] || fail "$what: the first run exited $rc, not 0: $out"
  out=$(REDLOCK_URL=$REDIS_URL "${argv[@]}" 2>&1)
  rc=$?
  [ "$rc" -eq "$busy" ] || fail "$what: the run that finds the lock held exited $rc, not $busy: $out"
  unset REDLOCK_PREFIX
}

for kindfile in "$tmp"/recipe-*.kind; do
  base=${kindfile%.kind}
  kind=$(cat "$kindfile") file=$(cat "$base.file") text=$base.text
  case $kind in
    cron)
      # Variables first (cron's own assignment lines), then schedule lines.
      grep -qE '^REDLOCK_URL=redis://' "$text" || fail "cron recipe: no REDLOCK_URL= line in the crontab"
      cron_path=$(sed -n 's/^PATH=//p' "$text")
      cron_path=${cron_path:-/usr/bin:/bin}
      while read -r m h dom mon dow line; do
        [[ $m == *=* || -z $m ]] && continue
        [[ $line == *redlock* ]] || continue
        eval "set -- $line"
        busy=75
        [ "$1" = chronic ] && shift
        if [[ $1 == /* ]]; then
          [[ $1 == /usr/local/bin/redlock || $1 == /usr/bin/redlock ]] ||
            fail "cron recipe '$line': $1 is not where redlock is installed"
          set -- redlock "${@:2}"  # this build's binary, as the PATH below finds it
        elif [[ ":$cron_path:" != *:/usr/local/bin:* ]]; then
          fail "cron recipe '$line': cron's PATH ($cron_path) lacks /usr/local/bin, where ./scripts/install and the tarball put redlock"
        fi
        [[ " $* " == *" --conflict-exit-code 0 "* ]] && busy=0
        [[ " $* " == *" --hold-at-least "* ]] || fail "cron recipe '$line': no --hold-at-least"
        run_twice "cron '$line'" "$busy" "$@"
      done <"$text"
      ;;
    systemd)
      [ -n "$file" ] || fail "a systemd recipe names no unit file"
      # The unit as installed, with this binary and a job that exists.
      sed -E -e "s#/usr/(local/)?bin/redlock#$tmp/bin/redlock#" -e 's#/opt/report.sh#/bin/true#' "$text" >"$tmp/units/$file"
      if [[ $file == *.service ]]; then
        grep -qE '^ExecStart=/usr/(local/)?bin/redlock ' "$text" ||
          fail "$file: ExecStart does not name /usr/local/bin/redlock or /usr/bin/redlock"
        grep -qx 'Type=oneshot' "$text" || fail "$file: not Type=oneshot"
        grep -qx 'SuccessExitStatus=75' "$text" || fail "$file: no SuccessExitStatus=75"
        grep -q '^Environment=REDLOCK_URL=' "$text" || fail "$file: no Environment=REDLOCK_URL="
        line=$(sed -n 's/^ExecStart=//p' "$tmp/units/$file")
        eval "set -- $line"
        run_twice "$file" 75 "$@"
      fi
      ;;
    dockerfile)
      # The image gets the binary of this version's tarball
      # (redlock-VERSION-linux-ARCH/bin/redlock) into /usr/local/bin.
      top=$(sed -n 's/^ARG REDLOCK=//p' "$text")
      [[ $top =~ ^redlock-${version:-[0-9.]+}-linux-[a-z0-9_]+$ ]] ||
        fail "dockerfile recipe: ARG REDLOCK=$top is not the top directory of the ${version:-current} tarball"
      grep -qxF 'COPY ${REDLOCK}/bin/redlock /usr/local/bin/redlock' "$text" ||
        fail "dockerfile recipe: no COPY of \${REDLOCK}/bin/redlock to /usr/local/bin/redlock"
      ;;
    kubernetes | ci)
      if ! python3 -c 'import yaml' 2>/dev/null; then
        echo "SKIP: python3-yaml is not installed: the $kind recipe's YAML is not read" >&2
        continue
      fi
      # The command as the scheduler runs it, one word a line.
      if ! python3 - "$kind" "$text" >"$tmp/argv" 2>"$tmp/py.err" <<'EOF'; then
import shlex, sys, yaml
kind, path = sys.argv[1], sys.argv[2]
doc = yaml.safe_load(open(path))
if kind == "kubernetes":
    job = doc["spec"]["jobTemplate"]["spec"]
    assert doc["kind"] == "CronJob", "not a CronJob"
    assert doc["spec"]["concurrencyPolicy"] == "Forbid", "concurrencyPolicy is not Forbid"
    assert job["backoffLimit"] == 0, "backoffLimit is not 0"
    pod = job["template"]["spec"]
    assert pod["restartPolicy"] == "Never", "restartPolicy is not Never"
    argv = pod["containers"][0]["command"]
else:
    (line,) = [l for job in doc.values() for l in job["script"] if "redlock" in l]
    argv = shlex.split(line)
print("\n".join(argv))
EOF
        fail "$kind recipe: $(cat "$tmp/py.err")"
        continue
      fi
      mapfile -t argv <"$tmp/argv"
      busy=75
      [[ " ${argv[*]} " == *" --conflict-exit-code 0 "* ]] && busy=0
      [ "$kind" = kubernetes ] && [ "$busy" -ne 0 ] && fail "kubernetes recipe: a busy pod must exit 0"
      if [ "$kind" = ci ]; then
        # A CI job waits: the busy run is the one whose wait runs out.
        mapfile -d '' args < <(with_true "${argv[@]}")
        export REDLOCK_PREFIX="recipe-ci:"
        out=$(REDLOCK_URL=$REDIS_URL "${args[@]}" 2>&1) || fail "ci recipe: exited $?: $out"
        unset REDLOCK_PREFIX
      else
        run_twice "$kind recipe" "$busy" "${argv[@]}"
      fi
      ;;
  esac
done

# The units as systemd reads them.
if command -v systemd-analyze >/dev/null; then
  units=("$tmp"/units/*)
  if [ -e "${units[0]}" ] && ! out=$(cd "$tmp/units" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "${units[@]}" 2>&1); then
    fail "systemd-analyze verify: $out"
  elif [ -n "${out:-}" ]; then
    fail "systemd-analyze verify warned: $out"
  fi
else
  echo "SKIP: systemd-analyze is not installed: the units are not verified" >&2
fi

[ "$failures" -eq 0 ] || exit 1
echo "recipes: all passed"
