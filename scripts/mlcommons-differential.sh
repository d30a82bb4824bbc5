#!/usr/bin/env bash
# Records MLCommons' verdicts for the differential test (docs/mlperf.md): writes every variant of
# tests/importers/mlperf/differential (through the accelbench_mlperf_variants generator), runs
# MLCommons' package checker on each, and writes tests/importers/mlperf/differential/expected.json:
#   {"mlcommons": {"repository", "commit", "ruleset"},
#    "variants": {id: {"verdict": accept|reject|crash, "defect", "errors": [...],
#                      "rcp": [{"benchmark", "pass", "message", "submission_mean", "rcp_mean",
#                               "max_speedup", "min_epochs", "min_mean"}]}}}
# A crash (a traceback, no verdict) counts as a rejection in the test.
#
# usage: scripts/mlcommons-differential.sh [LOGGING_DIR]
#   LOGGING_DIR (or MLCOMMONS_LOGGING): a checkout of mlcommons/logging at commit 7bbf792. This
#   script downloads nothing. Without a git checkout (an exported tree), MLCOMMONS_COMMIT names
#   the commit. BUILD_DIR (default: build) holds the built accelbench_mlperf_variants; OUT
#   (default: the test's expected.json) is where the recording goes; PYTHON (default: python3)
#   needs numpy, scipy and yaml (Debian: python3-numpy python3-scipy python3-yaml).
# Exit 2 on missing inputs, 1 when the checker could not be run at all.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logging="${1:-${MLCOMMONS_LOGGING:-}}"
build="${BUILD_DIR:-$root/build}"
out="${OUT:-$root/tests/importers/mlperf/differential/expected.json}"
python="${PYTHON:-python3}"
want_commit=7bbf792686936919201796120b970dd820331099

if [[ -z "$logging" || ! -f "$logging/mlperf_logging/package_checker/package_checker.py" ]]; then
  echo "mlcommons-differential: no mlcommons/logging checkout given (argument or MLCOMMONS_LOGGING): '${logging}'" >&2
  echo "  get one with: git clone https://github.com/mlcommons/logging && git -C logging checkout ${want_commit:0:7}" >&2
  exit 2
fi
if ! "$python" -c 'import numpy, scipy, yaml' 2>/dev/null; then
  echo "mlcommons-differential: $python lacks numpy, scipy or yaml, which MLCommons' checker needs (PYTHON=/usr/bin/python3 with Debian's python3-numpy python3-scipy python3-yaml)" >&2
  exit 2
fi
logging="$(cd "$logging" && pwd)"
commit="$(git -C "$logging" rev-parse HEAD 2>/dev/null || echo "${MLCOMMONS_COMMIT:-}")"
if [[ -z "$commit" ]]; then
  echo "mlcommons-differential: cannot tell the commit of $logging (not a git checkout): set MLCOMMONS_COMMIT" >&2
  exit 2
fi
if [[ "$commit" != "$want_commit"* && "$want_commit" != "$commit"* ]]; then
  echo "mlcommons-differential: $logging is at commit $commit, the test is about ${want_commit:0:7}" >&2
  exit 2
fi
generator="$build/tests/importers/mlperf/differential/accelbench_mlperf_variants"
if [[ ! -x "$generator" ]]; then
  echo "mlcommons-differential: no generator at $generator: cmake --build $build --target accelbench_mlperf_variants" >&2
  exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/mlcommons-differential.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"
start=$SECONDS
"$generator" "$work/variants" >"$work/list"

# One variant: the checker runs in the logging checkout on the generated folder (a copy of the
# published files; it writes scaling.json into it), its log beside the output.
check_one() {
  local id="$1" org="$2"
  (cd "$logging" && PYTHONDONTWRITEBYTECODE=1 timeout 300 "$python" -m mlperf_logging.package_checker \
     "$work/variants/$id/$org" training 5.0.0 --log_output "$work/out/$id.log") \
    >"$work/out/$id.txt" 2>&1 || true
}
export -f check_one
export logging work python
cut -f1,2 "$work/list" | xargs -P "$(nproc)" -L 1 bash -c 'check_one "$0" "$1"'

"$python" - "$work" "$out" "$commit" "$logging" <<'EOF'
import ast, json, re, sys

work, out, commit, logging_dir = sys.argv[1:5]
prefix = work + "/variants/"

def record(text):
    if "PACKAGE CHECKER FOUND NO ERRORS" in text:
        verdict = "accept"
    elif "PACKAGE CHECKER FOUND ERRORS" in text:
        verdict = "reject"
    else:
        verdict = "crash"
    # Paths of this machine left out, so that the recording is the same everywhere.
    lines = [l.replace(prefix, "").replace(logging_dir + "/", "")
             for l in text.splitlines()]
    errors = [l[len("ERROR - "):][:300] for l in lines if l.startswith("ERROR - ")]
    if verdict == "crash":  # the exception first: it is what ended the check
        last = [l for l in lines if l.strip()]
        errors.insert(0, (last[-1] if last else "no output")[:300])
    rcp, bench, cur = [], None, {}
    for l in lines:
        m = re.match(r"INFO -  Benchmark (\S+)", l)
        if m:
            bench = m.group(1)
        if "Running RCP Checker" in l:
            cur = {}
        m = re.search(r"RCP Record: (\{.*\})$", l)
        if m:
            rec = ast.literal_eval(m.group(1))
            cur.update({"rcp_mean": rec.get("RCP Mean"), "max_speedup": rec.get("Max Speedup"),
                        "min_epochs": rec.get("Min Epochs")})
        m = re.search(r"Submission mean epochs: (\S+)", l)
        if m:
            cur["submission_mean"] = float(m.group(1))
        m = re.match(r"(?:INFO|ERROR) - RCP Test (Passed|Failed): (.*)$", l)
        if m:
            entry = {"benchmark": bench, "pass": m.group(1) == "Passed", "message": m.group(2),
                     "submission_mean": None, "rcp_mean": None, "max_speedup": None,
                     "min_epochs": None, "min_mean": None}
            entry.update(cur)
            if entry["rcp_mean"] is not None and entry["max_speedup"]:
                entry["min_mean"] = entry["rcp_mean"] / entry["max_speedup"]
            rcp.append(entry)
            cur = {}
    return {"verdict": verdict, "errors": errors[:3], "rcp": rcp}

variants = {}
with open(work + "/list") as f:
    for row in f:
        vid, org, defect = row.rstrip("\n").split("\t")
        with open(f"{work}/out/{vid}.txt", encoding="utf-8", errors="replace") as o:
            r = record(o.read())
        r["defect"] = defect
        variants[vid] = r
doc = {"mlcommons": {"repository": "https://github.com/mlcommons/logging", "commit": commit,
                     "ruleset": "5.0.0"},
       "variants": variants}
with open(out, "w") as f:
    json.dump(doc, f, indent=1, sort_keys=True)
    f.write("\n")
counts = {}
for r in variants.values():
    counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
print(f"mlcommons-differential: {len(variants)} variants, " +
      ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
EOF
echo "mlcommons-differential: wrote $out in $((SECONDS - start)) s" >&2
