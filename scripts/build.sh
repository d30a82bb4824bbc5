#!/usr/bin/env bash
# Configures and builds accelbench into build/ (Release, Ninja). CUDA targets are built when nvcc
# is found (/usr/local/cuda/bin/nvcc or on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ACCELBENCH_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${ACCELBENCH_CMAKE_ARGS:-} >build-configure.log 2>&1 || {
  cat build-configure.log >&2
  exit 1
}
grep -E "^-- accelbench:" build-configure.log >&2 || true
cmake --build build -j "$jobs"
