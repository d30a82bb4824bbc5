#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the C++ sources a change touches, or the whole tree with --all,
# through build/compile_commands.json (scripts/build.sh writes it). Prints each finding and, last,
# "tidy: N findings in M files". Exit 1 when there are findings and --strict is given.
# Usage: scripts/tidy.sh [--base REV] [--all] [--strict] [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
base=origin/main all=0 strict=0 build=build
while (($#)); do
  case $1 in
    --base) base=$2; shift 2 ;;
    --all) all=1; shift ;;
    --strict) strict=1; shift ;;
    --build) build=$2; shift 2 ;;
    *) echo "tidy: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[[ -n $tidy ]] || { echo "tidy: clang-tidy not found (scripts/install-deps.sh --test installs it)" >&2; exit 2; }
[[ -f $build/compile_commands.json ]] || { echo "tidy: no $build/compile_commands.json: build first (scripts/build.sh)" >&2; exit 2; }
git rev-parse -q --verify "$base^{commit}" >/dev/null || base=HEAD
if ((all)); then
  mapfile -t files < <(git ls-files -- 'harness/*.cpp' 'importers/*.cpp' 'kernels/*.cpp' 'reporters/*.cpp' 'workloads/*.cpp')
else
  mapfile -t files < <({ git diff --name-only --diff-filter=AMR "$base" -- 'harness/*.cpp' 'importers/*.cpp' 'kernels/*.cpp' 'reporters/*.cpp' 'workloads/*.cpp';
                         git ls-files --others --exclude-standard -- 'harness/*.cpp' 'importers/*.cpp' 'kernels/*.cpp' 'reporters/*.cpp' 'workloads/*.cpp'; } | sort -u)
fi
# Only files the build compiles (CUDA sources and files of modules left out have no entry).
mapfile -t files < <(for f in "${files[@]}"; do grep -q "\"file\": \".*/$f\"" "$build/compile_commands.json" && echo "$f"; done)
((${#files[@]})) || { echo "tidy: 0 findings in 0 files"; exit 0; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in "${files[@]}"; do
  "$tidy" -p "$build" --quiet "$f" 2>/dev/null | grep -E '^/.*: (warning|error): ' >>"$out" || true
done
sort -u "$out" -o "$out"
sed "s|^$PWD/||" "$out"
n=$(wc -l <"$out")
echo "tidy: $n findings in ${#files[@]} files"
((strict && n > 0)) && exit 1
exit 0
