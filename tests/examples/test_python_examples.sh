#!/usr/bin/env bash
# The Python examples of examples/pytorch under accelbench run external, as a user runs them.
#   protocol   the standard-library reporter (accelbench_protocol.py) from a small program: its
#              samples, metric, check and facts stored, a VALID run
#   pytorch    train_step.py on the CPU, 5 timed steps: VALID, tokens/s and TFLOP/s from its
#              samples, run by the first Python that has torch: $ACCELBENCH_TORCH_PYTHON, the
#              python3 on PATH, then Debian's /usr/bin/python3 (python3-torch, installed by
#              scripts/install-deps.sh --test; a python3 on PATH from pyenv or a venv does not see
#              it). Skipped, exit 77, where none has torch.
# Usage: test_python_examples.sh ACCELBENCH SOURCE_DIR protocol|pytorch
set -uo pipefail
exe=$1 src=$2 which=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The first of the candidate Pythons that imports torch, printed; fails when none does.
tried=(${ACCELBENCH_TORCH_PYTHON:+"$ACCELBENCH_TORCH_PYTHON"} python3 /usr/bin/python3)
torch_python() {
  local p
  for p in "${tried[@]}"; do
    command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null && { command -v "$p"; return 0; }
  done
  return 1
}

case $which in
protocol)
  cat >"$tmp/prog.py" <<PY
import sys
sys.path.insert(0, "$src/examples/pytorch")
from accelbench_protocol import Reporter
rep = Reporter()
for i in range(4):
    rep.sample(0.25, items=1000, flops=5e11)
rep.metric("loss", 1.5, direction="lower")
rep.check(True, "fine")
rep.extra(framework="none")
try:
    rep.sample(float("nan"))
except ValueError as e:
    print("refused:", e)
rep.close()
PY
  cmd=(python3 "$tmp/prog.py") ;;
pytorch)
  py=$(torch_python) || { echo "skipped: no Python with torch (tried: ${tried[*]}; apt-get install python3-torch)"; exit 77; }
  echo "pytorch: $py, torch $("$py" -c 'import torch; print(torch.__version__)')"
  cmd=("$py" "$src/examples/pytorch/train_step.py" --device cpu --steps 5 --warmup 1 --seq 32 --dim 64 --layers 1 --vocab 128) ;;
*) fail "unknown case $which" ;;
esac

"$exe" run external --name "$which" --rule warmup_iterations=0 --rule repetitions=4 --quiet --json \
  --db "$tmp/t.db" -- "${cmd[@]}" >"$tmp/out.json" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
python3 - "$tmp/out.json" "$which" <<'PY' || exit 1
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
which = sys.argv[2]
metrics = {m["name"]: m["value"] for m in run["metrics"]}
def need(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}: {json.dumps(run)[:2000]}")
need(run["validity"] == "VALID", "VALID")
need(run["extra"]["mode"] == "protocol", "protocol mode")
need(run["extra"]["correctness"]["passed"] is True, "the program's check passed")
if which == "protocol":
    need(len(run["samples"]) == 4, "4 samples")
    need(abs(metrics["items_per_s"] - 4000) < 1e-6, "items_per_s = 1000 / 0.25")
    need(abs(metrics["tflops"] - 2) < 1e-9, "tflops = 5e11 / 0.25 / 1e12")
    need(metrics["loss"] == 1.5, "the program's metric")
    need(run["extra"]["program"]["framework"] == "none", "the program's facts")
else:
    need(len(run["samples"]) == 5, "5 samples (one per timed step)")
    need(metrics["items_per_s"] > 0 and metrics["tflops"] > 0, "tokens/s and TFLOP/s")
    need(run["extra"]["program"]["framework"].startswith("torch"), "torch's version")
shown = ", ".join(f"{k} {v:.4g}" for k, v in sorted(metrics.items()))
print(f"{which}: VALID, {len(run['samples'])} samples; {shown}")
PY
