#!/usr/bin/env bash
# What `accelbench ab` detects on this machine (a benchmark, not a test): a planted slowdown of a
# real program, measured end to end through the command as a user runs it.
#
# The program (python3, written to a temporary folder) does N iterations of floating-point
# arithmetic per sample and reports each sample's seconds on the results protocol
# (docs/external.md); the candidate does FACTOR x N. Each config is one `accelbench ab` of its own
# (its own database, R rounds, each side in a fresh process per round):
#   A/A       FACTOR 1 on both sides: a verdict of regressed or improved is a false alarm;
#   A/B +E%   FACTOR 1 + E/100 for the candidate: regressed is a detection.
# It prints, per kind, the configs and their verdicts, the detection or false-alarm rate, and the
# wall time with the process start/export overhead `ab` measured.
#
# Usage: bench/compare/ab_real.sh [--exe PATH] [--aa N] [--configs N] [--rounds R]
#          [--samples S] [--work N] [--effects 2,5,10] [--threshold PCT]
#   --aa N         A/A configs (default 200)
#   --configs N    A/B configs per effect (default 100)
#   --rounds R     rounds per config (default 10)
#   --samples S    samples per side per round, all from one run of the program (default 5)
#   --work N       iterations per sample (default 200000: about 10-20 ms in CPython)
#   --effects LIST slowdowns in percent (default 2,5,10)
#   --threshold P  compare's minimum effect in percent (default 1: below the smallest effect, so
#                  that a 2% slowdown can be called at all; the rulesets' default is 5)
# A short run: bench/compare/ab_real.sh --aa 3 --configs 2 --rounds 3
# Every comparison runs with --trust-loaded: on a shared machine the load conditions would make
# every verdict inconclusive, and this measures what the statistics detect.
set -euo pipefail
cd "$(dirname "$0")/../.."
exe=build/accelbench aa=200 configs=100 rounds=10 samples=5 work=200000 effects=2,5,10 threshold=1
while (($#)); do
  case $1 in
    --exe) exe=$2; shift 2 ;;
    --aa) aa=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --effects) effects=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    *) echo "ab_real: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x $exe ]] || { echo "ab_real: no accelbench at '$exe' (build it, or give --exe)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "ab_real: python3 not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/work.py" <<'PY'
import os, sys, time
iterations = int(float(sys.argv[1]) * float(sys.argv[2]))
samples = int(sys.argv[3])
out = os.fdopen(int(os.environ["ACCELBENCH_RESULTS_FD"]), "w", buffering=1)

def work(n):
    x = 0.0
    for i in range(n):
        x = x * 0.999999 + i
    return x

work(iterations)  # untimed: the interpreter's caches warm
for _ in range(samples):
    t = time.perf_counter()
    work(iterations)
    out.write('{"sample": {"seconds": %r}}\n' % (time.perf_counter() - t))
PY

# one_config KIND FACTOR INDEX: one `accelbench ab`; appends "KIND VERDICT SECONDS OVERHEAD_S".
one_config() {
  local kind=$1 factor=$2 i=$3 dir="$tmp/c"
  rm -rf "$dir" && mkdir "$dir"
  local start=$SECONDS rc=0
  "$exe" ab external --name work --set "work=$work" --set "samples=$samples" \
    --rule "repetitions=$samples" --rule warmup_iterations=0 \
    --baseline-args "--set factor=1" --candidate-args "--set factor=$factor" \
    --rounds "$rounds" --tag "$kind-$i" --db "$dir/ab.db" --trust-loaded --threshold "$threshold" \
    --format json -o "$dir/compare.json" --quiet \
    -- python3 "$tmp/work.py" '{work}' '{factor}' '{samples}' 2>"$dir/err.txt" || rc=$?
  if ((rc != 0 && rc != 1)); then
    echo "ab_real: $kind config $i failed (exit $rc):" >&2
    cat "$dir/err.txt" >&2
    exit 1
  fi
  local verdict overhead
  verdict=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pairs"][0]["verdict"])' \
    "$dir/compare.json")
  overhead=$(sed -n 's/^ab: process start\/export overhead \([0-9.]*\) s of .*/\1/p' "$dir/err.txt")
  echo "$kind $verdict $((SECONDS - start)) ${overhead:-0}" >>"$tmp/results.txt"
  echo "ab_real: $kind $i/$4: $verdict ($((SECONDS - start)) s)" >&2
}

: >"$tmp/results.txt"
started=$SECONDS
for ((i = 1; i <= aa; ++i)); do one_config A/A 1 "$i" "$aa"; done
IFS=, read -ra effect_list <<<"$effects"
for e in "${effect_list[@]}"; do
  factor=$(python3 -c "print(1 + $e / 100)")
  for ((i = 1; i <= configs; ++i)); do one_config "+$e%" "$factor" "$i" "$configs"; done
done

echo "ab_real: $rounds rounds a config, $samples samples a side a round, work $work iterations" \
  "a sample, threshold $threshold%, alpha 0.01 (compare's default), --trust-loaded"
python3 - "$tmp/results.txt" "$((SECONDS - started))" <<'PY'
import collections, sys
rows = [line.split() for line in open(sys.argv[1])]
kinds = list(dict.fromkeys(r[0] for r in rows))
for kind in kinds:
    verdicts = collections.Counter(r[1] for r in rows if r[0] == kind)
    n = sum(verdicts.values())
    listing = ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items()))
    if kind == "A/A":
        alarms = verdicts["regressed"] + verdicts["improved"]
        print(f"A/A   {n:4d} configs: false alarms {alarms} ({100 * alarms / n:.1f}%)  [{listing}]")
    else:
        hit = verdicts["regressed"]
        print(f"{kind:5s} {n:4d} configs: detected {hit} ({100 * hit / n:.1f}%)  [{listing}]")
ab_s = sum(float(r[2]) for r in rows)
overhead = sum(float(r[3]) for r in rows)
print(f"wall time {int(sys.argv[2])} s; the ab commands {ab_s:.0f} s, of which process "
      f"start/export overhead {overhead:.0f} s ({100 * overhead / max(ab_s, 1e-9):.0f}%)")
PY
