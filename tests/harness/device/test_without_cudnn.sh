#!/usr/bin/env bash
# without_cudnn (tests/harness/device/CMakeLists.txt): accelbench starts, and `env` and a CPU GEMM
# run, on a machine whose cuDNN cannot be found: cuDNN is opened on first use
# (harness/device/cudnn_lazy.cpp), never a library the program needs to start. The folder that
# holds cuDNN is replaced, in a mount namespace of this test only, by one holding hard links to
# every other library of it (cuBLASLt, NCCL...). Skipped (77), with the reason, where a mount
# namespace or hard links cannot be made (not root, another file system).
#   test_without_cudnn.sh ACCELBENCH_EXE
set -u -o pipefail
exe=$1
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
cudnn=$(ldd "$exe" | awk '/libcudnn/ {print $3}')
[ -z "$cudnn" ] || fail "accelbench needs $cudnn to start"
# Where the loader and the configured fallback would find cuDNN: the folder of libcudnn.so.9.
found=$(ldconfig -p | awk '/libcudnn\.so\.9 .*x86-64/ {print $NF; exit}')
[ -n "$found" ] || found=$(ls /usr/local/cuda/lib64/libcudnn.so.9 2>/dev/null)
[ -n "$found" ] || skip "no cuDNN on this machine: nothing to hide"
dir=$(dirname "$(readlink -f "$found")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lib" "$tmp/home"
for f in "$dir"/*; do
  case $(basename "$f") in libcudnn*) continue ;; esac
  [ -f "$f" ] || continue
  ln "$(readlink -f "$f")" "$tmp/lib/$(basename "$f")" 2>/dev/null ||
    skip "cannot hard-link $f into $tmp (another file system)"
done
unshare -m true 2>/dev/null || skip "no mount namespace here (unshare -m needs root)"
HOME=$tmp/home unshare -m bash -c '
  mount --bind "$1" "$2" || exit 3
  "$3" env > "$4/env.txt" 2> "$4/env.err" || exit 4
  "$3" run gemm --backend cpu --set M=32 --set N=32 --set K=32 --rule repetitions=2 \
    --rule min_time_s=0 --rule min_warmup_time_s=0 --rule max_time_s=600 --quiet \
    --db "$4/r.db" > "$4/run.txt" 2> "$4/run.err" || exit 5
' _ "$tmp/lib" "$dir" "$exe" "$tmp"
rc=$?
[ "$rc" -ne 3 ] || skip "cannot bind-mount over $dir"
[ "$rc" -eq 0 ] || fail "exit $rc without cuDNN: $(cat "$tmp"/*.err 2>/dev/null | head -5)"
grep -q 'cannot load cuDNN' "$tmp/env.err" || fail "env did not say why cuDNN is missing: $(cat "$tmp/env.err")"
! grep -qE '^library +cudnn ' "$tmp/env.txt" || fail "env records a cuDNN version it could not load"
grep -qE '^library +cublaslt ' "$tmp/env.txt" || fail "cuBLASLt beside the hidden cuDNN was not loaded"
grep -q 'stored' "$tmp/run.txt" "$tmp/run.err" || fail "the CPU GEMM stored nothing: $(cat "$tmp/run.txt")"
echo "PASS: accelbench env and a CPU GEMM without cuDNN ($dir hidden)"
