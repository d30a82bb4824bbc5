#!/usr/bin/env bash
# GPU check: the GPU tests and a short benchmark set next to PyTorch, in one short call on
# a bare GPU machine (no compiler run there, no Debian packages, no registry, no network).
#
#   scripts/gpu-check.sh --prepare DIR [--build BUILD]   # here: write the bundle into DIR
#   scripts/gpu-check.sh --from DIR [--out OUT]          # on the GPU machine: run it
#   scripts/gpu-check.sh --plan [--arch N]               # the steps --from runs, their caps, the sum
#
# --prepare builds accelbench and the CUDA test programs for sm_90 and sm_100 (in BUILD, default
# ./build-gpu-bundle, configured here; with --build an existing CUDA build is used as it is, nothing
# is built), strips them, and writes DIR/bundle.tar.xz: bin/ (the programs), lib/ (every shared
# library they need except glibc, the NVIDIA driver and the CUDA libraries the GPU machine has:
# cuBLASLt, cuDNN, cudart, NCCL), share/ (rulesets, catalogues, models, schemas, suites) and
# scripts/ (this script and its Python helpers), plus DIR/gpu-check.sh and DIR/MANIFEST (with the
# CUDA major the programs are built for). The bundle has to fit what can be carried to the GPU
# machine (64 MiB).
#
# --from unpacks DIR/bundle.tar.xz (into DIR/unpacked, once); chooses the CUDA library folders by
# CUDA major (scripts/gpu_check_libs.py: cuBLASLt libcublasLt.so.<major>, a cuDNN 9 built for that
# major, each decision printed with its evidence); checks with ldd that every other library comes
# from the bundle; then runs the plan (scripts/gpu_check_plan.py, `--plan` prints it): nvidia-smi
# for information only (the fields this driver knows); `accelbench env --json`, which decides
# whether there is a GPU (CUDA available, compute capability); the CUDA tests' GPU-only cases
# (Catch2 [gpu]; a skipped test is counted as skipped, never as passed); each GPU benchmark with
# accelbench followed at once by the same config with PyTorch (scripts/gpu_check_torch.py, one
# warm python3 that imports torch while the tests run); the tests' other cases last. Each step
# has a cap, cut so that the export and summary keep their reserve; the caps add up to at most
# the budget (GPU_CHECK_BUDGET_S, 480 s). OUT ($OUT, else ./out) gets at most five files, as the
# device call brings back few: summary.txt and steps.jsonl (one JSON line a step, with its
# result), both written as each step ends, details.tar.gz (every log and JSON, rewritten after
# each step), results.json (accelbench export) and ratios.json (accelbench next to PyTorch).
# GPU_CHECK_ASSUME_GPU=1 runs every step even when accelbench sees no GPU (to check the script).
# --only NAME[,NAME...] runs only those steps of the plan (and nvidia-smi and env, which decide
# whether there is a GPU; PyTorch is started when a peer is named): a second call that finishes
# what a first one could not. A call that fails steps ends its summary with the line to give it
# ("rerun: ... --only ..."). Give a call the sum of the named steps' caps plus 60 s for the
# machine's start and the unpacking (--plan lists the caps); a whole plan needs its 480 s.
#
# Exit codes of --from: 0 every step passed; 1 a step failed (named in the summary); 2 usage or a
# bad bundle (message names it); 5 no GPU: the bundle was checked (libraries, programs start, the
# CUDA tests' GPU cases skip), nothing measured, the summary says "no GPU".
set -u -o pipefail
readonly NO_GPU_EXIT=5
die() { echo "gpu-check: $*" >&2; exit 2; }

usage() {
  echo "usage: gpu-check.sh --prepare DIR [--build BUILD] | --from DIR [--out OUT] [--only NAME,...] | --plan [--arch N]" >&2
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
  esac
  is_cuda_lib "$1"
}
# The driver's and CUDA's libraries (the GPU machine's own, never bundled).
is_cuda_lib() {
  case "$1" in
    libcuda.so*|libnvidia-*|libcublas.so*|libcublasLt.so*|libcudnn*|libcudart.so*|libnccl.so*|\
    libnvrtc*|libnvJitLink*) return 0 ;;
  esac
  return 1
}

# The sonames `exe` needs, found here or not (ldd: "libcudnn.so.9 => ..." or "... => not found").
needed_sonames() {
  ldd "$1" 2>/dev/null | awk '$2 == "=>" {print $1}'
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
  elif ! grep -q "sm_100" <<< "$("$objdump" --list-elf "$stage/bin/accelbench" 2>/dev/null)"; then
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
  cp "$root/scripts/gpu-check.sh" "$root"/scripts/gpu_check_*.py "$stage/scripts/"
  # The newest glibc symbol version the programs and libraries need (the GPU machine's glibc must
  # be at least that), the bundled C++ runtime's, and the newest libstdc++ symbol version needed.
  local glibc cxx_glibc glibcxx nvcc
  local nvcc_bin; nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  nvcc="$("$nvcc_bin" --version 2>/dev/null | grep -o 'release [0-9.]*' | cut -d' ' -f2)"
  [ -n "$nvcc" ] || die "cannot read the CUDA release from '$nvcc_bin --version': the manifest needs it"
  glibc="$(objdump -T "$stage"/bin/* "$stage"/lib/*.so* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  # Which files need that newest version (Debian 12's libevent_core, which Open MPI loads, uses
  # glibc 2.36's arc4random): the manifest names them, and the version the rest would need.
  # (objdump's output is read whole before grep: `objdump | grep -q` under pipefail fails when
  # grep's early exit stops objdump with SIGPIPE, which a busy machine makes likely.)
  local f syms raisers="" rest=""
  for f in "$stage"/bin/* "$stage"/lib/*.so*; do
    syms="$(objdump -T "$f" 2>/dev/null)"
    if [ -n "$glibc" ] && grep -qwF "$glibc" <<< "$syms"; then
      raisers+="$(basename "$f") "
    else
      rest+="$(grep -o 'GLIBC_[0-9.]*' <<< "$syms")"$'\n'
    fi
  done
  rest="$(printf '%s' "$rest" | grep . | sort -uV | tail -1)"
  cxx_glibc="$(objdump -T "$stage"/lib/cxx/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  glibcxx="$(objdump -T "$stage"/bin/* "$stage"/lib/*.so* 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)"
  {
    echo "accelbench gpu bundle"
    echo "revision $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo '+dirty')"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
    echo "nvcc $nvcc"
    echo "cuda-major ${nvcc%%.*}"
    echo "cuda-sonames $(for p in $PROGRAMS; do needed_sonames "$stage/bin/$p"; done | sort -u |
      while read -r so; do if is_cuda_lib "$so"; then echo "$so"; fi; done | tr '\n' ' ')"
    echo "needs ${glibc:-GLIBC_unknown}"
    echo "needs-raised-by ${raisers:-none}(the other files need ${rest:-GLIBC_unknown})"
    # Built with MPI (multi-node runs), but the check is one process on one GPU: the relocated
    # Open MPI is loaded, never initialised (--from drops a launcher's variables).
    if ls "$stage"/lib/libmpi.so* > /dev/null 2>&1; then
      echo "mpi bundled, not started: --from runs every program as one process, without a launcher's variables"
    else
      echo "mpi none"
    fi
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
# xz, or Python's lzma where the machine has no xz.
unxz_to_stdout() {
  if command -v xz > /dev/null; then xz -dc "$1"
  else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi
}

say() { echo "$*" | tee -a "$SUMMARY"; }
now() { date +%s; }

# The time a step may take: its cap, cut so that the export and the summary keep their reserve;
# 0 when nothing is left.
step_limit() {
  local want="$1" left=$((DEADLINE - $(now) - RESERVE_SUMMARY))
  [ "$left" -lt "$want" ] && want="$left"
  [ "$want" -lt 0 ] && want=0
  echo "$want"
}

# The details (every log, the plan, accelbench's JSON) as one file under OUT, rewritten after each
# step: the device call brings back at most 8 files, and a call cut short keeps what was done.
# GNU tar's exit 1 (a log that grew while it was read, e.g. a step's child still writing) still
# leaves a whole archive: kept, as the newest details there are.
pack_details() {
  local rc=0
  tar -C "$WORK" -czf "$OUT/details.tar.gz.part" --warning=no-file-changed --exclude=results.db \
    --exclude=cache --exclude=torch.in --exclude=torch.out . 2>/dev/null || rc=$?
  [ "$rc" -le 1 ] && mv "$OUT/details.tar.gz.part" "$OUT/details.tar.gz"
}

# One step's end: its summary line, its line in steps.jsonl (result JSON and log tail), the lists.
# end_step NAME KIND STATUS EXIT START CAP LIMIT RESULT LOG [NOTE]
end_step() {
  local name="$1" kind="$2" status="$3" rc="$4" start="$5" cap="$6" limit="$7" result="$8" log="$9" note="${10:-}"
  local secs=$(( $(now) - start ))
  case "$status" in
    passed) PASSED+=("$name"); say "PASS $name (${secs} s of ${limit} s)${note:+: $note}" ;;
    skipped) SKIPPED+=("$name"); say "SKIPPED $name${note:+ ($note)} [${secs} s of ${limit} s]" ;;
    timeout) FAILED+=("$name"); say "FAIL $name: stopped at its limit of ${limit} s (cap ${cap} s)${note:+; $note}" ;;
    *) FAILED+=("$name"); say "FAIL $name (exit $rc, ${secs} s)${note:+: $note}" ;;
  esac
  python3 "$BUNDLE/scripts/gpu_check_summary.py" record "$OUT" "$name" "$kind" "$status" "$rc" "$secs" \
    "$cap" "$limit" "$result" "$log" 2>> "$WORK/record.log"
  pack_details
}

finish() {  # the summary's last lines, whatever happened (once)
  local code="$1"
  [ -n "${FINISHED:-}" ] && exit "$code"
  FINISHED=1
  torch_stop
  say "passed: ${#PASSED[@]}${PASSED[*]:+ (${PASSED[*]})}"
  say "skipped: ${#SKIPPED[@]}${SKIPPED[*]:+ (${SKIPPED[*]})}"
  say "failed: ${#FAILED[@]}${FAILED[*]:+ (${FAILED[*]})}"
  rerun_line
  say "total: $(( $(now) - T0 )) s of the ${BUDGET} s budget, exit $code"
  pack_details
  exit "$code"
}

# The steps of this call's plan that failed or were cut, as the --only line of a second call.
rerun_line() {
  [ -f "${WORK:-}/plan.tsv" ] && [ "${#FAILED[@]}" -gt 0 ] || return 0
  local f steps=()
  for f in "${FAILED[@]}"; do
    grep -qxF "$f" <<< "$(cut -f2 "$WORK/plan.tsv")" && steps+=("$f")
  done
  [ "${#steps[@]}" -gt 0 ] || return 0
  say "rerun: gpu-check.sh --from ${FROM_DIR:-DIR} --only $(IFS=,; echo "${steps[*]}")"
}

# --only's names, each a step of the plan of some architecture (exit 2 naming one that is not).
check_only() {
  [ -n "$ONLY" ] || return 0
  local names n
  names="$(for a in 90 100; do python3 "$BUNDLE/scripts/gpu_check_plan.py" --arch "$a" tsv | cut -f2; done | sort -u)"
  for n in ${ONLY//,/ }; do
    grep -qxF "$n" <<< "$names" || die "--only: '$n' is no step of the plan (gpu-check.sh --plan lists them)"
  done
}
# Whether this call runs step `name` (kind `kind`): every step without --only; with it, the named
# ones, and PyTorch's start when a peer is named.
selected() {
  local name="$1" kind="$2" n
  [ -n "$ONLY" ] || return 0
  for n in ${ONLY//,/ }; do [ "$n" = "$name" ] && return 0; done
  if [ "$kind" = torch_start ]; then
    for n in ${ONLY//,/ }; do grep -qxF "peer$(printf '\t')$n" <<< "$(cut -f1,2 "$WORK/plan.tsv")" && return 0; done
  fi
  return 1
}

unpack_bundle() {
  local dir="$1" b="$1/unpacked"
  if [ ! -f "$b/MANIFEST" ] || [ "$dir/bundle.tar.xz" -nt "$b/MANIFEST" ]; then
    rm -rf "$b.part" && mkdir -p "$b.part" &&
      unxz_to_stdout "$dir/bundle.tar.xz" | tar -C "$b.part" -xf - ||
      die "cannot unpack '$dir/bundle.tar.xz'"
    rm -rf "$b" && mv "$b.part" "$b"
    touch "$b/MANIFEST"
  fi
  BUNDLE="$(cd "$b" && pwd)"
}

# The CUDA library folders (scripts/gpu_check_libs.py: by CUDA major, with the reasons) and the
# C++ runtime: the bundled one where this glibc can load it, else the machine's own if it is new
# enough (the newest GLIBCXX_ symbol version the bundle needs), else none (a FAIL).
setup_libraries() {
  local major cuda_dirs
  major="$(sed -n 's/^cuda-major //p' "$BUNDLE/MANIFEST")"
  [ -n "$major" ] || major="$(sed -n 's/^nvcc \([0-9]*\)\..*/\1/p' "$BUNDLE/MANIFEST")"
  timeout 60 python3 "$BUNDLE/scripts/gpu_check_libs.py" --cuda-major "${major:-13}" --json "$WORK/libs.json" \
    > "$WORK/libs.txt" 2>&1
  grep '^libs: ' "$WORK/libs.txt" | tee -a "$SUMMARY"
  cuda_dirs="$(sed -n 's/^path: //p' "$WORK/libs.txt")"
  say "CUDA library folders (CUDA ${major:-13}): ${cuda_dirs:-none found}"
  local glibc_here cxx_needs glibcxx_needs
  CXX_DIR="$BUNDLE/lib/cxx"; CXX_NOTE="bundled"
  glibc_here="$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9][0-9.]*$')"
  cxx_needs="$(sed -n 's/^cxx-needs GLIBC_//p' "$BUNDLE/MANIFEST")"
  glibcxx_needs="$(sed -n 's/^glibcxx //p' "$BUNDLE/MANIFEST")"
  if [ -n "$glibc_here" ] && [ -n "$cxx_needs" ] &&
     [ "$(printf '%s\n' "$cxx_needs" "$glibc_here" | sort -V | head -1)" != "$cxx_needs" ]; then
    CXX_DIR=""
    local sys_cxx; sys_cxx="$(/sbin/ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')"
    if [ -n "$sys_cxx" ] && grep -qa "$glibcxx_needs" "$sys_cxx"; then
      CXX_NOTE="the machine's $sys_cxx (glibc $glibc_here is older than the bundled one's $cxx_needs)"
    else
      CXX_NOTE="none usable: glibc $glibc_here < $cxx_needs and no libstdc++ with $glibcxx_needs here"
    fi
  fi
  ABLIB="$BUNDLE/lib${CXX_DIR:+:$CXX_DIR}${cuda_dirs:+:$cuda_dirs}"
  say "C++ runtime: $CXX_NOTE"
  say "library path of the programs: $(program_ld_path)"
  [ "${#LAUNCHER_UNSET[@]}" -eq 0 ] ||
    say "launcher variables dropped for the programs (one process, no MPI): $(printf '%s\n' "${LAUNCHER_UNSET[@]}" | grep -v '^-u$' | tr '\n' ' ')"
  local needs; needs="$(sed -n 's/^needs GLIBC_//p' "$BUNDLE/MANIFEST")"
  say "glibc: ${glibc_here:-unknown} here; the bundle needs ${needs:-?}, its C++ runtime ${cxx_needs:-?}"
  if [ -n "$glibc_here" ] && [ -n "$needs" ] && [ "$(printf '%s\n' "$needs" "$glibc_here" | sort -V | head -1)" != "$needs" ]; then
    say "FAIL glibc $glibc_here here, the bundle needs $needs"; FAILED+=(glibc)
  fi
  case "$CXX_NOTE" in none*) say "FAIL C++ runtime: the programs cannot start here"; FAILED+=(cxx-runtime) ;; esac
}
# The programs' library path: the bundle's folders first, then the machine's own LD_LIBRARY_PATH,
# kept, since some hosts find the driver (libcuda.so.1) only through it.
program_ld_path() { echo "$ABLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; }
# The check runs every program as one process on one GPU. A launcher's variables left in the
# environment (a shell inside a Slurm allocation or an mpirun job) would make accelbench call
# MPI_Init_thread, and the bundle's relocated Open MPI cannot find its plugins: they are dropped.
LAUNCHER_UNSET=()
for v in $(compgen -e | grep -E '^(SLURM_|OMPI_|PMI_|PMIX_)' || true); do LAUNCHER_UNSET+=(-u "$v"); done
ab() { env "${LAUNCHER_UNSET[@]}" LD_LIBRARY_PATH="$(program_ld_path)" "$@"; }

# Every library not CUDA/driver/glibc must come from the bundle; which cuBLASLt and cuDNN load.
check_libraries() {
  local p soname path bad=0 from_bundle=0
  : > "$WORK/libraries.txt"
  for p in "$BUNDLE"/bin/*; do
    echo "== $(basename "$p")" >> "$WORK/libraries.txt"
    ab ldd "$p" >> "$WORK/libraries.txt" 2>&1
  done
  while read -r soname path; do
    if [ "$path" = "not" ]; then
      # A library a program is linked with and cannot find stops it at start-up: a failure, a CUDA
      # library (NCCL, cuDNN...) too. Only the driver's are the machine's business.
      case "$soname" in
        libcuda.so*|libnvidia-*) say "library $soname: not found (the driver's)"; continue ;;
      esac
      say "FAIL library $soname: not found$(is_cuda_lib "$soname" && echo " in the CUDA library folders or the machine's library path")"
      bad=1; continue
    fi
    is_system_lib "$soname" && continue
    case "$path" in
      "$BUNDLE"/lib/*) from_bundle=$((from_bundle + 1)) ;;
      */libstdc++.so.6|*/libgcc_s.so.1) [ -z "$CXX_DIR" ] || { say "FAIL library $soname resolved outside the bundle: $path"; bad=1; } ;;
      *) say "FAIL library $soname resolved outside the bundle: $path"; bad=1 ;;
    esac
  done < <(grep '=>' "$WORK/libraries.txt" | awk '{print $1, $3}' | sort -u)
  if [ "$bad" = 0 ]; then
    say "libraries: all $from_bundle non-CUDA libraries resolve from the bundle"; PASSED+=(libraries)
  else
    FAILED+=(libraries)
  fi
  grep -E 'libcublasLt|libcudnn\.so' "$WORK/libraries.txt" | sed 's/^[[:space:]]*/CUDA library loaded: /; s/ (0x[0-9a-f]*)$//' |
    sort -u | tee -a "$SUMMARY"
}

# nvidia-smi, for information only: the fields this driver knows (--help-query-gpu), in one query,
# else one by one; the clock-event reasons under their new name, else the old. Never decides
# whether there is a GPU, and never stops the run.
step_info() {
  local name="$1" cap="$2" start; start=$(now)
  local limit; limit="$(step_limit "$cap")"
  [ "$limit" -gt 0 ] || limit=1  # information for the record, never measured: a second at least
  local out="$WORK/nvidia-smi.txt" known f fields=() alt
  : > "$out"
  if ! command -v nvidia-smi > /dev/null; then
    end_step "$name" info skipped 0 "$start" "$cap" "$limit" - - "nvidia-smi not found"; return
  fi
  known="$(timeout 5 nvidia-smi --help-query-gpu 2>/dev/null)"
  for alt in name driver_version compute_cap memory.total clocks.sm clocks.max.sm clocks.mem power.limit \
             temperature.gpu "clocks_event_reasons.active clocks_throttle_reasons.active"; do
    for f in $alt; do
      if [ -z "$known" ] || grep -q "\"$f\"" <<< "$known"; then fields+=("$f"); break; fi
    done
  done
  local q; q="$(IFS=,; echo "${fields[*]}")"
  if ! timeout 5 nvidia-smi --query-gpu="$q" --format=csv >> "$out" 2>&1; then
    echo "one query failed; field by field:" >> "$out"
    for f in "${fields[@]}"; do
      [ $(( $(now) - start )) -lt "$limit" ] || { echo "$f: no time left" >> "$out"; continue; }
      echo "$f: $(timeout 3 nvidia-smi --query-gpu="$f" --format=csv,noheader 2>&1 | head -3 | tr '\n' ' ')" >> "$out"
    done
  fi
  say "nvidia-smi (information only): $(head -3 "$out" | tr '\n' ' ')"
  end_step "$name" info passed 0 "$start" "$cap" "$limit" - "$out"
}

# accelbench env --json decides whether there is a GPU (CUDA available, compute capability):
# sets GPU (yes/no) and ARCH (compute capability x10).
step_env() {
  local name="$1" cap="$2" start; start=$(now)
  local limit rc=0
  limit="$(step_limit "$cap")"
  [ "$limit" -ge 5 ] || limit=5  # whether there is a GPU is needed whatever the budget
  ab timeout "$limit" "$AB" env --json < /dev/null > "$WORK/env.json" 2> "$WORK/env.log" || rc=$?
  local facts; facts="$(python3 - "$WORK/env.json" <<'PY' 2>/dev/null
import json, sys
try:
    b = [x for x in json.load(open(sys.argv[1])).get("backends", []) if x.get("name") == "cuda"][0]
except Exception:
    print("unknown 0 accelbench env gave no CUDA backend"); raise SystemExit
devs = b.get("devices") or []
cc = str((devs[0] if devs else {}).get("compute_capability", "0.0")).split(".")
arch = int(cc[0]) * 10 + int(cc[1] if len(cc) > 1 else 0) if cc[0].isdigit() else 0
print(("yes" if b.get("available") and devs else "no"), arch, b.get("detail", ""))
PY
)"
  GPU="${facts%% *}"; facts="${facts#* }"; ARCH="${facts%% *}"; local detail="${facts#* }"
  if [ "$rc" -ne 0 ]; then
    # env failed: the measurements still run where nvidia-smi lists a GPU (each step says why it fails).
    GPU=no; ARCH=0
    if command -v nvidia-smi > /dev/null && grep -q '^GPU' <<< "$(timeout 5 nvidia-smi -L 2>/dev/null)"; then
      GPU=yes; ARCH="$(timeout 5 nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
      [[ "$ARCH" =~ ^[0-9]+$ ]] || ARCH=90
    fi
    local seen="no GPU"; [ "$GPU" = yes ] && seen="a GPU (sm_$ARCH assumed): the measurements run"
    end_step "$name" env failed "$rc" "$start" "$cap" "$limit" - "$WORK/env.log" "accelbench env failed; nvidia-smi lists $seen"
    return
  fi
  say "accelbench CUDA: ${GPU:-unknown}, sm_${ARCH:-0} | ${detail}"
  # cuBLASLt is opened on its first call (harness/device/cublaslt_lazy.cpp), so ldd no longer
  # names it: the versions the process loaded are the ones env recorded.
  local libs; libs="$(python3 -c 'import json, sys
l = json.load(open(sys.argv[1])).get("environment", {}).get("libraries", {})
print(", ".join(k + " " + l[k] for k in ("cublaslt", "cudnn", "cudnn_cudart", "cuda_runtime") if k in l))' \
    "$WORK/env.json" 2>/dev/null)"
  [ -z "$libs" ] || say "CUDA libraries loaded (accelbench env): $libs"
  end_step "$name" env passed 0 "$start" "$cap" "$limit" "$WORK/env.json" -
}

# A CUDA test program's cases (a Catch2 test spec): exit 0 passed, 77 all skipped
# (tests/support/skip.hpp), else failed.
run_tests() {  # LIMIT PROGRAM CASES TAG -> rc; log and junit in WORK
  local limit="$1" prog="$2" cases="$3" tag="$4" rc=0
  ab timeout "$limit" "$BUNDLE/bin/$prog" "$cases" -r junit -o "$WORK/$tag.xml" < /dev/null > "$WORK/$tag.log" 2>&1 || rc=$?
  return "$rc"
}

step_test() {
  local name="$1" cap="$2" prog="$3" cases="$4" start; start=$(now)
  local limit rc=0
  limit="$(step_limit "$cap")"
  [ "$limit" -gt 0 ] || { end_step "$name" test failed 0 "$start" "$cap" 0 - - "no time left"; return; }
  run_tests "$limit" "$prog" "$cases" "$name" || rc=$?
  local log="$WORK/$name.log"
  case "$rc" in
    0) end_step "$name" test passed 0 "$start" "$cap" "$limit" - "$log" "$cases" ;;
    77) # the junit reporter keeps each case's SKIPPED: line in its <testcase>: count the cases
      end_step "$name" test skipped 77 "$start" "$cap" "$limit" - "$log" \
        "$(awk '/<testcase/ {c = 1} /<\/testcase>/ {c = 0} c && /^SKIPPED:/ {n++} END {print n + 0}' "$WORK/$name.xml" 2>/dev/null) case(s): $(grep -m1 '^SKIPPED:' "$WORK/$name.xml" 2>/dev/null | cut -c10-)" ;;
    124|137) end_step "$name" test timeout "$rc" "$start" "$cap" "$limit" - "$log" "$cases; see $name.log" ;;
    *) end_step "$name" test failed "$rc" "$start" "$cap" "$limit" - "$log" "$cases; see $name.log and $name.xml" ;;
  esac
}

step_test_group() {  # NAME CAP PROGRAM... CASES: the programs one after another within the cap
  local name="$1" cap="$2"; shift 2
  local cases="${*: -1}" progs=("${@:1:$#-1}") start; start=$(now)
  local limit p rc worst=0 left notes=()
  limit="$(step_limit "$cap")"
  for p in "${progs[@]}"; do
    left=$(( limit - ($(now) - start) ))
    [ "$left" -gt 0 ] || { notes+=("$p: no time left"); worst=124; continue; }
    rc=0; run_tests "$left" "$p" "$cases" "${name}_$p" || rc=$?
    notes+=("$p exit $rc"); cat "$WORK/${name}_$p.log" >> "$WORK/$name.log"
    [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || worst="$rc"
  done
  local st=passed; [ "$worst" -eq 0 ] || st=failed; [ "$worst" -eq 124 ] && st=timeout
  end_step "$name" test_group "$st" "$worst" "$start" "$cap" "$limit" - "$WORK/$name.log" "$cases: ${notes[*]}"
}

step_bench() {
  local name="$1" cap="$2"; shift 2
  local start; start=$(now)
  local limit rc=0
  limit="$(step_limit "$cap")"
  [ "$limit" -gt 0 ] || { end_step "$name" bench failed 0 "$start" "$cap" 0 - - "no time left"; return; }
  ab timeout "$limit" "$AB" run "$@" --backend cuda --db "$WORK/results.db" --tag gpu-check --tag "$name" \
    --quiet --json < /dev/null > "$WORK/$name.json" 2> "$WORK/$name.log" || rc=$?
  case "$rc" in
    0) end_step "$name" bench passed 0 "$start" "$cap" "$limit" "$WORK/$name.json" "$WORK/$name.log" ;;
    124|137) end_step "$name" bench timeout "$rc" "$start" "$cap" "$limit" "$WORK/$name.json" "$WORK/$name.log" ;;
    *) end_step "$name" bench failed "$rc" "$start" "$cap" "$limit" "$WORK/$name.json" "$WORK/$name.log" \
         "$(tail -1 "$WORK/$name.log" | cut -c1-200)" ;;
  esac
}

# ---- the PyTorch peers: one python3 that imports torch once (started while the tests run) and
# answers one JSON request a line through two fifos; a peer past its limit ends it, and the next
# peer starts another.
torch_start() {
  [ -n "${TORCH_PID:-}" ] && return
  rm -f "$WORK/torch.in" "$WORK/torch.out"
  mkfifo "$WORK/torch.in" "$WORK/torch.out" || return
  python3 -u "$BUNDLE/scripts/gpu_check_torch.py" --serve < "$WORK/torch.in" > "$WORK/torch.out" 2>> "$WORK/torch.log" &
  TORCH_PID=$!
  exec {TORCH_W}> "$WORK/torch.in" {TORCH_R}< "$WORK/torch.out"
  TORCH_READY=""
}

torch_stop() {
  [ -n "${TORCH_PID:-}" ] || return 0
  exec {TORCH_W}>&- {TORCH_R}<&-
  kill "$TORCH_PID" 2>/dev/null; wait "$TORCH_PID" 2>/dev/null
  TORCH_PID=""; TORCH_READY=""
}

torch_wait_ready() {  # LIMIT -> 0 when the server said it is ready
  [ -n "${TORCH_READY:-}" ] && return 0
  local line=""
  read -r -t "$1" -u "$TORCH_R" line || { echo "no answer from the PyTorch server in $1 s" >> "$WORK/torch.log"; return 1; }
  echo "$line" > "$WORK/torch_versions.json"
  grep -q '"ready": true' <<< "$line" || return 1
  TORCH_READY=1
}

step_torch_start() {
  local name="$1" cap="$2" start; start=$(now)
  local limit; limit="$(step_limit "$cap")"
  torch_start
  if [ "$limit" -gt 0 ] && torch_wait_ready "$limit"; then
    end_step "$name" torch_start passed 0 "$start" "$cap" "$limit" "$WORK/torch_versions.json" - \
      "$(cut -c1-200 "$WORK/torch_versions.json")"
  else
    end_step "$name" torch_start failed 1 "$start" "$cap" "$limit" "$WORK/torch_versions.json" "$WORK/torch.log"
    torch_stop
  fi
}

step_peer() {
  local name="$1" cap="$2" payload="$3" start; start=$(now)
  local limit line=""
  limit="$(step_limit "$cap")"
  local res="$WORK/$name.json"
  [ "$limit" -gt 0 ] || { end_step "$name" peer failed 0 "$start" "$cap" 0 - - "no time left"; return; }
  torch_start
  if ! torch_wait_ready "$limit"; then
    torch_stop; end_step "$name" peer failed 1 "$start" "$cap" "$limit" - "$WORK/torch.log" "the PyTorch server is not ready"; return
  fi
  local left=$(( limit - ($(now) - start) )); [ "$left" -gt 0 ] || left=1
  printf '{"deadline_s":%s,%s\n' "$((left > 2 ? left - 2 : 1))" "${payload#\{}" >&"$TORCH_W"
  if read -r -t "$left" -u "$TORCH_R" line; then
    echo "$line" > "$res"
    if grep -q '"ok": true' "$res"; then
      end_step "$name" peer passed 0 "$start" "$cap" "$limit" "$res" "$WORK/torch.log"
    else
      end_step "$name" peer failed 1 "$start" "$cap" "$limit" "$res" "$WORK/torch.log" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error", "")[:200])' "$res" 2>/dev/null)"
    fi
  else
    torch_stop  # it is still busy with this step: the next peer starts a fresh one
    end_step "$name" peer timeout 124 "$start" "$cap" "$limit" - "$WORK/torch.log"
  fi
}

from() {
  local dir="$1"
  T0=$(now); BUDGET="${GPU_CHECK_BUDGET_S:-480}"; DEADLINE=$((T0 + BUDGET))
  [ -f "$dir/bundle.tar.xz" ] || die "no bundle in '$dir' (expected $dir/bundle.tar.xz from --prepare)"
  OUT="${OUT:-$PWD/out}"
  mkdir -p "$OUT" || die "cannot create output folder '$OUT'"
  OUT="$(cd "$OUT" && pwd)"
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")" || die "cannot create a work folder in ${TMPDIR:-/tmp}"
  SUMMARY="$OUT/summary.txt"
  : > "$SUMMARY"; : > "$OUT/steps.jsonl"; rm -f "$OUT/details.tar.gz"
  PASSED=() SKIPPED=() FAILED=() TORCH_PID="" FINISHED=""
  trap 'say "stopped by a signal"; finish 1' TERM INT
  command -v python3 > /dev/null || { echo "gpu-check: python3 not found (the plan, libraries and summary need it)" >&2; exit 2; }
  unpack_bundle "$dir"
  check_only
  AB="$BUNDLE/bin/accelbench"
  export ACCELBENCH_HOME="$BUNDLE/share" ACCELBENCH_CACHE_DIR="$WORK/cache"
  say "accelbench gpu-check --from $dir on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ); budget ${BUDGET} s; details in details.tar.gz"
  sed -n 's/^revision /bundle revision: /p; s/^built /bundle built: /p' "$BUNDLE/MANIFEST" | tee -a "$SUMMARY"
  setup_libraries
  check_libraries
  RESERVE_SUMMARY="$(python3 "$BUNDLE/scripts/gpu_check_plan.py" json | python3 -c 'import json,sys; print(json.load(sys.stdin)["reserve_s"]["summary"])')"
  local kind name cap payload
  GPU=no ARCH=0
  while IFS=$'\t' read -r kind name cap payload; do  # the plan's first steps: info, env
    case "$kind" in info) step_info "$name" "$cap" ;; env) step_env "$name" "$cap" ;; esac
  done < <(python3 "$BUNDLE/scripts/gpu_check_plan.py" tsv)
  if [ "$GPU" != yes ] && [ -n "${GPU_CHECK_ASSUME_GPU:-}" ]; then
    [ "$ARCH" -gt 0 ] 2>/dev/null || ARCH=90
    say "no GPU seen, but GPU_CHECK_ASSUME_GPU is set: every step runs (sm_$ARCH assumed)"
    GPU=yes
  fi
  local parch="$ARCH"; [ "$parch" -gt 0 ] 2>/dev/null || parch=90  # no GPU: the H200's plan
  python3 "$BUNDLE/scripts/gpu_check_plan.py" --arch "$parch" --share "$ACCELBENCH_HOME" json > "$WORK/plan.json"
  python3 "$BUNDLE/scripts/gpu_check_plan.py" --arch "$parch" --share "$ACCELBENCH_HOME" tsv > "$WORK/plan.tsv"
  [ -n "$ONLY" ] && say "only the steps named by --only: $ONLY"
  [ "$GPU" = yes ] && selected torch_start torch_start && torch_start  # import torch while the tests run
  local words
  while IFS=$'\t' read -r kind name cap payload; do
    read -ra words <<< "$payload"  # words, never globbed: the test specs are [gpu] and ~[gpu]
    case "$kind" in info|env) ;; *) selected "$name" "$kind" || continue ;; esac
    case "$kind" in
      info|env) ;;
      test) step_test "$name" "$cap" "${words[@]}" ;;
      *) [ "$GPU" = yes ] || break
         case "$kind" in
           test_group) step_test_group "$name" "$cap" "${words[@]}" ;;
           torch_start) step_torch_start "$name" "$cap" ;;
           bench) step_bench "$name" "$cap" "${words[@]}" ;;
           peer) step_peer "$name" "$cap" "$payload" ;;
         esac ;;
    esac
  done < "$WORK/plan.tsv"
  if [ "$GPU" != yes ]; then
    say "no GPU: nothing measured (accelbench env: CUDA not available; see env.json in details.tar.gz)"
    finish "$NO_GPU_EXIT"
  fi
  torch_stop
  ab timeout 20 "$AB" export --db "$WORK/results.db" > "$OUT/results.json" 2> "$WORK/export.log" ||
    { say "FAIL export (see export.log)"; FAILED+=(export); }
  timeout 20 python3 "$BUNDLE/scripts/gpu_check_summary.py" ratios "$OUT" "$WORK/plan.json" 2>&1 | tee -a "$SUMMARY"
  if [ "${#FAILED[@]}" -eq 0 ]; then finish 0; else finish 1; fi
}

plan() {  # --plan [--arch N]: the steps, their caps and the sum
  local root; root="$(cd "$(dirname "$0")/.." && pwd)"
  python3 "$(dirname "$0")/gpu_check_plan.py" --arch "${1:-90}" --share "$root" table
}

# ------------------------------------------------------------------------------------------------
mode="" dir="" build="" out="" arch="" ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare|--from) [ -z "$mode" ] || die "give one of --prepare, --from and --plan"
                      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a folder"
                      mode="$1"; dir="$2"; shift 2 ;;
    --plan) [ -z "$mode" ] || die "give one of --prepare, --from and --plan"; mode="$1"; shift ;;
    --arch) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || die "--arch needs a compute capability x10 like 90, not '${2:-}'"
            arch="$2"; shift 2 ;;
    --build) [ $# -ge 2 ] && [ -n "$2" ] || die "--build needs a folder"; build="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] && [ -n "$2" ] || die "--out needs a folder"; out="$2"; shift 2 ;;
    --only) [ $# -ge 2 ] && [[ "$2" =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] ||
              die "--only needs step names separated by commas (gpu-check.sh --plan lists them), not '${2:-}'"
            ONLY="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1' (usage: gpu-check.sh --prepare DIR [--build BUILD] | --from DIR [--out OUT] | --plan [--arch N])" ;;
  esac
done
case "$mode" in
  --prepare)
    [ -z "$out" ] || die "--out is for --from"
    [ -z "$ONLY" ] || die "--only is for --from"
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
    FROM_DIR="$dir"
    from "$dir" ;;
  --plan) plan "$arch" ;;
  *) usage ;;
esac
