#!/usr/bin/env bash
# The main job: install dependencies, build, run the default suite into the default database
# ($ACCELBENCH_DB or results/accelbench.db), then write reports under results/reports/:
#   <tag>.json                      the runs of this job (accelbench export)
#   <tag>-vs-previous.{html,json}   this job against the previous default job, when there is one
#   latest.{html,json}              links to the newest of those (the README's third command)
#   h100-vs-blackwell.{html,json}   published H100 vs Blackwell results (reference figures shipped
#                                   in results/published, with the published MLPerf Training
#                                   results in results/published/mlperf)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh --job   # the accelbench executable only (CUDA when a GPU is present)
ab=./build/accelbench
db=${ACCELBENCH_DB:-results/accelbench.db}
suite=${ACCELBENCH_SUITE:-quick}
tag="default-$(date -u +%Y-%m-%dT%H%M%S)"
mkdir -p results/reports
previous=$($ab show --db "$db" --json --limit 0 2>/dev/null | python3 -c '
import json, sys
try:
    runs = json.load(sys.stdin)
except Exception:
    runs = []
tags = sorted({t for r in runs for t in r.get("tags", []) if t.startswith("default-")})
print(tags[-1] if tags else "")' || true)

rc=0
$ab run --suite "$suite" --tag "$tag" --db "$db" || rc=$?
$ab export --db "$db" --tag "$tag" -o "results/reports/$tag.json"

# Reference results: idempotent imports (a run already present is not stored twice).
for f in results/published/*.json; do $ab import "$f" --db "$db" >/dev/null; done
# Exit 1 means some logs had problems and the rest was imported; anything else stops the job.
$ab import --format mlperf results/published/mlperf --db "$db" >/dev/null || [[ $? -eq 1 ]]
# H100 against every Blackwell part (B200, GB200: the headline is Llama 3.1 405B on 512 GB200s).
# The baseline stays accelerator=H100, not family=Hopper: with H200 runs on that side as well,
# the report pairs each Blackwell group with whichever Hopper group it meets first (H200 against
# B200, H100 against GB200) instead of H100 against both.
$ab report --baseline accelerator=H100 --candidate family=Blackwell --db "$db" --quiet \
  --html results/reports/h100-vs-blackwell.html -o results/reports/h100-vs-blackwell.json || true
if [[ -n "$previous" ]]; then
  $ab report --baseline "tag=$previous" --candidate "tag=$tag" --db "$db" --quiet \
    --html "results/reports/$tag-vs-previous.html" -o "results/reports/$tag-vs-previous.json" || true
  echo "accelbench: this job ($tag) against the previous one ($previous):" >&2
  $ab compare --baseline "tag=$previous" --candidate "tag=$tag" --db "$db" || true
  # A stable name for the newest comparison: relative links, so the folder can move.
  for ext in html json; do
    [[ -f "results/reports/$tag-vs-previous.$ext" ]] &&
      ln -sfn "$tag-vs-previous.$ext" "results/reports/latest.$ext"
  done
  echo "accelbench: report: results/reports/latest.html ($tag-vs-previous.html)" >&2
else
  # The first job on this database has nothing of its own to compare with: say what comes next.
  echo "accelbench: first default job in $db: run scripts/run-default.sh again to compare the next job with this one" >&2
fi
echo "accelbench: database $db; reports in results/reports/ ($tag)" >&2
# A job that exits non-zero says why on its last line: the runs' own reasons scrolled away above
# the comparison and the reports. The reason is the first failed or INVALID run of this job.
if [[ $rc -ne 0 ]]; then
  why=$($ab show --db "$db" --tag "$tag" --json --limit 0 2>/dev/null | python3 -c '
import json, sys
try:
    runs = json.load(sys.stdin)
except Exception:
    runs = []
failed = [r for r in runs if r.get("status") == "failed"]
invalid = [r for r in runs if r.get("status") != "failed" and r.get("validity") == "INVALID"]
if failed and invalid:
    head = f"{len(failed)} failed and {len(invalid)} INVALID of {len(runs)} runs"
elif failed or invalid:
    kind = "failed" if failed else "INVALID"
    head = f"{len(failed or invalid)} of {len(runs)} runs {kind}"
if failed or invalid:
    r = (failed or invalid)[0]
    why = r.get("status_reason") if failed else "; ".join(r.get("invalid_reasons", [])[:1])
    key, why = r.get("config_key", "?"), why or "no reason recorded"
    print(f"{head} ({key}: {why})")
' || true)
  what=${previous:+the comparison and }
  echo "accelbench: exit $rc: ${why:-accelbench run stored no run that says why (see its messages above)}; ${what}reports above were still written" >&2
fi
exit $rc
