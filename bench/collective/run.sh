#!/usr/bin/env bash
# MPI all-reduce bus bandwidth at 2 ranks: accelbench's collective workload side by side with a
# minimal MPI_Allreduce loop in C on the same Open MPI (fp32, sum, out of place), and the
# per-sample overhead of the harness at world size 2 vs 1. Figures, not pass/fail.
#   bash bench/collective/run.sh [SIZES]      (after building accelbench and the bench targets)
# SIZES: bytes, comma-separated (default 1 KiB, 1 MiB, 64 MiB, 1 GiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
sizes=${1:-1024,1048576,67108864,1073741824}
b=build/bench/collective
ab=build/accelbench
mpirun=(mpirun --oversubscribe -np 2)
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
db=$(mktemp -d)/bench.db
trap 'rm -rf "$(dirname "$db")"' EXIT

# Iterations per sample of the C loop: about 0.2 s a sample at this machine's rates.
iters_for() { local s=$1; if ((s <= 4096)); then echo 20000; elif ((s <= 1048576)); then echo 200;
              elif ((s <= 67108864)); then echo 8; else echo 1; fi; }

printf "%12s  %14s  %14s  %8s  validity   (busbw GB/s, 2 ranks, median of 10 samples; ratio = accelbench / C)\n" bytes C_loop accelbench ratio
IFS=, read -ra list <<<"$sizes"
for s in "${list[@]}"; do
  c=$("${mpirun[@]}" "$b/accelbench_bench_mpi_allreduce_loop" "$s" "$(iters_for "$s")" 10 | awk '{print $4}')
  # An INVALID run (a sample shorter than min_time_s on a loaded machine) still has its figure: it
  # is printed with its validity.
  "${mpirun[@]}" "$ab" run collective --set op=allreduce --set dtype=fp32 --set inplace=0 --set bytes="$s" \
    --rules kernel-quick --rule repetitions=10 --rule min_time_s=0.2 --rule max_time_s=300 \
    --db "$db" --json --quiet >"$db.out" 2>"$db.err" || true
  a=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print(next(m["value"] for m in r["metrics"] if m["name"]=="busbw"), r["validity"])' "$db.out")
  python3 -c "import sys; s,c,a,v=sys.argv[1:]; print(f'{int(s):12d}  {float(c):14.4f}  {float(a):14.4f}  {float(a)/float(c):8.3f}  {v}')" "$s" "$c" $a
done
echo "per-sample overhead of the harness (agreement, barrier, gather of the rank times):"
"$b/accelbench_bench_dist_overhead"
"${mpirun[@]}" "$b/accelbench_bench_dist_overhead"
