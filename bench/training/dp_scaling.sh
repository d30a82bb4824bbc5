#!/usr/bin/env bash
# Data-parallel train.llama on the CPU backend: the tiny model at 2 ranks against 1
# rank, one thread each, with the all-reduce overlapped with backward and not; then the report's
# scaling section (measured efficiency, and the alpha-beta projection's error at 2 ranks from the
# all-reduce figures measured here). Figures, not pass/fail; on a shared machine they move with
# the load (printed first).
#   bash bench/training/dp_scaling.sh [STEPS]      (after building accelbench)
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${1:-20}
ab=build/accelbench
mpirun=(mpirun --oversubscribe -np 2)
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/dp.db
train=(run train.llama --set model=tiny --set seq=64 --set batch=4 --set threads=1
       --set steps="$steps" --set bucket_kib=1024 --seed 1 --db "$db" --quiet)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
env -u OMPI_COMM_WORLD_SIZE "$ab" "${train[@]}" >/dev/null
for ov in 1 0; do
  "${mpirun[@]}" "$ab" "${train[@]}" --set overlap=$ov --set baseline=1 >/dev/null
done
# The all-reduce at the projection's sizes: 8 B (latency) and the 1 MiB bucket.
"${mpirun[@]}" "$ab" run collective --set op=allreduce --set dtype=fp32 --sweep bytes=8,1048576 \
  --rules kernel-quick --rule repetitions=10 --rule min_time_s=0.1 --db "$db" --quiet >/dev/null ||
  echo "(an all-reduce run was INVALID, e.g. judged noisy on this loaded machine: its figure is still used)"
"$ab" report --baseline workload=train.llama --candidate workload=collective --db "$db" \
  --json "$dir/r.json" >/dev/null || true # exit 1: no pairs (the sections are still written)
python3 - "$dir/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r.get("data_parallel_scaling", []):
    print(s["key"])
    print(f"{'N':>3} {'overlap':>7} {'tokens/s':>10} {'efficiency':>10} {'in-job eff':>10} "
          f"{'projection':>11} {'proj. error':>11}")
    for m in s["measured"]:
        f = lambda v, fmt: format(v, fmt) if v is not None else "-"
        print(f"{m['world_size']:>3} {m['overlap'] or '-':>7} {m['tokens_per_s']:>10.0f} "
              f"{100*m['efficiency']:>9.1f}% {f(m['in_job_efficiency'] and 100*m['in_job_efficiency'], '9.1f'):>9}% "
              f"{f(m['projected_tokens_per_s'], '11.0f'):>11} {f(m['projection_error_pct'], '+10.1f'):>10}%")
    p = s["projection"]
    print("projection inputs:", {k: p[k] for k in ("compute_s", "backward_s", "gradient_bytes",
          "buckets", "alpha_s", "busbw_gb_s", "busbw_at_bytes", "missing")})
PY
