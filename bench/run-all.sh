#!/usr/bin/env bash
# Runs every benchmark of accelbench itself, one after another (never in parallel: they are
# measured side by side on a shared machine), and writes their figures to one log.
#   bash bench/run-all.sh [OUT.log]      (after scripts/build.sh)
# The time-to-train score is left out (about 12 minutes on 2 cores): run
#   ./build/accelbench run train.llama --set mode=time_to_train
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-results.log}
b=build/bench
{
  echo "== $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
  ./build/accelbench env --reprobe | grep -E "^(cpu|peak)"
  echo "== harness";   $b/harness/accelbench_bench_harness --reps 5
  echo "== attention"; $b/attention/accelbench_bench_attention --reps 3
  echo "== training";  $b/training/accelbench_bench_training --skip-ttt --steps 5
  echo "== compare";   $b/compare/accelbench_bench_compare
  echo "== compare calibration"; $b/compare/accelbench_bench_compare_calibration
  echo "== report";    $b/report/accelbench_bench_report
  echo "== mlperf";    $b/mlperf/accelbench_bench_mlperf_ingest
  echo "== store";     $b/store/accelbench_bench_store
  echo "== limits";    $b/store/accelbench_bench_limits
  echo "== external";  $b/external/accelbench_bench_external
  echo "== containment"; $b/external/accelbench_bench_containment
  echo "== plugin";    $b/plugin/accelbench_bench_plugin --rounds 11
  echo "== json input"; $b/harness/accelbench_bench_json_input
  echo "== collective (MPI, 2 ranks)"; bash bench/collective/run.sh
} 2>&1 | tee "$out"
