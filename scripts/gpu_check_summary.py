#!/usr/bin/env python3
"""Steps and summary of scripts/gpu-check.sh --from.

  gpu_check_summary.py record OUT NAME KIND STATUS EXIT SECONDS CAP LIMIT RESULT LOG
      appends one line to OUT/steps.jsonl as soon as a step ends: its status, exit code, time,
      cap and limit, its result (RESULT: a JSON file, or '-') and the last lines of its log
      (LOG, or '-'), so that a call cut short still returns every step done so far.
  gpu_check_summary.py ratios OUT PLAN_JSON
      each benchmark of the plan next to its PyTorch peer from OUT/steps.jsonl: the ratio, the
      aim (cuBLASLt bf16/fp8 >= 95% of torch.matmul/torch._scaled_mm with the same output type,
      cuDNN attention >= 90% of PyTorch SDPA, the Llama 3 8B block >= 85% of PyTorch's same
      recipe), throttled samples; writes OUT/ratios.json. A missing side is reported as
      missing, with why, never as a number."""
import json
import os
import sys

LOG_TAIL_LINES = 15


def read_json(path):
    if not path or path == "-":
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        try:  # a server answer: one JSON line
            with open(path) as f:
                return json.loads(f.read().strip().splitlines()[-1])
        except Exception:
            return None


def log_tail(path):
    if not path or path == "-" or not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        return "".join(f.readlines()[-LOG_TAIL_LINES:])


def record(out, name, kind, status, rc, seconds, cap, limit, result, log):
    r = {"step": name, "kind": kind, "status": status, "exit": int(rc), "seconds": float(seconds),
         "cap_s": float(cap), "limit_s": float(limit), "result": read_json(result)}
    tail = log_tail(log)
    if tail and status != "passed":
        r["log_tail"] = tail
    with open(os.path.join(out, "steps.jsonl"), "a") as f:
        f.write(json.dumps(r) + "\n")


def load_steps(out):
    steps = {}
    try:
        with open(os.path.join(out, "steps.jsonl")) as f:
            for line in f:
                try:
                    r = json.loads(line)
                    steps[r["step"]] = r
                except (ValueError, KeyError):
                    continue
    except OSError:
        pass
    return steps


def ab_run(rec):
    d = (rec or {}).get("result")
    if not d:
        return None
    runs = d if isinstance(d, list) else d.get("runs", [d])
    return runs[0] if runs else None


def metric(run, name):
    for m in (run or {}).get("metrics", []):
        if m.get("name") == name:
            return m.get("value")
    return None


def throttled(run):
    s = (run or {}).get("samples", [])
    n = sum(1 for x in s if (x.get("extra") or {}).get("throttled"))
    return f"{n}/{len(s)} samples throttled" if s else "no samples"


def find_key(d, key):
    """The first value of key anywhere in d (the recipe may sit in extra or effective)."""
    if isinstance(d, dict):
        if key in d and not isinstance(d[key], (dict, list)):
            return d[key]
        for v in d.values():
            x = find_key(v, key)
            if x is not None:
                return x
    elif isinstance(d, list):
        for v in d:
            x = find_key(v, key)
            if x is not None:
                return x
    return None


def why_missing(rec, run, side):
    if rec is None:
        return f"{side} not run"
    if side == "torch":
        return f"torch {rec['status']}: {(rec.get('result') or {}).get('error', 'no answer')}"
    status = (run or {}).get("status", rec["status"])
    reason = (run or {}).get("status_reason")
    return f"accelbench {status}" + (f": {reason}" if reason else f" (exit {rec['exit']})")


def row(s, steps):
    rec, prec = steps.get(s["name"]), steps.get(s["peer"])
    run = ab_run(rec)
    key = s["metric"]
    a = metric(run, key)
    pres = (prec or {}).get("result") or {}
    t = pres.get(key) if pres.get("ok") else None
    r = {"label": s["label"], "step": s["name"], "peer": s["peer"], "accelbench": a, "torch": t,
         "torch_impl": pres.get("impl"), "aim": s.get("aim"), "throttle": throttled(run)}
    unit = "tokens/s" if key == "tokens_per_s" else "TFLOP/s"
    if a is None or t is None:
        why = ([] if a is not None else [why_missing(rec, run, "accelbench")]) + \
              ([] if t is not None else [why_missing(prec, None, "torch")])
        print(f"ratio {s['label']}: missing ({'; '.join(why)})")
        return r
    r["ratio"] = a / t
    aim = s.get("aim")
    verdict = "" if aim is None else f" (aim >= {aim:.0%}: {'met' if a / t >= aim else 'MISSED'})"
    validity = (run or {}).get("validity", "")
    impl = f" {pres['impl']}" if pres.get("impl") else ""
    line = (f"ratio {s['label']}: accelbench {a:.1f} / torch{impl} {t:.1f} {unit}"
            f" = {a / t:.1%}{verdict}; {r['throttle']}")
    if validity and validity.lower() != "valid":
        line += f"; accelbench run {validity}"
    if s.get("recipe"):
        ra, rt = find_key(run, "recipe"), pres.get("recipe")
        r["recipe"] = {"accelbench": ra, "torch": rt}
        line += f"; recipe accelbench {ra or 'unstated'}, torch {rt or 'unstated'}"
        if ra != rt:
            line += " (NOT the same recipe)"
    print(line)
    return r


def ratios(out, plan_path):
    with open(plan_path) as f:
        plan = json.load(f)
    steps = load_steps(out)
    rows = [row(s, steps) for s in plan["steps"] if s["kind"] == "bench"]
    with open(os.path.join(out, "ratios.json"), "w") as f:
        json.dump(rows, f, indent=1)
    met = [r for r in rows if r.get("aim") is not None and r.get("ratio") is not None]
    print(f"aims: {sum(r['ratio'] >= r['aim'] for r in met)} of {len(met)} measured met; "
          f"{sum(r.get('ratio') is None for r in rows)} of {len(rows)} ratios missing")


def main(argv):
    if len(argv) == 11 and argv[0] == "record":
        record(*argv[1:])
        return 0
    if len(argv) == 3 and argv[0] == "ratios":
        ratios(argv[1], argv[2])
        return 0
    print("usage: gpu_check_summary.py record OUT NAME KIND STATUS EXIT SECONDS CAP LIMIT RESULT LOG"
          " | ratios OUT PLAN_JSON", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
