#!/usr/bin/env bash
# The main job: install dependencies, build, run the default suite into the default database
# ($ACCELBENCH_DB or results/accelbench.db), and write a results export next to it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
db=${ACCELBENCH_DB:-results/accelbench.db}
suite=${ACCELBENCH_SUITE:-quick}
tag="default-$(date -u +%Y-%m-%d)"
rc=0
./build/accelbench run --suite "$suite" --tag "$tag" --db "$db" || rc=$?
mkdir -p results/reports
./build/accelbench export --db "$db" --tag "$tag" -o "results/reports/$tag.json"
echo "results: database $db, export results/reports/$tag.json" >&2
exit $rc
