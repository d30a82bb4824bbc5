#!/usr/bin/env bash
# Reruns the tests labelled `timing` (docs/architecture.md, "Tests") ROUNDS times (default 5) on a
# busy machine: one busy loop per core runs beside them the whole time, as a shared CI runner or a
# colleague's build would. Every round must pass: a test that fails here measures the machine, not
# the code. Prints the CPU, one line per round and a closing "N passed, N failed" line; exit 1 when
# any round failed.
# Usage: scripts/test-timing-loaded.sh [ROUNDS] [BUILD_DIR] [CTEST_ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
build=${2:-build}
shift $(($# < 2 ? $# : 2))
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "test-timing-loaded: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2; }
[[ -f $build/CTestTestfile.cmake ]] || { echo "test-timing-loaded: no CTest tree in '$build' (build first: scripts/build.sh)" >&2; exit 2; }

busy=()
stop_busy() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_busy EXIT
for ((i = 0; i < $(nproc); i++)); do
  (while :; do :; done) &
  busy+=($!)
done
echo "test-timing-loaded: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, ${#busy[@]} busy loop(s)"
passed=0 failed=0
for ((r = 1; r <= rounds; r++)); do
  log=$build/Testing/Temporary/timing-loaded-$r.log
  start=$(date +%s)
  if ctest --test-dir "$build" -L timing -j "$(nproc)" --output-on-failure --timeout 900 "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); verdict=ok
  else
    failed=$((failed + 1)); verdict="FAILED: $(grep -E '^\s*[0-9]+ - ' "$log" | grep -v '(Skipped)$' | sed 's/^[[:space:]]*//' | tr '\n' ';')"
  fi
  echo "round $r: $(grep -Eo '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log"), $(($(date +%s) - start)) s, $verdict"
done
echo "timing: $passed passed, $failed failed"
((failed == 0))
