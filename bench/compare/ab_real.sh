#!/usr/bin/env bash
# What `accelbench ab` detects on this machine (a benchmark, not a test): a planted slowdown of a
# real program, measured end to end through the command as a user runs it.
#
# The program (C, compiled with cc into a temporary folder) does N iterations of floating-point
# arithmetic per sample and reports each sample's seconds on the results protocol
# (docs/external.md); the candidate does FACTOR x N. Each kind is ONE `accelbench ab` over a sweep
# of configs (idx=1..K), as an A/B of a suite runs: each round runs each side once, in a fresh
# process, in a randomized order, and compare judges every config paired by round, the configs'
# variances moderated toward each other:
#   A/A       FACTOR 1 on both sides: a verdict of regressed or improved is a false alarm;
#   A/B +E%   FACTOR 1 + E/100 for the candidate: regressed is a detection.
# It prints, per kind, the verdicts, the detection or false-alarm rate, the paired per-round noise
# and the wall time with the process start/export overhead `ab` measured.
#
# Usage: bench/compare/ab_real.sh [--exe PATH] [--aa N] [--configs N] [--rounds R]
#          [--samples S] [--work N] [--effects 2,5,10] [--threshold PCT] [--busy N]
#   --aa N         A/A configs (default 200)
#   --configs N    A/B configs per effect (default 100)
#   --rounds R     rounds (default 10)
#   --samples S    samples per side per round, all from one run of the program (default 5)
#   --work N       iterations per sample (default 2500000: about 10 ms)
#   --effects LIST slowdowns in percent (default 2,5,10)
#   --threshold P  compare's minimum effect in percent (default 2: a threshold of 5% calls a true
#                  5% change about half the time by definition)
#   --busy N       keep N cores busy with a spin loop meanwhile (default 0)
# A short run: bench/compare/ab_real.sh --aa 20 --configs 10 --rounds 5
# Every comparison runs with --trust-loaded: on a shared machine the load conditions would make
# every verdict inconclusive, and this measures what the statistics detect.
set -euo pipefail
cd "$(dirname "$0")/../.."
exe=build/accelbench aa=200 configs=100 rounds=10 samples=5 work=2500000 effects=2,5,10
threshold=2 busy=0
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
    --busy) busy=$2; shift 2 ;;
    *) echo "ab_real: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x $exe ]] || { echo "ab_real: no accelbench at '$exe' (build it, or give --exe)" >&2; exit 2; }
command -v cc >/dev/null || { echo "ab_real: cc not found (scripts/install-deps.sh installs it)" >&2; exit 2; }

tmp=$(mktemp -d)
spinners=()
cleanup() {
  ((${#spinners[@]})) && kill "${spinners[@]}" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cat >"$tmp/work.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
int main(int argc, char** argv) {
  if (argc != 4 || !getenv("ACCELBENCH_RESULTS_FD"))
    return 2;
  const long n = (long)(atof(argv[1]) * atof(argv[2]));
  const int samples = atoi(argv[3]);
  FILE* out = fdopen(atoi(getenv("ACCELBENCH_RESULTS_FD")), "w");
  volatile double x = 0;
  for (long i = 0; i < n; ++i) /* untimed: caches and frequency settle */
    x = x * 0.999999 + (double)i;
  for (int s = 0; s < samples; ++s) {
    const double t = now();
    for (long i = 0; i < n; ++i)
      x = x * 0.999999 + (double)i;
    fprintf(out, "{\"sample\": {\"seconds\": %.9g}}\n", now() - t);
    fflush(out);
  }
  return 0;
}
C
cc -O2 -o "$tmp/work" "$tmp/work.c"
for ((i = 0; i < busy; ++i)); do
  (while :; do :; done) &
  spinners+=($!)
done

# one_kind KIND FACTOR K: one `accelbench ab` of K configs; prints its summary.
one_kind() {
  local kind=$1 factor=$2 k=$3 dir="$tmp/$RANDOM" rc=0 start=$SECONDS
  ((k > 0)) || return 0
  mkdir "$dir"
  "$exe" ab external --name work --sweep "idx=$(seq -s, 1 "$k")" --set "work=$work" \
    --set "samples=$samples" --rule "repetitions=$samples" --rule warmup_iterations=0 \
    --baseline-args "--set factor=1" --candidate-args "--set factor=$factor" \
    --rounds "$rounds" --tag "k$RANDOM" --db "$dir/ab.db" --trust-loaded --threshold "$threshold" \
    --format json -o "$dir/compare.json" \
    -- "$tmp/work" '{work}' '{factor}' '{samples}' 2>"$dir/err.txt" || rc=$?
  if ((rc != 0 && rc != 1)); then
    echo "ab_real: $kind failed (exit $rc):" >&2
    tail -5 "$dir/err.txt" >&2
    exit 1
  fi
  python3 - "$kind" "$dir/compare.json" "$dir/err.txt" "$((SECONDS - start))" <<'PY'
import collections, json, re, sys
kind, cmp, err, wall = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read(), sys.argv[4]
verdicts = collections.Counter(p["verdict"] for p in cmp["pairs"])
n = sum(verdicts.values())
listing = ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items()))
noise = re.search(r"whose spread pooled over the pairs is ([0-9.]+%)", " ".join(cmp["notes"]))
over = re.search(r"overhead ([0-9.]+) s of ([0-9.]+) s", err)
sees = sorted(p["detectable_pct"] for p in cmp["pairs"] if p.get("detectable_pct"))
tail = (f"paired per-round noise {noise.group(1) if noise else '?'}, median 'sees >=' "
        f"{sees[len(sees) // 2]:.1f}%, wall {wall} s (overhead {over.group(1) if over else '?'} s)")
if kind == "A/A":
    alarms = verdicts["regressed"] + verdicts["improved"]
    print(f"A/A   {n:4d} configs: false alarms {alarms} ({100 * alarms / n:.1f}%); {tail}  [{listing}]")
else:
    hit = verdicts["regressed"]
    print(f"{kind:5s} {n:4d} configs: detected {hit} ({100 * hit / n:.1f}%); {tail}  [{listing}]")
PY
}

echo "ab_real: $rounds rounds, $samples samples a side a round, work $work iterations a sample," \
  "threshold $threshold%, alpha 0.01, $busy core(s) kept busy; $(nproc) cores:" \
  "$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
one_kind A/A 1 "$aa"
IFS=, read -ra effect_list <<<"$effects"
for e in "${effect_list[@]}"; do
  one_kind "+$e%" "$(python3 -c "print(1 + $e / 100)")" "$configs"
done
