#!/usr/bin/env bash
# Installing and packaging: `cmake --install` into a DESTDIR and `cpack -G
# DEB` into a temporary directory put every file where the issue says; the
# binary links hiredis, fmt and the C++ runtime statically, so it loads only
# the C library at start-up, the .deb's Depends names libc6 and no library
# that is linked in, and the description says so; OpenSSL is loaded only for
# rediss://, so Depends names libssl3 (dpkg-shlibdeps cannot see a dlopen);
# the binary unpacked from the .deb runs and prints redlock's, hiredis's and
# OpenSSL's versions.
# Usage: package_deb.sh REDLOCK_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$2 build=$3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$src/tests/shell/lib/check.bash"
source "$src/tests/shell/lib/man.bash"

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "FAIL: no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt" >&2; exit 1; }

# Where each file must land, relative to the root of the installed system:
# every man page in the directory of its section, and a link for each other
# name its NAME line gives (man_links: "LINK TARGET").
mapfile -t man_pages < <(man_install_list "$src" | grep -v ' ' | sed 's|^|usr/|')
mapfile -t man_links < <(man_install_list "$src" | grep ' ' | sed 's|^|usr/|')
expected_files=(
  usr/bin/redlock
  "${man_pages[@]}"
  usr/share/doc/redlock/copyright
  usr/share/doc/redlock/changelog.gz
  usr/share/bash-completion/completions/redlock
  usr/share/zsh/vendor-completions/_redlock
  usr/share/fish/vendor_completions.d/redlock.fish
)
# check_tree ROOT WHAT: the files are there, the binary runs, the data files
# are the source tree's.
check_tree() {
  local root=$1 what=$2 f out link target
  for f in "${expected_files[@]}"; do
    [ -f "$root/$f" ] || fail "$what: no /$f"
  done
  [ -x "$root/usr/bin/redlock" ] || fail "$what: /usr/bin/redlock is not executable"
  for f in "${man_pages[@]}"; do
    [ -f "$root/$f" ] || continue
    cmp -s <(gzip -dc "$root/$f") "$src/man/$(basename "$f" .gz)" ||
      fail "$what: /$f differs from man/$(basename "$f" .gz)"
  done
  for f in "${man_links[@]}"; do
    read -r link target <<<"$f"
    [ -L "$root/$link" ] && [ "$(readlink "$root/$link")" = "$target" ] || fail "$what: /$link is not a link to $target"
  done
  cmp -s "$root/usr/share/doc/redlock/copyright" "$src/packaging/copyright" ||
    fail "$what: the copyright file differs from packaging/copyright"
  cmp -s "$root/usr/share/bash-completion/completions/redlock" "$src/completions/redlock.bash" ||
    fail "$what: the bash completion differs from completions/redlock.bash"
  cmp -s "$root/usr/share/zsh/vendor-completions/_redlock" "$src/completions/_redlock" ||
    fail "$what: the zsh completion differs from completions/_redlock"
  cmp -s "$root/usr/share/fish/vendor_completions.d/redlock.fish" "$src/completions/redlock.fish" ||
    fail "$what: the fish completion differs from completions/redlock.fish"
  if ! out=$("$root/usr/bin/redlock" --version 2>&1); then
    fail "$what: redlock --version failed: $out"
    return
  fi
  grep -qx "redlock $version" <<<"$out" || fail "$what: --version lacks 'redlock $version': $out"
  grep -qE '^hiredis [0-9]+\.[0-9]+\.[0-9]+$' <<<"$out" || fail "$what: --version lacks the hiredis version: $out"
  grep -qE '^OpenSSL [0-9]+\.[0-9]+' <<<"$out" || fail "$what: --version lacks the OpenSSL version: $out"
}

# --- cmake --install ------------------------------------------------------------
if DESTDIR="$tmp/destdir" cmake --install "$build" --prefix /usr >"$tmp/install.log" 2>&1; then
  check_tree "$tmp/destdir" "cmake --install"
  # man(1) finds a command's page by the command's name, also one that
  # shares a page (renew, in redlock-acquire(1)).
  if command -v man >/dev/null; then
    for name in redlock redlock-exec redlock-renew redlock.conf redlock-safety; do
      MANPATH=$tmp/destdir/usr/share/man man -w "$name" >/dev/null 2>&1 ||
        fail "cmake --install: man -w $name finds no page under /usr/share/man"
    done
  fi
else
  fail "cmake --install failed:"$'\n'"$(cat "$tmp/install.log")"
fi

# --- cpack -G DEB -------------------------------------------------------------------
if ! (cd "$build" && cpack -G DEB -B "$tmp/out") >"$tmp/cpack.log" 2>&1; then
  echo "FAIL: cpack -G DEB failed:" >&2
  cat "$tmp/cpack.log" >&2
  exit 1
fi
debs=("$tmp"/out/*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || { echo "FAIL: expected one .deb, got: ${debs[*]}" >&2; exit 1; }
deb=${debs[0]}

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = redlock ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', expected $version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is '$(field Architecture)'"
grep -qE '^[^<]+ <[^@>]+@[^>]+>$' <<<"$(field Maintainer)" || fail "Maintainer is '$(field Maintainer)'"
[ -n "$(field Description)" ] || fail "no Description"
[ "$(field Section)" = utils ] || fail "Section is '$(field Section)'"

depends=$(field Depends)
grep -qE "(^|, )libc6( |,|\$)" <<<"$depends" || fail "Depends lacks libc6: $depends"
grep -qE "(^|, )libssl3( |,|\$)" <<<"$depends" || fail "Depends lacks libssl3 (loaded for rediss://): $depends"
for lib in libhiredis libfmt libstdc++ libgcc-s; do
  grep -qF "$lib" <<<"$depends" && fail "Depends names $lib, which is linked into the binary: $depends"
done
grep -qi 'linked statically' <<<"$(field Description)" ||
  fail "the Description does not say which libraries are linked statically: $(field Description)"
# Every package Depends names exists (and is installed here, where it was built).
for pkg in $(sed 's/([^)]*)//g; s/|/,/g; s/,/ /g' <<<"$depends"); do
  grep -q 'install ok installed' <<<"$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" ||
    fail "Depends names $pkg, which is not an installed package"
done

# Unpack into a scratch root and run what is there.
dpkg-deb -x "$deb" "$tmp/root" || fail "dpkg-deb -x failed"
check_tree "$tmp/root" ".deb"
# Nothing outside /usr, and nothing unexpected in it.
unexpected=$(cd "$tmp/root" && find . -type f | sed 's|^\./||' | sort |
  grep -vxF -f <(printf '%s\n' "${expected_files[@]}") || true)
[ -z "$unexpected" ] || fail "unexpected files in the .deb: $unexpected"
if grep -q 'not found' <<<"$(ldd "$tmp/root/usr/bin/redlock")"; then
  fail "the packaged binary has unresolved libraries: $(ldd "$tmp/root/usr/bin/redlock" | grep 'not found')"
fi
grep -q 'not stripped' <<<"$(file "$tmp/root/usr/bin/redlock")" && fail "the packaged binary is not stripped"
needed=$(readelf -d "$tmp/root/usr/bin/redlock" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
# Packed relocations (DT_RELR) need glibc 2.36, which no symbol version says.
if readelf -d "$tmp/root/usr/bin/redlock" | grep -q RELR; then
  grep -qF "libc6 (>= 2.36)" <<<"$depends" || fail "packed relocations need libc6 (>= 2.36): $depends"
fi
for lib in $needed; do
  case $lib in
    libc.so.* | libm.so.* | ld-linux*) ;;
    *) fail "the packaged binary loads $lib at run time; only the C library should be: $(tr '\n' ' ' <<<"$needed")" ;;
  esac
done

# Debian policy at the error and warning level. Lintian knows about the
# libraries linked in on purpose only from the overrides the package carries.
if command -v lintian >/dev/null; then
  lint=$(lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$deb" 2>&1) ||
    fail "lintian finds errors or warnings in the .deb:"$'\n'"$lint"
else
  fail "lintian is not installed (scripts/setup installs it): the .deb cannot be checked against Debian policy"
fi

if ((failures)); then
  exit 1
fi
echo "package: $(basename "$deb") is complete (Depends: $depends)"
