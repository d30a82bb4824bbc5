#!/usr/bin/env bash
# Installs everything accelbench needs to build, run and test, from Debian's packages only.
# Idempotent: packages already present are not fetched again. Needs root (or sudo).
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config git
  ccache  # rebuilds of unchanged sources are cache hits (ACCELBENCH_CCACHE)
  libbenchmark-dev nlohmann-json3-dev libcurl4-openssl-dev libsqlite3-dev sqlite3 libpq-dev
  libfmt-dev catch2 libcli11-dev libdnnl-dev libopenblas-dev
  libcpp-httplib-dev libssl-dev  # accelbench serve: HTTP(S) server, token hashes (OpenSSL)
  ocl-icd-opencl-dev  # oneDNN's CMake package config looks for OpenCL (Debian builds it with the OCL GPU runtime)
  python3
  libopenmpi-dev openmpi-bin  # multi-process runs (mpirun/srun) and the collective workload
)
# The browser test of the HTML report needs Chromium, the sanitizer + fuzzing build of the
# test command clang 14 with libFuzzer and LLVM's OpenMP runtime, and the PostgreSQL store's
# tests a PostgreSQL 15 server (which they start themselves); install them only when asked
# (tests) so that the benchmark command stays light. The tests of the generated shell completion
# and man page read them with zsh and groff. libpq-dev (the client library) is always needed:
# every --db accepts a postgresql:// URI.
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(chromium clang-14 libfuzzer-14-dev libomp-14-dev postgresql-15 zsh groff-base)
  pkgs+=(openssl)  # the server's HTTPS test makes a self-signed certificate
  # scripts/tidy.sh (clang-tidy over the changed files) and scripts/function-sizes.sh.
  pkgs+=(clang-tidy-14 universal-ctags)
  pkgs+=(clang-format-14)  # scripts/check-format.sh (CTest check_format)
  pkgs+=(python3-yaml)  # tests/examples: the CI examples parse
  pkgs+=(python3-torch)  # tests/examples: examples/pytorch/train_step.py runs (PyTorch 1.13)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present" >&2
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
