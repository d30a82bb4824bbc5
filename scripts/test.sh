#!/usr/bin/env bash
# The README's test command (and .ci/run). Installs dependencies (with the browser used by the
# HTML report test and clang-14 for the sanitizer build), then:
#   1. the Release build (build/: CUDA targets too when nvcc is present) and the whole test suite;
#   2. the sanitizer build (build-san/: clang-14, AddressSanitizer + UndefinedBehaviorSanitizer,
#      CUDA off), the whole unit suite again under the sanitizers, and every libFuzzer target of
#      tests/fuzz for ACCELBENCH_FUZZ_SECONDS (default 10) each.
# Both parts always run; the exit status is non-zero when either failed. The wall time of each
# phase is printed at the end. ACCELBENCH_SKIP_SANITIZE=1 runs part 1 only.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=${ACCELBENCH_TEST_JOBS:-2}

bash scripts/install-deps.sh --test || exit 1

times=()
status=0
# phase NAME COMMAND...: runs COMMAND, records its wall time, remembers a failure.
phase() {
  local name=$1 start rc
  shift
  echo "== test.sh: $name" >&2
  start=$(date +%s)
  "$@"
  rc=$?
  times+=("$(printf '%-22s %5d s  %s' "$name" $(($(date +%s) - start)) "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")")")
  ((rc == 0)) || status=1
  return $rc
}

# Warnings are errors in the Release build (ACCELBENCH_WERROR): a new warning fails CI here.
if phase "release build" env ACCELBENCH_CMAKE_ARGS="${ACCELBENCH_CMAKE_ARGS:-} -DACCELBENCH_WERROR=ON" \
  bash scripts/build.sh; then
  phase "release tests" ctest --test-dir build -j "$jobs" --output-on-failure --timeout 300
fi

if [[ "${ACCELBENCH_SKIP_SANITIZE:-0}" != 1 ]]; then
  # Leaks inside Debian's libraries are suppressed by name (tests/sanitizers/lsan.supp); every
  # other leak, and every ASan or UBSan report, fails the test that triggered it.
  export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp"
  san_args="-DACCELBENCH_FUZZ_SECONDS=${ACCELBENCH_FUZZ_SECONDS:-10}"
  if phase "sanitizer build" env ACCELBENCH_SAN_CMAKE_ARGS="$san_args" bash scripts/build-san.sh; then
    phase "sanitizer unit tests" ctest --test-dir build-san -j "$jobs" --output-on-failure \
      --timeout 600 -LE fuzz
    phase "fuzz tests" ctest --test-dir build-san -j "$jobs" --output-on-failure -L fuzz
    # One line per target: executions, corpus size, crashes (run_fuzz.sh's summary).
    grep -h '^fuzz: [a-z_]* executions=' build-san/Testing/Temporary/LastTest.log >&2 || true
  fi
fi

echo "== test.sh: wall time per phase" >&2
printf '  %s\n' "${times[@]}" >&2
exit $status
