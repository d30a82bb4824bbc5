#!/usr/bin/env bash
# gpu_bundle_no_gpu (tests/gpu_bundle/CMakeLists.txt): the bundle of `scripts/gpu-check.sh
# --prepare`, copied away from the build folder, run with `--from` under `env -i` (no build folder,
# no inherited library path) on a machine without a GPU. It must end with "no GPU", exit 5 and its
# summary, every CUDA test program started and counted as skipped (not passed), and every library
# that is not glibc, the driver or CUDA resolved from the bundle's own lib/ (checked here with ldd,
# independently of the script's own check).
#   test_gpu_bundle.sh SOURCE_DIR BUNDLE_DIR   (BUNDLE_DIR empty: CUDA not built -> skipped, 77)
set -u -o pipefail
src="$1" bundle="${2:-}"
fail() { echo "FAIL: $*"; exit 1; }
if [ -z "$bundle" ]; then
  echo "SKIPPED: CUDA backends not built (no nvcc when configured): there is no GPU bundle to prove"
  exit 77
fi
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIPPED: a GPU is present, so the no-GPU path cannot be proven here (run scripts/gpu-check.sh --from $bundle)"
  exit 77
fi
[ -f "$bundle/bundle.tar.xz" ] || fail "no bundle at $bundle (target gpu_bundle)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$bundle" "$tmp/b"
rm -rf "$tmp/b/unpacked"
mkdir "$tmp/b/unpacked" && xz -dc "$tmp/b/bundle.tar.xz" | tar -C "$tmp/b/unpacked" -xf - || fail "cannot unpack the bundle"
lib="$tmp/b/unpacked/lib"

# The manifest names the CUDA release the bundle was built with (what --from chooses the CUDA
# library folders by) and, as CUDA libraries, only the driver's and CUDA's.
m="$tmp/b/MANIFEST"
grep -q '^nvcc [0-9][0-9]*\.[0-9]' "$m" || fail "the manifest has no nvcc release: $(grep '^nvcc' "$m")"
grep -q '^cuda-major [0-9][0-9]*$' "$m" || fail "the manifest has no CUDA major: $(grep '^cuda-major' "$m")"
grep -q '^needs-raised-by lib[^ ]*\.so[^ ]* .*(the other files need GLIBC_[0-9.]*)$' "$m" ||
  fail "the manifest does not say which library raises the glibc requirement: $(grep '^needs' "$m")"
grep -qE '^mpi (bundled, not started: .*one process|none)' "$m" || fail "the manifest does not say what the bundle does with MPI"
cuda_sonames="$(sed -n 's/^cuda-sonames //p' "$m")"
# cuBLASLt and cuDNN are opened on first use: a missing or mismatched one fails its runs only,
# never the start of a program (env, the GEMM without cuDNN).
case " $cuda_sonames " in
  *" libcudnn"*|*" libcublas"*) fail "a program needs cuDNN or cuBLASLt to start: $cuda_sonames" ;;
esac
for so in $cuda_sonames; do
  case "$so" in
    libcuda.so*|libnvidia-*|libcublas*|libcudnn*|libcudart*|libnccl*|libnvrtc*|libnvJitLink*) ;;
    *) fail "the manifest lists $so as a CUDA library" ;;
  esac
done

# Bad input: one line, exit 2.
rc=0; env -i PATH=/usr/bin:/bin bash "$tmp/b/gpu-check.sh" --from "$tmp/nowhere" > "$tmp/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < "$tmp/bad.log")" -eq 1 ] && grep -q "$tmp/nowhere" "$tmp/bad.log" ||
  fail "--from a missing folder: exit $rc, $(cat "$tmp/bad.log")"
rc=0; env -i PATH=/usr/bin:/bin bash "$tmp/b/gpu-check.sh" --frm x > "$tmp/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "'--frm'" "$tmp/bad.log" || fail "unknown argument: exit $rc, $(cat "$tmp/bad.log")"

# Every library of every program: glibc, the driver and CUDA may come from the system, all others
# only from the bundle (the library path holds the bundle and, as on the GPU machine, CUDA).
cuda=/usr/local/cuda/lib64
for p in "$tmp/b/unpacked/bin/"*; do
  env -i LD_LIBRARY_PATH="$lib:$lib/cxx:$cuda" ldd "$p" > "$tmp/ldd.txt" 2>&1 || fail "ldd $(basename "$p"): $(cat "$tmp/ldd.txt")"
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case "$soname" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libmvec.so*|ld-linux*) continue ;;
      libcuda.so*|libnvidia-*|libcublas*|libcudnn*|libcudart*|libnccl*|libnvrtc*|libnvJitLink*) continue ;;
    esac
    case "$path" in
      "$lib"/*) ;;
      *) fail "$(basename "$p") needs $soname, resolved to '$path', not to the bundle" ;;
    esac
  done < "$tmp/ldd.txt"
done
echo "ldd: every non-glibc, non-CUDA library of $(ls "$tmp/b/unpacked/bin" | wc -l) programs resolves from the bundle"

# The run itself: no GPU here.
start=$(date +%s)
rc=0
# The machine's own LD_LIBRARY_PATH (where some hosts find the driver) is kept after the bundle's.
host_libs="$tmp/host-lib"
mkdir -p "$host_libs"
# A shell inside an mpirun job or a Slurm allocation: the launcher's variables must not make the
# programs start the bundle's relocated MPI.
env -i PATH=/usr/bin:/bin HOME="$tmp" TMPDIR="$tmp" LD_LIBRARY_PATH="$host_libs" \
  OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 PMIX_RANK=1 PMI_SIZE=2 \
  bash "$tmp/b/gpu-check.sh" --from "$tmp/b" --out "$tmp/out" > "$tmp/run.log" 2>&1 || rc=$?
cat "$tmp/run.log"
echo "--from without a GPU: exit $rc in $(( $(date +%s) - start )) s"
s="$tmp/out/summary.txt"
[ -f "$s" ] || fail "no summary written"
[ "$rc" -eq 5 ] || fail "exit $rc, not 5 (no GPU)"
grep -q '^no GPU: nothing measured' "$s" || fail "the summary does not say 'no GPU'"
grep -q '^libraries: all [1-9][0-9]* non-CUDA libraries resolve from the bundle' "$s" ||
  fail "the script's own library check did not pass"
grep -q '^CUDA library folders (CUDA [0-9]*): ' "$s" || fail "the summary does not say which CUDA library folders"
grep -q '^PASS env ' "$s" || fail "accelbench env did not pass"
grep -q '^launcher variables dropped for the programs (one process, no MPI): .*OMPI_COMM_WORLD_SIZE' "$s" ||
  fail "the launcher's variables were not dropped"
grep -q "^library path of the programs: $tmp/b/unpacked/lib[^ ]*:$host_libs\$" "$s" ||
  fail "the programs' library path drops the machine's LD_LIBRARY_PATH: $(grep '^library path' "$s")"
! grep -q '^FAIL' "$s" || fail "a step failed: $(grep '^FAIL' "$s")"
for t in test_cuda_device test_cuda_gemm test_cuda_attention test_cuda_training; do
  grep -q "^SKIPPED $t ([1-9][0-9]* case(s): no usable CUDA device" "$s" || fail "$t was not counted as skipped"
  grep '^skipped:' "$s" | grep -q " ${t}[ )]" || fail "$t is not in the skipped list"
done
grep '^passed:' "$s" | grep -q 'test_cuda' && fail "a skipped CUDA test was counted as passed"
grep -q '^total: [0-9]* s of the 480 s budget, exit 5$' "$s" || fail "the summary has no closing line with exit 5"
# What comes back from the device call: few files (it brings back 8 at most), a line per step.
n=$(find "$tmp/out" -type f | wc -l)
[ "$n" -le 8 ] || fail "$n files under OUT (the device call brings back 8): $(ls "$tmp/out")"
python3 - "$tmp/out/steps.jsonl" <<'PY' || fail "steps.jsonl"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
names = [r["step"] for r in rows]
want = ["env", "test_cuda_device", "test_cuda_gemm", "test_cuda_attention", "test_cuda_training"]
assert [n for n in names if n in want] == want, names
assert all(r["status"] == "skipped" and r["exit"] == 77 for r in rows if r["step"].startswith("test_")), rows
# A step ends at its cap; the 5 s beyond it are for a busy machine to end and reap the process.
assert all(r["seconds"] <= r["cap_s"] + 5 for r in rows), rows
PY
# Listed to a file first: `tar | grep -q` fails under pipefail when grep's early exit stops tar
# (SIGPIPE), which a loaded machine makes likely.
tar -tzf "$tmp/out/details.tar.gz" > "$tmp/details.txt" || fail "details.tar.gz cannot be read"
grep -q 'env.json$' "$tmp/details.txt" || fail "details.tar.gz has no env.json"

# Every step, as if there were a GPU (GPU_CHECK_ASSUME_GPU): every step runs and is recorded in
# plan order; each benchmark fails (no GPU) and its ratio is said to be missing; the summary is
# written. PyTorch is tests/gpu_bundle/fake_torch: its server answers, the bf16 GEMM peer passes,
# the fp8 one outruns its cap (the server is ended) and the next peer starts a new server, which
# refuses attention with a reason.
assumed() {  # BUDGET OUT [PYTHONPATH [ARGS...]]
  local rc=0 budget=$1 out=$2 pp=${3:-}
  shift $(($# < 3 ? $# : 3))
  env -i PATH=/usr/bin:/bin HOME="$tmp" TMPDIR="$tmp" GPU_CHECK_ASSUME_GPU=1 GPU_CHECK_BUDGET_S="$budget" \
    ${pp:+PYTHONPATH="$pp"} bash "$tmp/b/gpu-check.sh" --from "$tmp/b" --out "$out" "$@" > "$out.log" 2>&1 || rc=$?
  return "$rc"
}
check_steps() {  # STEPS.JSONL PASSING-PEER: every plan step recorded, in plan order
  python3 - "$1" "$tmp/b/unpacked/scripts" "${2:-}" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
import gpu_check_plan
rows = [json.loads(l) for l in open(sys.argv[1])]
names = [r["step"] for r in rows]
order = [s["name"] for s in gpu_check_plan.plan(90)["steps"]]
assert names == order, (names, order)
passing = {"torch_start", sys.argv[3]} if sys.argv[3] else set()
assert all((r["status"] == "passed") == (r["step"] in passing)
           for r in rows if r["kind"] in ("peer", "bench", "torch_start")), rows
PY
}
rc=0; start=$(date +%s); assumed 480 "$tmp/out2" "$src/tests/gpu_bundle/fake_torch" || rc=$?
echo "--from with GPU_CHECK_ASSUME_GPU=1 and a stand-in torch: exit $rc in $(( $(date +%s) - start )) s"
s="$tmp/out2/summary.txt"
[ "$rc" -eq 1 ] || { cat "$tmp/out2.log"; fail "assumed GPU: exit $rc, not 1"; }
grep -q '^total: [0-9]* s of the 480 s budget, exit 1$' "$s" || fail "assumed GPU: no closing line"
grep -q '^PASS torch_start .*0.0-fake' "$s" || fail "assumed GPU: the torch server did not start"
grep -q '^PASS torch_gemm_bf16 ' "$s" || fail "assumed GPU: the bf16 GEMM peer did not answer"
grep -q '^FAIL torch_gemm_fp8_e4m3: stopped at its limit of 7 s' "$s" || fail "assumed GPU: a peer past its cap"
grep -q "^FAIL torch_sdpa_fwd_c0 .*No module named 'torch.nn.attention'" "$s" ||
  fail "assumed GPU: the peer after a timeout had no new server"
grep -q '^ratio GEMM bf16 8192^3, bf16 out: missing (accelbench failed' "$s" || fail "assumed GPU: no missing ratio"
check_steps "$tmp/out2/steps.jsonl" torch_gemm_bf16 || fail "assumed GPU: steps.jsonl"
rerun=$(sed -n 's/^rerun: gpu-check.sh --from [^ ]* --only //p' "$s")
[[ ",$rerun," == *,gemm_bf16,* && ",$rerun," == *,torch_gemm_fp8_e4m3,* && ",$rerun," != *,torch_gemm_bf16,* ]] ||
  fail "assumed GPU: the rerun line does not name exactly what failed: '$rerun'"

# A second call with only what the first could not finish: the named steps (and nvidia-smi, env,
# PyTorch's start for a named peer), nothing else; a name that is no step is refused in one line.
rc=0; assumed 480 "$tmp/out4" "$src/tests/gpu_bundle/fake_torch" --only gemm_bf16,torch_gemm_bf16 || rc=$?
python3 - "$tmp/out4/steps.jsonl" <<'PY' || fail "--only: steps.jsonl"
import json, sys
names = [json.loads(l)["step"] for l in open(sys.argv[1])]
assert set(names) <= {"nvidia_smi", "env", "torch_start", "gemm_bf16", "torch_gemm_bf16"}, names
assert {"gemm_bf16", "torch_gemm_bf16", "torch_start"} <= set(names), names
PY
grep -q '^only the steps named by --only: gemm_bf16,torch_gemm_bf16$' "$tmp/out4/summary.txt" || fail "--only: not said"
grep -q '^rerun: gpu-check.sh --from .* --only gemm_bf16$' "$tmp/out4/summary.txt" || fail "--only: no rerun line for gemm_bf16"
rc=0; env -i PATH=/usr/bin:/bin bash "$tmp/b/gpu-check.sh" --from "$tmp/b" --only gemm_bf16,nosuch > "$tmp/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < "$tmp/bad.log")" -eq 1 ] && grep -q "'nosuch' is no step" "$tmp/bad.log" ||
  fail "--only with an unknown step: exit $rc, $(cat "$tmp/bad.log")"

# The same in a budget that leaves nothing after the setup and the summary's reserve: the steps
# say "no time left" (env still runs), and the summary is written within the budget.
rc=0; start=$(date +%s); assumed 16 "$tmp/out3" || rc=$?
took=$(( $(date +%s) - start ))
echo "--from with GPU_CHECK_ASSUME_GPU=1 and a 16 s budget: exit $rc in $took s"
s="$tmp/out3/summary.txt"
[ "$rc" -eq 1 ] || { cat "$tmp/out3.log"; fail "16 s budget: exit $rc, not 1"; }
# A hang guard, not a timing: what shows that the budget is kept is the steps cut with "no time
# left" and the closing line below; a busy machine may add seconds to the setup around them.
[ "$took" -le 56 ] || fail "a 16 s budget took $took s"
grep -q '^FAIL train_8b_block_bf16 .*no time left' "$s" || fail "16 s budget: the last benchmark was not cut"
grep -q '^total: [0-9]* s of the 16 s budget, exit 1$' "$s" || fail "16 s budget: no closing line"
check_steps "$tmp/out3/steps.jsonl" || fail "16 s budget: steps.jsonl"
grep -q '^FAIL torch_start' "$s" || fail "16 s budget: torch_start did not fail (no time left, or no GPU torch)"
echo "PASS"
