#!/usr/bin/env bash
# Runs MLCommons' package checker on packages that accelbench itself writes, from the two test
# trainers of tests/workloads/external (docs/mlperf.md, "Packages accelbench writes"):
#   - open:   mlperf_trainer.py, a real small trainer logging itself as an open rgat result;
#   - closed: lora_log_trainer.py, closed llama2_70b_lora logs converging at CLOSED_SAMPLES
#             (default 3072, faster than the reference mean of 5.0 but within it: scaled).
# Each set is run with `accelbench run external --set mode=time_to_train`, packaged with
# `accelbench package`, checked with `accelbench check-package --round 5.0` and with MLCommons'
# checker (`python3 -m mlperf_logging.package_checker ORG training 5.0.0`); one line per package
# gives both verdicts, and the exit status is 1 when they differ or either rejects.
#
# usage: scripts/mlcommons-written-packages.sh LOGGING_DIR
#   LOGGING_DIR (or MLCOMMONS_LOGGING): a checkout of mlcommons/logging (the differential test's
#   commit is 7bbf792). This script downloads nothing. BUILD_DIR (default: build) holds the built
#   accelbench; PYTHON (default: python3) needs numpy, scipy and yaml (Debian: python3-numpy
#   python3-scipy python3-yaml).
# Exit 2 on missing inputs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logging="${1:-${MLCOMMONS_LOGGING:-}}"
build="${BUILD_DIR:-$root/build}"
python="${PYTHON:-python3}"
closed_samples="${CLOSED_SAMPLES:-3072}"
ab="$build/accelbench"

if [[ -z "$logging" || ! -f "$logging/mlperf_logging/package_checker/package_checker.py" ]]; then
  echo "mlcommons-written-packages: no mlcommons/logging checkout given (argument or MLCOMMONS_LOGGING): '${logging}'" >&2
  exit 2
fi
if [[ ! -x "$ab" ]]; then
  echo "mlcommons-written-packages: no accelbench at $ab: cmake --build $build --target accelbench" >&2
  exit 2
fi
if ! "$python" -c 'import numpy, scipy, yaml' 2>/dev/null; then
  echo "mlcommons-written-packages: $python lacks numpy, scipy or yaml, which MLCommons' checker needs (PYTHON=/usr/bin/python3 with Debian's python3-numpy python3-scipy python3-yaml)" >&2
  exit 2
fi
logging="$(cd "$logging" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mlcommons-written.XXXXXX")"
trap 'rm -rf "$work"' EXIT
trainers="$root/tests/workloads/external"

# package NAME DIVISION -- TRAINER ARGS...: runs the set, writes and checks its package.
status=0
package() {
  local name=$1 division=$2
  shift 3
  local db="$work/$name.db" out="$work/$name-pkg"
  "$ab" run external --name "$name" --set mode=time_to_train --quiet --db "$db" \
    --rule 'training.round="5.0"' -- "$@" >"$work/$name.run" 2>&1 || true
  local system
  system="$("$ab" export --db "$db" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["system"])')"
  "$ab" package --org acme --division "$division" --system "$system" --out "$out" --db "$db" \
    >"$work/$name.pkg" 2>&1
  local ours theirs
  ours="$("$ab" check-package "$out/acme" --round 5.0 | head -1 | cut -d' ' -f1)" || true
  if (cd "$logging" && PYTHONDONTWRITEBYTECODE=1 "$python" -m mlperf_logging.package_checker \
        "$out/acme" training 5.0.0 --log_output "$work/$name.mlc.log") >"$work/$name.mlc" 2>&1 &&
     grep -q "PACKAGE CHECKER FOUND NO ERRORS" "$work/$name.mlc"; then
    theirs=accept
  else
    theirs=reject
  fi
  local rcp
  rcp="$(grep -h "RCP Test" "$work/$name.mlc" | sed "s/^[A-Z]* - //" | head -1 || true)"
  echo "mlcommons-written-packages: $name ($division): accelbench $ours, MLCommons $theirs${rcp:+ ($rcp)}"
  [[ "$ours" == VALID && "$theirs" == accept ]] || status=1
}

package rgat-open open -- python3 "$trainers/mlperf_trainer.py"
package lora-closed closed -- python3 "$trainers/lora_log_trainer.py" --counter "$work/count" \
  --samples "$closed_samples" --batch 8
exit $status
