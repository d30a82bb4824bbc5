#!/usr/bin/env bash
# The README's A/A example as a test: the quick suite run twice in one go (the same code, seconds
# apart) must come out unchanged or inconclusive for every config, never regressed or improved,
# and every output must say which variance the verdicts account for. A loaded machine makes the
# pairs inconclusive (the load is a reason of its own), which is also a pass: this test is about
# false alarms, not about the machine.
# Usage: aa_quick_suite.sh ACCELBENCH_EXE
set -euo pipefail
ab=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/aa.db
"$ab" run --suite quick --tag aa-first --db "$db" --quiet >"$tmp/first.txt"
"$ab" run --suite quick --tag aa-second --db "$db" --quiet >"$tmp/second.txt"
runs=$(grep -c ' run(s) stored' "$tmp/first.txt" || true)
[[ $runs == 1 ]] || { echo "FAIL: the first job printed no summary line"; exit 1; }
rc=0
"$ab" compare --baseline tag=aa-first --candidate tag=aa-second --db "$db" --format json \
  -o "$tmp/aa.json" || rc=$?
"$ab" compare --baseline tag=aa-first --candidate tag=aa-second --db "$db" >"$tmp/aa.txt" || true
cat "$tmp/aa.txt"
python3 - "$tmp/aa.json" "$tmp/aa.txt" "$rc" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
rc = int(sys.argv[3])
bad = [p["name"] + ": " + p["verdict"] + " (" + p["reason"] + ")"
       for p in c["pairs"] if p["verdict"] in ("regressed", "improved")]
assert not bad, "A/A called changed:\n" + "\n".join(bad)
assert rc == 0, f"compare exited {rc} on an A/A comparison"
tested = [p for p in c["pairs"] if p["verdict"] != "skipped"]
skipped = [p for p in c["pairs"] if p["verdict"] == "skipped"]
assert len(tested) + len(skipped) == 7, c["summary"]
assert len(tested) >= 6, f"{len(tested)} tested pairs"
for p in tested:
    assert p["baseline"]["runs"] == 5 and p["candidate"]["runs"] == 5, p["name"]
    assert p["test"]["method"] == "t on log run medians", p["test"]
    assert "between runs" in p["test"]["accounts_for"], p["test"]
# A config this machine cannot run (OpenBLAS without bf16) is skipped on both sides: "skipped",
# not inconclusive.
assert c["summary"]["skipped"] == len(skipped), c["summary"]
assert all(p["reason"].startswith("skipped on both sides") for p in skipped), skipped
assert any("variance between runs" in n for n in c["notes"]), c["notes"]
# Said once, not per pair.
assert text.count("note: verdicts account for") == 1, text
assert "fewer than 9" not in text, text
counts = c["summary"]
print(f"A/A: {counts['unchanged']} unchanged, {counts['inconclusive']} inconclusive, "
      f"{counts['skipped']} skipped, 0 regressed, 0 improved")
PY
