#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the C++ sources a change touches, or the whole tree with --all,
# through build/compile_commands.json (scripts/build.sh writes it). Prints each finding and, last,
# "tidy: N findings in M files". Exit 1 when there are findings and --strict is given.
# Usage: scripts/tidy.sh [--base REV | --last K [--max N] | --all] [--strict] [--ctest]
#                        [--jobs J] [--build DIR]
#   --base REV  the files changed since REV (default origin/main, else HEAD), and untracked ones;
#   --last K    the files changed by the last K first-parent commits, most recent first, at most
#               N of them (--max, default 8): what CTest check_tidy reads, sized to take a few
#               minutes on CI's 2 cores (clang-tidy takes 10 s to 2 min a file there);
#   --ctest     exit 77 (CTest's skip) with the reason when clang-tidy-14, the compile database or
#               the git history it needs is missing, instead of 2.
# The compile database is GCC's: the GCC-only warning flags in it (-Wno-error=restrict) are
# unknown to clang, which would report them on every file; -Wno-unknown-warning-option quiets that.
set -euo pipefail
cd "$(dirname "$0")/.."
base=origin/main last=0 max=8 all=0 strict=0 ctest=0 jobs=1 build=build
while (($#)); do
  case $1 in
    --base) base=$2; shift 2 ;;
    --last) last=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --all) all=1; shift ;;
    --strict) strict=1; shift ;;
    --ctest) ctest=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "tidy: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
# missing WHY: cannot run here (a skip under --ctest).
missing() {
  echo "tidy: $1" >&2
  ((ctest)) && { echo "SKIPPED: $1"; exit 77; }
  exit 2
}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[[ -n $tidy ]] || missing "clang-tidy-14 not found (scripts/install-deps.sh --test installs it)"
[[ -f $build/compile_commands.json ]] || missing "no $build/compile_commands.json: build first (scripts/build.sh)"
sources=('harness/*.cpp' 'importers/*.cpp' 'kernels/*.cpp' 'reporters/*.cpp' 'workloads/*.cpp')
if ((all)); then
  mapfile -t files < <(git ls-files -- "${sources[@]}")
elif ((last > 0)); then
  git rev-parse -q --verify "HEAD~$last^{commit}" >/dev/null 2>&1 ||
    missing "no git history $last commits deep here (a tarball or a shallow clone): nothing to call changed"
  mapfile -t files < <(git log --first-parent -n "$last" --diff-filter=AMR --name-only --format= -- "${sources[@]}" |
                       awk 'NF && !seen[$0]++')
else
  git rev-parse -q --verify "$base^{commit}" >/dev/null || base=HEAD
  mapfile -t files < <({ git diff --name-only --diff-filter=AMR "$base" -- "${sources[@]}";
                         git ls-files --others --exclude-standard -- "${sources[@]}"; } | sort -u)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A unity build (ACCELBENCH_UNITY_BUILD) compiles batches of sources: its database names the
# generated batch files. clang-tidy reads a copy with one entry per source of each batch, compiled
# with the batch's command, so every source is checked alone.
mkdir -p "$out/db"
python3 - "$build/compile_commands.json" "$out/db/compile_commands.json" <<'PY'
import json, re, sys
entries = []
for e in json.load(open(sys.argv[1], encoding="utf-8")):
    if not re.search(r"/Unity/unity_[0-9]+_cxx\.cxx$", e["file"]):
        entries.append(e)
        continue
    for src in re.findall(r'^#include "([^"]+)"', open(e["file"], encoding="utf-8").read(), re.M):
        entries.append(dict(e, file=src, command=e["command"].replace(e["file"], src)))
json.dump(entries, open(sys.argv[2], "w", encoding="utf-8"), indent=1)
PY
# Only files the build compiles (CUDA sources and files of modules left out have no entry), and
# that still exist (a later commit may have removed one).
mapfile -t files < <(for f in "${files[@]}"; do
                       [[ -f $f ]] && grep -q "\"file\": \".*/$f\"" "$out/db/compile_commands.json" && echo "$f"
                     done)
if ((last > 0 && ${#files[@]} > max)); then
  echo "tidy: ${#files[@]} files changed in the last $last commits; checking the $max most recent" >&2
  files=("${files[@]:0:max}")
fi
((${#files[@]})) || { echo "tidy: 0 findings in 0 files"; exit 0; }
# One output file per source, so that parallel runs do not interleave.
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -I{} bash -c 'f=$4; "$1" -p "$2" --quiet --extra-arg=-Wno-unknown-warning-option "$f" >"$3/${f//\//_}.txt" 2>&1 || true' \
    _ "$tidy" "$out/db" "$out" {}
# A file clang could not compile is a finding too (named by clang-tidy's "Error while processing"),
# never a silent 0.
cat "$out"/*.txt 2>/dev/null | grep -E '^/.*: (warning|error): |^Error while processing ' | sort -u >"$out/all" || true
sed "s|^$PWD/||" "$out/all"
n=$(wc -l <"$out/all")
echo "tidy: $n findings in ${#files[@]} files"
((strict && n > 0)) && exit 1
exit 0
