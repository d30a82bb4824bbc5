#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for longer than CI does (CI: 10 s each inside
# scripts/test.sh): SECONDS each, one after the other, each over a scratch copy of its seed corpus
# (tests/fuzz/corpus/<target>/; the repository is not written). Prints per target the executions,
# the corpus size (seeds and new inputs found) and the crashes, and exits 1 if any target found
# something (the inputs are kept in build-san/fuzz-artifacts/; reproduce with
# build-san/tests/fuzz/fuzz_<target> FILE).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 300 s, every target)
# Builds build-san first (scripts/build-san.sh: clang-14, ASan + UBSan).
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
only=("$@")

bash scripts/build-san.sh >/dev/null || {
  echo "fuzz.sh: the sanitizer build failed (run scripts/build-san.sh to see why)" >&2
  exit 2
}
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp"
mkdir -p build-san/fuzz-artifacts

summaries=()
failed=0
while read -r name exe corpus dict; do
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  out=$(bash tests/fuzz/run_fuzz.sh "$exe" "$corpus" "$seconds" "$PWD/build-san/fuzz-artifacts" $dict)
  rc=$?
  ((rc != 0)) && { failed=1; echo "$out"; }
  line=$(grep '^fuzz: ' <<<"$out" | tail -1)
  echo "$line"
  summaries+=("$line")
done <build-san/fuzz-targets.txt

echo
echo "fuzz.sh: ${#summaries[@]} target(s), ${seconds} s each"
printf '  %s\n' "${summaries[@]#fuzz: }"
exit "$failed"
