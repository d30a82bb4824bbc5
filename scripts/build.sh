#!/usr/bin/env bash
# Configures and builds accelbench into build/ (Release, Ninja), through ccache when installed.
#   bash scripts/build.sh          everything: the accelbench executable, every test program and
#                                  benchmark (what scripts/test.sh runs)
#   bash scripts/build.sh --job    only the accelbench executable (what scripts/run-default.sh runs)
# Settings (environment):
#   ACCELBENCH_CUDA=auto|on|off    the CUDA backends. auto (the default): with --job, built when
#                                  nvidia-smi lists a GPU (a machine that can run them); without
#                                  --job, built when nvcc is found (tests compile them, and skip
#                                  with the reason when no GPU is present).
#   ACCELBENCH_CUDA_ARCHS          the architectures CUDA code is generated for (default: native,
#                                  the GPU present, for --job on a GPU machine; else "90;100",
#                                  Hopper and Blackwell).
#   ACCELBENCH_CMAKE_ARGS          more CMake arguments; ACCELBENCH_JOBS parallel jobs (nproc).
# Before it starts, it says what it chose and the expected time: the CPU-seconds such a build
# took cold (measured, see the constants below) over the parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ACCELBENCH_JOBS:-$(nproc)}
job=0
[[ "${1:-}" == "--job" ]] && job=1
cuda=${ACCELBENCH_CUDA:-auto}

# CPU-seconds (user + sys) of a cold build on a 2-core AVX-512 Debian 12 machine (GCC 12, nvcc
# 13.0, ccache off, an empty build folder):
cpu_s_job=390       # measured: `/usr/bin/time cmake --build DIR --target accelbench`, CUDA off
                    # (730 before the unity builds of ACCELBENCH_UNITY_BUILD)
cpu_s_cuda_job=300  # estimated: the CUDA backends for one architecture (no GPU to measure with)
cpu_s_all=1500      # measured: every target with CUDA (archs 90 and 100), 12.5 min on 2 idle cores
                    # (before the unity builds; not measured cold since)
cpu_s_cuda_all=0    # (included in cpu_s_all; a CPU-only full build takes less)

has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }
has_nvcc() { [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; }

# Whether to build the CUDA backends, and why (printed).
choose_cuda() {
  case $cuda in
    on) want_cuda=1 why="ACCELBENCH_CUDA=on" ;;
    off) want_cuda=0 why="ACCELBENCH_CUDA=off" ;;
    auto)
      if ((job)) && has_gpu; then
        want_cuda=1 why="a GPU is present (nvidia-smi -L)"
      elif ((job)); then
        want_cuda=0 why="no GPU is present (nvidia-smi -L lists none)"
      elif has_nvcc; then
        want_cuda=1 why="nvcc is found (the tests compile the CUDA code)"
      else
        want_cuda=0 why="nvcc is not found"
      fi ;;
    *) echo "build: ACCELBENCH_CUDA must be auto, on or off, not '$cuda'" >&2; exit 2 ;;
  esac
}

# The CMake arguments for that choice.
cuda_args() {
  if ((!want_cuda)); then
    echo "-DACCELBENCH_ENABLE_CUDA=OFF"
    return
  fi
  local archs=${ACCELBENCH_CUDA_ARCHS:-}
  [[ -z $archs ]] && { ((job)) && has_gpu && archs=native || archs="90;100"; }
  echo "-DACCELBENCH_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$archs"
}

# One line before the build: what is built, with or without CUDA and why, and how long a cold
# build takes here (a warm ccache or an earlier build takes much less).
say_plan() {
  local cpu_s=$((job ? cpu_s_job : cpu_s_all)) what=$((job))
  ((want_cuda)) && cpu_s=$((cpu_s + (job ? cpu_s_cuda_job : cpu_s_cuda_all)))
  local par=$((jobs < $(nproc) ? jobs : $(nproc)))
  local minutes=$(((cpu_s / par + 30) / 60))
  local target="everything (tests and benchmarks included)"
  ((what)) && target="the accelbench executable"
  echo "build: $target, CUDA backends $( ((want_cuda)) && echo on || echo off) ($why;" \
    "ACCELBENCH_CUDA=auto|on|off changes it); a cold build takes about $minutes min with" \
    "$par parallel jobs on an idle machine (${cpu_s} CPU-seconds), less when ccache or an" \
    "earlier build has the objects" >&2
}

choose_cuda
say_plan
# shellcheck disable=SC2046 # the arguments are words
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release $(cuda_args) ${ACCELBENCH_CMAKE_ARGS:-} \
  >build-configure.log 2>&1 || {
  cat build-configure.log >&2
  exit 1
}
grep -E "^-- accelbench:" build-configure.log >&2 || true
if ((job)); then
  cmake --build build -j "$jobs" --target accelbench
else
  cmake --build build -j "$jobs"
fi
