#!/usr/bin/env bash
# GPU check: the GPU tests and a short benchmark set next to PyTorch, in one short call on
# a bare GPU machine (no compiler run there, no Debian packages, no registry, no network).
#
#   scripts/gpu-check.sh --prepare DIR [--build BUILD]   # here: write the bundle into DIR
#   scripts/gpu-check.sh --from DIR [--out OUT]          # on the GPU machine: run it
#
# --prepare builds accelbench and the CUDA test programs for sm_90 and sm_100 (in BUILD, default
# ./build-gpu-bundle, configured here; with --build an existing CUDA build is used as it is, nothing
# is built), strips them, and writes DIR/bundle.tar.xz: bin/ (the programs), lib/ (every shared
# library they need except glibc, the NVIDIA driver and the CUDA libraries the GPU machine has:
# cuBLASLt, cuDNN, cudart, NCCL), share/ (rulesets, catalogues, models, schemas, suites) and
# scripts/ (this script and its Python peers), plus DIR/gpu-check.sh and DIR/MANIFEST. The
# bundle has to fit what can be carried to the GPU machine (64 MiB).
#
# --from unpacks DIR/bundle.tar.xz (into DIR/unpacked, once), finds cuBLASLt/cuDNN through
# PyTorch's `nvidia` packages and the CUDA installation, checks with ldd that every other library
# comes from the bundle, prints the GPU, driver, clocks and library versions, runs the CUDA tests
# (a skipped test is counted as skipped, never as passed), the GPU benchmarks with accelbench and
# the same shapes with PyTorch, and writes results.json (accelbench export), summary.txt (ratios)
# and the logs under OUT ($OUT, else ./out). 6 minutes of wall time in all (GPU_CHECK_BUDGET_S);
# each step has its own timeout, cut to what is left, and the summary is written whatever fails.
#
# Exit codes of --from: 0 every step passed; 1 a step failed (named in the summary); 2 usage or a
# bad bundle (message names it); 5 no GPU: the bundle was checked (libraries, programs start, the
# CUDA tests skip), nothing measured, the summary says "no GPU".
set -u -o pipefail
readonly NO_GPU_EXIT=5
die() { echo "gpu-check: $*" >&2; exit 2; }

usage() {
  echo "usage: gpu-check.sh --prepare DIR [--build BUILD] | --from DIR [--out OUT]" >&2
  exit 2
}

# ------------------------------------------------------------------------------------------------
# --prepare
# ------------------------------------------------------------------------------------------------
PROGRAMS="accelbench test_cuda_device test_cuda_gemm test_cuda_attention test_cuda_training"

# Libraries the GPU machine has, so never bundled: glibc, the driver, and the CUDA libraries that
# come with its CUDA installation or PyTorch's nvidia packages.
is_system_lib() {
  case "$1" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|\
    libutil.so*|libnsl.so*|libanl.so*|libmvec.so*) return 0 ;;
    libcuda.so*|libnvidia-*|libcublas.so*|libcublasLt.so*|libcudnn*|libcudart.so*|libnccl.so*|\
    libnvrtc*|libnvJitLink*) return 0 ;;
  esac
  return 1
}

# The shared libraries `exe` needs, transitively, as ldd resolves them here: "soname path" lines.
needed_libs() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
}

prepare() {
  local dir="$1" build="$2" own_build="$3"
  local root; root="$(cd "$(dirname "$0")/.." && pwd)"
  local t0; t0=$(date +%s)
  command -v xz > /dev/null || die "xz not found (needed to compress the bundle)"
  if [ "$own_build" = 1 ]; then
    command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
      die "nvcc not found: the bundle needs the CUDA build (install the CUDA toolkit)"
    echo "gpu-check: configuring and building $build (sm_90, sm_100)"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90;100" \
      > /dev/null || die "configure of $build failed"
    ninja -C "$build" $PROGRAMS || die "build in $build failed"
  fi
  stage="$(mktemp -d)"  # global: the EXIT trap runs after this function's locals are gone
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/bin" "$stage/lib" "$stage/share" "$stage/scripts"
  local p exe
  for p in $PROGRAMS; do
    exe="$(find "$build" -name "$p" -type f -perm -u+x | head -1)"
    [ -n "$exe" ] || die "$p not found in $build (a CUDA build of the project is needed: ACCELBENCH_ENABLE_CUDA=ON and nvcc)"
    cp "$exe" "$stage/bin/$p"
    strip --strip-unneeded "$stage/bin/$p"
  done
  # cuobjdump lists the embedded GPU code; without it (a toolkit without the binary utilities)
  # the architectures cannot be checked, which is said rather than guessed.
  local objdump
  objdump="$(command -v cuobjdump || { [ -x /usr/local/cuda/bin/cuobjdump ] && echo /usr/local/cuda/bin/cuobjdump; } || true)"
  if [ -z "$objdump" ]; then
    echo "gpu-check: note: cuobjdump not found; the GPU architectures of accelbench are not checked" >&2
  elif ! "$objdump" --list-elf "$stage/bin/accelbench" 2>/dev/null | grep -q "sm_100"; then
    echo "gpu-check: warning: accelbench has no sm_100 code (CMAKE_CUDA_ARCHITECTURES of $build)" >&2
  fi
  # Every library the programs need that the GPU machine lacks, by soname (dereferenced copies).
  local soname path
  for p in $PROGRAMS; do
    while read -r soname path; do
      is_system_lib "$soname" && continue
      [ -e "$stage/lib/$soname" ] || { cp -L "$path" "$stage/lib/$soname"; strip --strip-unneeded "$stage/lib/$soname" 2>/dev/null; }
    done < <(needed_libs "$stage/bin/$p")
  done
  # The C++ runtime apart (lib/cxx): Debian 12's needs glibc 2.36, newer than the rest of the
  # bundle; on an older glibc --from uses the machine's own libstdc++ when it is new enough.
  mkdir -p "$stage/lib/cxx"
  for soname in libstdc++.so.6 libgcc_s.so.1; do
    [ -e "$stage/lib/$soname" ] && mv "$stage/lib/$soname" "$stage/lib/cxx/"
  done
  # Data the CLI reads (ACCELBENCH_HOME): rulesets, catalogues, models, schemas, suites.
  (cd "$root" && git ls-files -z -- 'rulesets/*.json' 'workloads/*.json' 'schemas/*.json' 'suites/*.json' 2>/dev/null ||
     find rulesets workloads schemas suites -name '*.json' -print0 2>/dev/null) |
    (cd "$root" && xargs -0 -r cp --parents -t "$stage/share")
  cp "$root/scripts/gpu-check.sh" "$root/scripts/gpu_check_torch.py" "$root/scripts/gpu_check_summary.py" "$stage/scripts/"
  # The newest glibc symbol version the programs and libraries need (the GPU machine's glibc must
  # be at least that), the bundled C++ runtime's, and the newest libstdc++ symbol version needed.
  local glibc cxx_glibc glibcxx
  glibc="$(objdump -T "$stage"/bin/* "$stage"/lib/*.so* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  cxx_glibc="$(objdump -T "$stage"/lib/cxx/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  glibcxx="$(objdump -T "$stage"/bin/* "$stage"/lib/*.so* 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)"
  {
    echo "accelbench gpu bundle"
    echo "revision $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo '+dirty')"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
    echo "nvcc $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | cut -d' ' -f2)"
    echo "needs ${glibc:-GLIBC_unknown}"
    echo "cxx-needs ${cxx_glibc:-GLIBC_unknown}"
    echo "glibcxx ${glibcxx:-GLIBCXX_unknown}"
    echo "programs $PROGRAMS"
    echo "libraries $(cd "$stage/lib" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"
  } > "$stage/MANIFEST"
  mkdir -p "$dir"
  rm -rf "$dir/unpacked"
  # xz (which any machine, or Python's lzma, can undo) at -3 on all cores: ~27 MB in about half
  # the time of -6 (~23 MB); -9e (~21 MB) takes ten times as long.
  tar -C "$stage" -cf - . | xz -3 -T0 > "$dir/bundle.tar.xz.part" || die "compressing the bundle failed"
  mv "$dir/bundle.tar.xz.part" "$dir/bundle.tar.xz"
  cp "$stage/MANIFEST" "$dir/MANIFEST"
  cp "$root/scripts/gpu-check.sh" "$dir/gpu-check.sh"
  local bytes; bytes=$(du -cb "$dir/bundle.tar.xz" "$dir/MANIFEST" "$dir/gpu-check.sh" | tail -1 | cut -f1)
  echo "gpu-check: bundle $dir: $((bytes / 1024)) KiB ($(du -sb "$stage" | cut -f1 | awk '{printf "%.0f", $1/1048576}') MiB unpacked), $(( $(date +%s) - t0 )) s"
  if [ "$bytes" -gt $((64 * 1024 * 1024)) ]; then
    echo "gpu-check: the bundle ($bytes bytes) is over the 64 MiB that can be carried to the GPU machine" >&2
    exit 1
  fi
}

# ------------------------------------------------------------------------------------------------
# --from
# ------------------------------------------------------------------------------------------------
# Directories holding the CUDA libraries of the GPU machine: PyTorch's nvidia pip packages first
# (the libraries torch itself runs with), then the CUDA installation.
cuda_lib_dirs() {
  if command -v python3 > /dev/null; then
    timeout 20 python3 -c '
import os
try:
    import nvidia
except Exception:
    raise SystemExit(0)
for base in list(nvidia.__path__):
    for d, _, files in sorted(os.walk(base)):
        if any(".so" in f for f in files):
            print(d)
' 2>/dev/null
  fi
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/extras/CUPTI/lib64; do
    [ -d "$d" ] && echo "$d"
  done
}

# xz, or Python's lzma where the machine has no xz.
unxz_to_stdout() {
  if command -v xz > /dev/null; then xz -dc "$1"
  else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi
}

from() {
  local dir="$1"
  local t0; t0=$(date +%s)
  local budget="${GPU_CHECK_BUDGET_S:-360}"
  local deadline=$((t0 + budget))
  [ -f "$dir/bundle.tar.xz" ] || die "no bundle in '$dir' (expected $dir/bundle.tar.xz from --prepare)"
  OUT="${OUT:-$PWD/out}"
  mkdir -p "$OUT" || die "cannot create output folder '$OUT'"
  OUT="$(cd "$OUT" && pwd)"
  SUMMARY="$OUT/summary.txt"
  : > "$SUMMARY"
  local failed=() skipped=() passed=()
  say() { echo "$*" | tee -a "$SUMMARY"; }
  # Time left for a step: its own limit, cut so that 20 s remain for the summary.
  step_limit() {
    local want="$1" left=$((deadline - $(date +%s) - 20))
    [ "$left" -lt "$want" ] && want="$left"
    [ "$want" -lt 1 ] && want=1
    echo "$want"
  }
  finish() {  # the summary's last lines, whatever happened
    local code="$1"
    say "passed: ${#passed[@]}${passed[*]:+ (${passed[*]})}"
    say "skipped: ${#skipped[@]}${skipped[*]:+ (${skipped[*]})}"
    say "failed: ${#failed[@]}${failed[*]:+ (${failed[*]})}"
    say "total: $(( $(date +%s) - t0 )) s, exit $code"
    exit "$code"
  }

  local bundle="$dir/unpacked"
  if [ ! -f "$bundle/MANIFEST" ] || [ "$dir/bundle.tar.xz" -nt "$bundle/MANIFEST" ]; then
    rm -rf "$bundle.part" && mkdir -p "$bundle.part" &&
      unxz_to_stdout "$dir/bundle.tar.xz" | tar -C "$bundle.part" -xf - ||
      die "cannot unpack '$dir/bundle.tar.xz'"
    rm -rf "$bundle" && mv "$bundle.part" "$bundle"
    touch "$bundle/MANIFEST"
  fi
  bundle="$(cd "$bundle" && pwd)"
  local AB="$bundle/bin/accelbench"
  export ACCELBENCH_HOME="$bundle/share" ACCELBENCH_CACHE_DIR="$OUT/cache"
  # Our programs see the bundle's libraries, then the CUDA ones; python3 (torch) keeps its own.
  local cuda_dirs; cuda_dirs="$(cuda_lib_dirs | awk '!seen[$0]++' | paste -sd: -)"
  # The bundled C++ runtime where this glibc can load it, else the machine's own if it is new
  # enough (the newest GLIBCXX_ symbol version the bundle needs), else none (a FAIL below).
  local glibc_here cxx_needs glibcxx_needs cxx_dir="$bundle/lib/cxx" cxx_note="bundled"
  glibc_here="$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9][0-9.]*$')"
  cxx_needs="$(sed -n 's/^cxx-needs GLIBC_//p' "$bundle/MANIFEST")"
  glibcxx_needs="$(sed -n 's/^glibcxx //p' "$bundle/MANIFEST")"
  if [ -n "$glibc_here" ] && [ -n "$cxx_needs" ] &&
     [ "$(printf '%s\n' "$cxx_needs" "$glibc_here" | sort -V | head -1)" != "$cxx_needs" ]; then
    cxx_dir=""
    local sys_cxx; sys_cxx="$(/sbin/ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')"
    if [ -n "$sys_cxx" ] && grep -qa "$glibcxx_needs" "$sys_cxx"; then
      cxx_note="the machine's $sys_cxx (glibc $glibc_here is older than the bundled one's $cxx_needs)"
    else
      cxx_note="none usable: glibc $glibc_here < $cxx_needs and no libstdc++ with $glibcxx_needs here"
    fi
  fi
  local ABLIB="$bundle/lib${cxx_dir:+:$cxx_dir}${cuda_dirs:+:$cuda_dirs}"
  ab() { LD_LIBRARY_PATH="$ABLIB" "$@"; }

  say "accelbench gpu-check --from $dir on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  sed -n 's/^revision /bundle revision: /p; s/^built /bundle built: /p' "$bundle/MANIFEST" | tee -a "$SUMMARY"
  say "CUDA library folders: ${cuda_dirs:-none found}"
  say "C++ runtime: $cxx_note"
  local needs; needs="$(sed -n 's/^needs GLIBC_//p' "$bundle/MANIFEST")"
  say "glibc: ${glibc_here:-unknown} here; the bundle needs ${needs:-?}, its C++ runtime ${cxx_needs:-?}"
  if [ -n "$glibc_here" ] && [ -n "$needs" ] && [ "$(printf '%s\n' "$needs" "$glibc_here" | sort -V | head -1)" != "$needs" ]; then
    say "FAIL glibc $glibc_here here, the bundle needs $needs"; failed+=(glibc)
  fi
  case "$cxx_note" in none*) say "FAIL C++ runtime: the programs cannot start here"; failed+=(cxx-runtime) ;; esac

  # ---- libraries: every one not CUDA/driver/glibc must come from the bundle ----
  local p soname path bad=0 missing=0 from_bundle=0
  : > "$OUT/libraries.txt"
  for p in "$bundle"/bin/*; do
    echo "== $(basename "$p")" >> "$OUT/libraries.txt"
    ab ldd "$p" >> "$OUT/libraries.txt" 2>&1
  done
  while read -r soname path; do
    if [ "$path" = "not" ]; then
      is_system_lib "$soname" && { say "library $soname: not found (a CUDA library: see CUDA library folders)"; missing=1; continue; }
      say "FAIL library $soname: not found"; bad=1; continue
    fi
    is_system_lib "$soname" && continue
    case "$path" in
      "$bundle"/lib/*) from_bundle=$((from_bundle + 1)) ;;
      */libstdc++.so.6|*/libgcc_s.so.1) [ -z "$cxx_dir" ] || { say "FAIL library $soname resolved outside the bundle: $path"; bad=1; } ;;
      *) say "FAIL library $soname resolved outside the bundle: $path"; bad=1 ;;
    esac
  done < <(grep '=>' "$OUT/libraries.txt" | awk '{print $1, $3}' | sort -u)
  if [ "$bad" = 0 ]; then
    say "libraries: all $from_bundle non-CUDA libraries resolve from the bundle"
    passed+=(libraries)
  else
    failed+=(libraries)
  fi
  grep -E 'libcublasLt|libcudnn\.so' "$OUT/libraries.txt" | sed 's/^[[:space:]]*/CUDA library: /; s/ (0x[0-9a-f]*)$//' | sort -u | tee -a "$SUMMARY"

  # ---- the machine: GPU, driver, clocks, library versions ----
  local gpu=""
  if command -v nvidia-smi > /dev/null &&
     timeout 20 nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,clocks_throttle_reasons.active \
       --format=csv > "$OUT/nvidia-smi.csv" 2>&1; then
    gpu="$(sed -n 2p "$OUT/nvidia-smi.csv")"
    say "GPU: $gpu"
  else
    echo "nvidia-smi: $(command -v nvidia-smi || echo absent)" >> "$OUT/nvidia-smi.csv"
  fi
  local envrc=0
  ab timeout "$(step_limit 30)" "$AB" env --json > "$OUT/env.json" 2> "$OUT/env.log" || envrc=$?
  if [ "$envrc" -ne 0 ]; then
    say "FAIL accelbench env (exit $envrc, see env.log)"; failed+=(env)
  else
    passed+=(env)
  fi
  # What the CUDA stack of accelbench sees (one line) and whether a kernel can run.
  local avail; avail="$(python3 - "$OUT/env.json" <<'PY' 2>/dev/null
import json, sys
try:
    b = [x for x in json.load(open(sys.argv[1])).get("backends", []) if x.get("name") == "cuda"][0]
except Exception:
    print("unknown"); raise SystemExit
print(("yes" if b.get("available") else "no") + " | " + b.get("detail", ""))
PY
)"
  say "accelbench CUDA: ${avail:-unknown (python3 absent or env failed)}"

  # ---- CUDA tests: exit 0 passed, 77 skipped (tests/support/skip.hpp), anything else failed ----
  local t trc
  for t in test_cuda_device test_cuda_gemm test_cuda_attention test_cuda_training; do
    trc=0
    ab timeout "$(step_limit 60)" "$bundle/bin/$t" -r junit -o "$OUT/$t.xml" > "$OUT/$t.log" 2>&1 || trc=$?
    if [ "$trc" -eq 0 ]; then
      say "PASS $t"; passed+=("$t")
    elif [ "$trc" -eq 77 ]; then
      # The junit reporter keeps each case's output (the SKIPPED: lines of tests/support/skip.hpp) in its
      # <testcase> (and all of it once more for the suite): count the cases.
      say "SKIPPED $t ($(awk '/<testcase/ {c = 1} /<\/testcase>/ {c = 0} c && /^SKIPPED:/ {n++} END {print n + 0}' "$OUT/$t.xml" 2>/dev/null) case(s): $(grep -m1 '^SKIPPED:' "$OUT/$t.xml" 2>/dev/null | cut -c10-))"
      skipped+=("$t")
    else
      say "FAIL $t (exit $trc; see $t.log and $t.xml)"; failed+=("$t")
    fi
  done

  if [ -z "$gpu" ] || [ "${avail%% *}" != "yes" ]; then
    say "no GPU: nothing measured (nvidia-smi: ${gpu:-no GPU listed}; accelbench: ${avail:-unknown})"
    finish "$NO_GPU_EXIT"
  fi

  # ---- benchmarks: accelbench (each run stored in one database, exported at the end) ----
  local DB="$OUT/results.db" arch
  arch="$(echo "$gpu" | cut -d, -f2 | tr -d ' .')"
  bench() {  # name, limit, args...
    local name="$1" limit="$2"; shift 2
    local brc=0
    ab timeout "$(step_limit "$limit")" "$AB" run "$@" --backend cuda --db "$DB" --tag gpu-check --tag "$name" \
      --quiet --json > "$OUT/$name.json" 2> "$OUT/$name.log" || brc=$?
    if [ "$brc" -eq 0 ]; then passed+=("$name"); else say "FAIL accelbench $name (exit $brc, see $name.log)"; failed+=("$name"); fi
  }
  local gemm="--set M=8192 --set N=8192 --set K=8192 --set trans_b=1 --rules kernel-quick"
  local dt
  for dt in bf16 fp16 tf32 fp8_e4m3; do bench "gemm_$dt" 40 gemm $gemm --set dtype=$dt; done
  if [ "${arch:-0}" -ge 100 ]; then
    for dt in mxfp8 nvfp4; do bench "gemm_$dt" 40 gemm $gemm --set dtype=$dt; done
  fi
  local attn="--set batch=4 --set heads=16 --set seq_q=4096 --set head_dim=128 --set dtype=bf16 --rules kernel-quick"
  local impl c pass
  for c in 0 1; do
    bench "attn_cudnn_fwd_c$c" 40 attention $attn --set impl=cudnn --set pass=fwd --set causal=$c
    for impl in cudnn native; do
      bench "attn_${impl}_fwd_bwd_c$c" 60 attention $attn --set impl=$impl --set pass=fwd_bwd --set causal=$c
    done
  done
  bench train_8b_block_bf16 90 train.llama --set model=llama3-8b --set layers=1 --set seq=4096 --set batch=1 \
    --set dtype=bf16 --set steps=5
  ab timeout "$(step_limit 20)" "$AB" export --db "$DB" > "$OUT/results.json" 2> "$OUT/export.log" ||
    { say "FAIL export (see export.log)"; failed+=(export); }

  # ---- PyTorch, same shapes, same GPU, same run ----
  local trc2=0
  timeout "$(step_limit 100)" python3 "$bundle/scripts/gpu_check_torch.py" --arch "${arch:-0}" --out "$OUT/torch.json" \
    > "$OUT/torch.log" 2>&1 || trc2=$?
  if [ "$trc2" -eq 0 ]; then passed+=(torch); else say "FAIL torch benchmarks (exit $trc2, see torch.log)"; failed+=(torch); fi

  # ---- side by side: accelbench / torch, against the aims ----
  timeout "$(step_limit 20)" python3 "$bundle/scripts/gpu_check_summary.py" "$OUT" 2>&1 | tee -a "$SUMMARY"
  if [ "${#failed[@]}" -eq 0 ]; then finish 0; else finish 1; fi
}

# ------------------------------------------------------------------------------------------------
mode="" dir="" build="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare|--from) [ -z "$mode" ] || die "give one of --prepare and --from, not both"
                      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a folder"
                      mode="$1"; dir="$2"; shift 2 ;;
    --build) [ $# -ge 2 ] && [ -n "$2" ] || die "--build needs a folder"; build="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] && [ -n "$2" ] || die "--out needs a folder"; out="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1' (usage: gpu-check.sh --prepare DIR [--build BUILD] | --from DIR [--out OUT])" ;;
  esac
done
case "$mode" in
  --prepare)
    [ -z "$out" ] || die "--out is for --from"
    if [ -n "$build" ]; then
      [ -d "$build" ] || die "build folder '$build' does not exist"
      prepare "$dir" "$build" 0
    else
      prepare "$dir" "$(cd "$(dirname "$0")/.." && pwd)/build-gpu-bundle" 1
    fi ;;
  --from)
    [ -z "$build" ] || die "--build is for --prepare"
    [ -d "$dir" ] || die "bundle folder '$dir' does not exist"
    [ -n "$out" ] && OUT="$out"
    from "$dir" ;;
  *) usage ;;
esac
