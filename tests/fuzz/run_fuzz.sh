#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over a scratch copy of its seed corpus (the
# repository is never written), then prints one summary line:
#   fuzz: NAME executions=N corpus=FILES (seeds=S, new=K) crashes=C seconds=T
# Usage: run_fuzz.sh TARGET_EXE SEED_CORPUS_DIR SECONDS ARTIFACT_DIR [DICTIONARY]
# A finding (crash, sanitizer report, leak, timeout, out-of-memory, or an exception the target
# treats as a finding) exits non-zero and leaves the input in ARTIFACT_DIR (default: a folder in
# the scratch copy) with libFuzzer's report above the summary.
set -uo pipefail
exe=$1 seeds=$2 seconds=$3 artifacts=${4:-} dict=${5:-}
name=$(basename "$exe")
work=$(mktemp -d "${TMPDIR:-/tmp}/accelbench-$name.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/corpus"
cp -R "$seeds"/. "$work/corpus"/
n_seeds=$(find "$work/corpus" -type f | wc -l)
if [[ -z "$artifacts" ]]; then artifacts=$work/artifacts; fi
mkdir -p "$artifacts"
dict_arg=()
[[ -n "$dict" ]] && dict_arg=(-dict="$dict")

# -rss_limit_mb: a parser that grows without bound is a finding, not a slow test.
# -timeout: one input taking longer than this is a hang (a finding).
# -max_len: big enough for real files (a published MLPerf log is ~230 KB).
start=$(date +%s)
touch "$work/started"
# The targets' scratch files (fuzz_common.hpp) go under $work too: libFuzzer ends with _Exit, so
# no atexit handler removes them.
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -max_len=262144 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "${dict_arg[@]}" \
  "$work/corpus" >"$work/log" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
files=$(find "$work/corpus" -type f | wc -l)
crashes=$(find "$artifacts" -maxdepth 1 -type f -name "$name-*" -newer "$work/started" 2>/dev/null | wc -l)
if ((rc != 0)); then
  # The report: libFuzzer's and the sanitizers' lines, without the per-input progress lines.
  grep -v -E '^#[0-9]+|NEW_FUNC|^INFO:' "$work/log" | tail -80
  ((crashes == 0)) && crashes=1
  echo "fuzz: $name: finding (exit $rc); input saved under $artifacts (reproduce: $exe FILE)"
fi
echo "fuzz: $name executions=${execs:-0} corpus=$files (seeds=$n_seeds, new=$((files - n_seeds))) crashes=$crashes seconds=$elapsed"
exit "$rc"
