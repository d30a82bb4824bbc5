#!/usr/bin/env bash
# Installs dependencies (with the browser used by the HTML report test), builds everything this
# machine can build (CUDA targets too when nvcc is present) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
bash scripts/build.sh
cd build
ctest -j "${ACCELBENCH_TEST_JOBS:-2}" --output-on-failure --timeout 300
