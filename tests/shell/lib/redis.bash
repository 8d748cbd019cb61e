# Helpers for tests/shell/*.sh: a throwaway redis-server on a free loopback
# port (never 6379), stopped by the PID we started. Source this file, then
#   start_redis DIR   # sets REDIS_PID, REDIS_PORT, REDIS_URL (call again for more servers)
#   stop_redis        # stops every server start_redis started
REDIS_PIDS=()

start_redis() {
  local dir=$1 try i port state
  for try in $(seq 1 30); do
    port=$((20000 + RANDOM % 40000))
    [ "$port" -eq 6379 ] && continue
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
      --logfile "$dir/redis-$port.log" --daemonize no </dev/null >/dev/null 2>&1 &
    REDIS_PID=$!
    for i in $(seq 1 100); do
      state=$(ps -o stat= -p "$REDIS_PID" 2>/dev/null || true)
      case $state in '' | Z*) break ;; esac
      # The server answering must be ours, not another one that had the port.
      if redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null | tr -d '\r' |
        grep -qx "process_id:$REDIS_PID"; then
        REDIS_PORT=$port
        REDIS_URL=redis://127.0.0.1:$port
        REDIS_PIDS+=("$REDIS_PID")
        return 0
      fi
      sleep 0.05
    done
    kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  done
  echo "could not start redis-server on a free port" >&2
  return 1
}

stop_redis() {
  local pid
  for pid in "${REDIS_PIDS[@]}" ${REDIS_PID:-}; do
    kill -CONT "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  REDIS_PIDS=()
  REDIS_PID=
}

# A loopback port nothing listens on (for "unreachable" checks).
closed_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    [ "$port" -eq 6379 ] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
}
