#!/usr/bin/env bash
# Every C++ file matches the committed .clang-format (clang-format-14).
set -euo pipefail
source_dir=$2
cd "$source_dir"
command -v clang-format-14 >/dev/null || { echo "FAIL: clang-format-14 is not installed (scripts/setup installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find src tests bench fuzz -name '*.[ch]pp' 2>/dev/null)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no C++ files found" >&2; exit 1; }
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format-14 --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "FAIL: not formatted (run: clang-format-14 -i ${bad[*]})" >&2
  exit 1
fi
echo "format: ${#files[@]} files match .clang-format"
