#!/usr/bin/env bash
# `redlock --version` tells hosts apart: the project's version, and the git
# commit the binary was built from (with -dirty when tracked files differed
# from it at build time), on the line after it. Usage: version.sh
# REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=$1 src=$2 build=$3
source "$src/tests/shell/lib/check.bash"

out=$("$bin" --version)
first=$(head -n 1 <<<"$out")
second=$(sed -n 2p <<<"$out")
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || fail "no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt"
[ "$first" = "redlock $version" ] || fail "the first line of --version is '$first', not 'redlock $version'"
[[ $second =~ ^commit\ ([0-9a-f]{12}(-dirty)?|unknown)$ ]] ||
  { fail "the second line of --version names no commit: '$second'"; exit 1; }
commit=${BASH_REMATCH[1]}
cached=$(sed -n 's/^REDLOCK_COMMIT:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ -n "$cached" ]; then
  [ "$commit" = "$cached" ] || fail "--version names $commit, -DREDLOCK_COMMIT=$cached"
elif git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  # The binary was built from the tree as it is now, or from an earlier
  # commit of it: either way its commit is one git knows.
  hex=${commit%-dirty}
  git -C "$src" cat-file -e "$hex^{commit}" 2>/dev/null || fail "--version names $commit, which is no commit of $src"
  [ "$(git -C "$src" rev-parse --short=12 HEAD)" = "$hex" ] || echo "note: built from $hex, the tree is now at another commit"
else
  [ "$commit" = unknown ] || fail "no .git in $src, yet --version names $commit"
fi
if ((failures)); then
  exit 1
fi
echo "--version: $first, $second"
