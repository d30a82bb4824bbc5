#!/usr/bin/env bash
# Configures and builds the sanitizer build into build-san/: clang-14, AddressSanitizer +
# UndefinedBehaviorSanitizer on every target of ours (ACCELBENCH_SANITIZE), the libFuzzer targets
# of tests/fuzz (ACCELBENCH_FUZZ), CUDA off, optimised with debug info (readable reports).
# Used by scripts/test.sh and scripts/fuzz.sh. Extra CMake arguments: ACCELBENCH_SAN_CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ACCELBENCH_JOBS:-$(nproc)}
mkdir -p build-san
# -O1 with line tables: readable sanitizer reports at a fraction of the compile time of -O2 -g
# (the kernels keep their own -O3), and assert() stays on.
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DACCELBENCH_SANITIZE=ON -DACCELBENCH_FUZZ=ON -DACCELBENCH_ENABLE_CUDA=OFF -DACCELBENCH_UNITY_BUILD=OFF \
  ${ACCELBENCH_SAN_CMAKE_ARGS:-} >build-san/configure.log 2>&1 || {
  cat build-san/configure.log >&2
  exit 1
}
cmake --build build-san -j "$jobs" ${ACCELBENCH_SAN_TARGETS:+--target $ACCELBENCH_SAN_TARGETS}
