#!/usr/bin/env bash
# Lists the production functions longer than a limit (80 lines by default), longest first, with
# their count: the figure readability-function-size checks, readable without a compile database.
# Usage: scripts/function-sizes.sh [limit]   (run from anywhere; reads harness/ importers/ kernels/ workloads/ reporters/)
set -euo pipefail
limit=${1:-80}
cd "$(dirname "$0")/.."
command -v ctags >/dev/null || { echo "function-sizes: needs universal-ctags (apt-get install universal-ctags)" >&2; exit 2; }
git ls-files -- harness importers kernels workloads reporters | grep -E '\.(cpp|cu|hpp|inl)$' |
  ctags -L - --languages=C++ --map-C++=+.cu --map-C++=+.inl --kinds-C++=f --fields=+ne \
        --output-format=json -o - 2>/dev/null |
  python3 -c '
import json, sys
limit = int(sys.argv[1])
rows = []
for line in sys.stdin:
    t = json.loads(line)
    if "end" in t:
        rows.append((t["end"] - t["line"] + 1, t["path"], t["line"], t.get("scope", "") + "::" + t["name"]))
rows.sort(reverse=True)
over = [r for r in rows if r[0] > limit]
for n, p, l, name in over:
    print(f"{n:5d}  {p}:{l}  {name}")
print(f"longest: {rows[0][0] if rows else 0} lines; over {limit} lines: {len(over)} of {len(rows)} functions")
' "$limit"
