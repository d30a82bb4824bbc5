#!/usr/bin/env bash
# Fails when a C++ or CUDA source under version control does not follow .clang-format.
# Usage: scripts/check-format.sh [--fix] [ROOT]
# Exit: 0 all formatted, 1 files need formatting (listed), 77 clang-format 14 not installed.
set -euo pipefail
fix=0
if [[ "${1:-}" == "--fix" ]]; then fix=1; shift; fi
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
fmt="$(command -v clang-format-14 || true)"
if [[ -z "$fmt" ]]; then
  echo "SKIPPED: clang-format-14 is not installed (scripts/install-deps.sh --test installs it)"
  exit 77
fi
cd "$root"
# A clean clone is a git work tree; an exported tarball is not: then check every source file.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.c')
else
  mapfile -t files < <(find . -path ./build -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' \
    -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name '*.c' \) -print | grep -v '/build')
fi
# One clang-format process over all files (a process per file took minutes on a loaded machine):
# --dry-run prints "FILE:LINE:COL: warning: code should be clang-formatted" per difference.
mapfile -t bad < <("$fmt" --style=file --dry-run "${files[@]}" 2>&1 |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if (( ${#bad[@]} == 0 )); then
  echo "check-format: ${#files[@]} files follow .clang-format"
  exit 0
fi
if (( fix )); then
  "$fmt" --style=file -i "${bad[@]}"
  echo "check-format: reformatted ${#bad[@]} file(s)"
  exit 0
fi
printf 'not formatted: %s\n' "${bad[@]}"
echo "check-format: ${#bad[@]} of ${#files[@]} files do not follow .clang-format (fix: scripts/check-format.sh --fix)"
exit 1
