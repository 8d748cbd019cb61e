#!/usr/bin/env bash
# The tarball for Linux systems other than Debian: `cpack -G TGZ` gives
# redlock-VERSION-linux-ARCH.tar.gz with the binary, the man pages and the
# completions under one top directory; the binary loads only the C library
# and needs no glibc newer than the README says; unpacked into a scratch
# directory, it runs: --version, and a lock taken and run under against a
# throwaway redis-server.
# Usage: package_tgz.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$2 build=$3

tmp=$(mktemp -d)
source "$src/tests/shell/lib/redis.bash"
trap 'stop_redis; rm -rf "$tmp"' EXIT
source "$src/tests/shell/lib/check.bash"
source "$src/tests/shell/lib/man.bash"

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "FAIL: no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt" >&2; exit 1; }

if ! (cd "$build" && cpack -G TGZ -B "$tmp/out") >"$tmp/cpack.log" 2>&1; then
  echo "FAIL: cpack -G TGZ failed:" >&2
  cat "$tmp/cpack.log" >&2
  exit 1
fi
tarball=$tmp/out/redlock-$version-linux-$(uname -m).tar.gz
[ -f "$tarball" ] || { echo "FAIL: no $(basename "$tarball") in: $(ls "$tmp/out")" >&2; exit 1; }

# Everything under one top directory, as README's install line expects.
top=redlock-$version-linux-$(uname -m)
outside=$(tar -tzf "$tarball" | grep -v "^$top/" || true)
[ -z "$outside" ] || fail "files outside $top/ in the tarball: $outside"
mkdir -p "$tmp/local"
tar -xzf "$tarball" -C "$tmp/local" --strip-components=1 || fail "the tarball does not unpack"
mapfile -t man_pages < <(man_install_list "$src" | grep -v ' ')
for f in bin/redlock "${man_pages[@]}" share/doc/redlock/copyright \
  share/bash-completion/completions/redlock share/zsh/vendor-completions/_redlock \
  share/fish/vendor_completions.d/redlock.fish; do
  [ -f "$tmp/local/$f" ] || fail "no $f in the tarball"
done
for f in "${man_pages[@]}"; do
  [ -f "$tmp/local/$f" ] || continue
  cmp -s <(gzip -dc "$tmp/local/$f") "$src/man/$(basename "$f" .gz)" ||
    fail "$f differs from man/$(basename "$f" .gz)"
done
while read -r link target; do
  [ "$(readlink "$tmp/local/$link")" = "$target" ] || fail "$link in the tarball is not a link to $target"
done < <(man_install_list "$src" | grep ' ')
cmp -s "$tmp/local/share/bash-completion/completions/redlock" "$src/completions/redlock.bash" ||
  fail "the bash completion differs from completions/redlock.bash"

exe=$tmp/local/bin/redlock
needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
  case $lib in
    libc.so.* | libm.so.* | ld-linux*) ;;
    *) fail "the binary loads $lib at run time; only the C library should be: $(tr '\n' ' ' <<<"$needed")" ;;
  esac
done
# The oldest glibc that runs it is the one the README names: the newest
# symbol version it needs (objdump -T), or 2.36 when it needs
# GLIBC_ABI_DT_RELR (relative relocations stored packed, -z
# pack-relative-relocs), which no earlier glibc provides: its loader refuses
# the binary, whatever its symbols.
newest=$(objdump -T "$exe" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
# (grep reads objdump's whole output: `| grep -q` under pipefail fails when
# grep stops early and objdump gets SIGPIPE.)
if grep -qw GLIBC_ABI_DT_RELR <<<"$(objdump -p "$exe")"; then
  newest=$(printf '%s\n' "$newest" 2.36 | sort -V | tail -1)
fi
grep -q "glibc $newest or later" "$src/README.md" ||
  fail "the binary needs glibc $newest (objdump -T, -p); README.md does not say 'glibc $newest or later'"

out=$("$exe" --version 2>&1) || fail "redlock --version failed: $out"
grep -qx "redlock $version" <<<"$out" || fail "--version lacks 'redlock $version': $out"

# One lock, against a server of its own.
start_redis "$tmp" || exit 1
export REDLOCK_URL=$REDIS_URL REDLOCK_PREFIX=tgz:
out=$("$exe" exec --ttl 5s from-tarball -- sh -c 'echo "fence $REDLOCK_FENCE"' 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "exec from the tarball exited $rc: $out"
grep -qE '^fence [0-9]+$' <<<"$out" || fail "exec from the tarball did not run its command: $out"
tok=$("$exe" acquire --ttl 5s from-tarball 2>&1) || fail "acquire from the tarball failed: $tok"
"$exe" release --token "$tok" from-tarball || fail "release from the tarball failed"

((failures)) && exit 1
echo "package: $(basename "$tarball") unpacks and runs (glibc $newest or later)"
