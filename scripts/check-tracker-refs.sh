#!/usr/bin/env bash
# Fails on a comment that points to "issue N" of a tracker that is not in the repository: a reader
# of the clone cannot follow it, so the reason itself belongs in the comment. Reads every tracked
# source, script and CMake file (CTest check_tracker_refs).
#   bash scripts/check-tracker-refs.sh [ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIPPED: not a git checkout"; exit 77; }
pattern='\b[Ii]ssue #?[0-9]+'
mapfile -t hits < <(git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.inl' '*.c' '*.h' '*.sh' '*.py' \
                      '*.cmake' '*CMakeLists.txt' ':!scripts/check-tracker-refs.sh' |
                    xargs -r grep -nE "$pattern" -- 2>/dev/null || true)
if ((${#hits[@]})); then
  printf '%s\n' "${hits[@]}"
  echo "check-tracker-refs: ${#hits[@]} reference(s) to a tracker issue; write the reason instead" >&2
  exit 1
fi
echo "check-tracker-refs: no references to tracker issues"
