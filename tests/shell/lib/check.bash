# Helpers for tests/shell/*.sh: count failed checks and report each one.
#   fail MESSAGE...   # prints "FAIL: MESSAGE" on stderr and counts it in $failures
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
