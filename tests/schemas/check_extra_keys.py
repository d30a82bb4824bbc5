#!/usr/bin/env python3
"""Every run.extra and sample.extra key our writers write is documented in the results schema.

schemas/results.schema.json lists the keys of run.extra ($defs/run_extra) and sample.extra
($defs/sample_extra) with their types, writers and readers. This check runs the writers the way
a user does and fails, naming the key and the run, on a key the schema does not list:
  - every workload's CPU backend at a tiny size (gemm, attention, collective, train.llama in both
    modes, a layer subset), through the binary as `accelbench run`;
  - under mpirun when given (--mpiexec): train.llama data parallel with its baseline, collective;
  - the importers: a Google Benchmark JSON written here, the published MLPerf Training results
    and the published figures (results/published), through `accelbench import`;
then reads every stored run back through `accelbench export` (which must import again: the
schema's types are the writers' types). Every schema key also has its row in docs/store.md. Writers that need a GPU (the CUDA
backends) cannot run here: their keys are checked by reading, and listed in the schema too.

usage: check_extra_keys.py --root SRC --exe ACCELBENCH [--mpiexec MPIEXEC]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile


def run(cmd, env, ok=(0, 1)):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode not in ok:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def tiny_ttt_rules(path):
    # Time to train in a few steps: one run of two steps, one evaluation (not converged: the run
    # is INVALID, exit 1, which is what writes every key of a not-converged run as well).
    rules = {
        "schema_version": 1, "id": "ttt-contract", "version": "1.0",
        "description": "check_extra_keys: time to train in two steps",
        "applies_to": ["train.llama"], "overridable": [],
        "measurement": {"warmup_iterations": 0, "repetitions": 1, "max_time_s": 600, "cache": "hot"},
        "comparison": {"min_effect_pct": 5, "alpha": 0.01},
        "training": {
            "mode": "time_to_train", "division": "open", "model": "tiny", "seq": 16,
            "global_batch": 2, "micro_batch": 2, "runs": 1, "min_runs": 1, "max_steps": 2,
            "eval_every_samples": 4, "eval_samples": 2,
            "target": {"margin_nats": 0.1},
            "data": {"order": 1, "branching": 4, "epsilon": 0.01, "seed": 1, "eval_seed": 2},
        },
    }
    with open(path, "w") as f:
        json.dump(rules, f)


GBENCH = {
    "context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "h", "executable": "bm",
                "num_cpus": 2, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False,
                "caches": [], "load_avg": [0.1], "library_build_type": "release"},
    "benchmarks": [
        {"name": "BM_a/64", "family_index": 0, "per_family_instance_index": 0,
         "run_name": "BM_a/64", "run_type": "iteration", "repetitions": 2, "repetition_index": r,
         "threads": 1, "iterations": 100, "real_time": 10.0 + r, "cpu_time": 9.5 + r,
         "time_unit": "ns", "items_per_second": 1e8, "label": "x"}
        for r in range(2)
    ],
}


EXTERNAL = r"""#!/bin/sh
echo ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "seed", "value": 1, "metadata": {"file": "p", "lineno": 1}}'
echo '{"sample": {"seconds": 0.01, "items": 10, "flops": 1e9, "bytes": 1e6}}' >&3
echo '{"check": {"passed": true, "reason": "ok"}}' >&3
echo '{"extra": {"framework": "sh"}}' >&3
[ "$1" = fail ] && { echo oops >&2; exit 3; }
exit 0
"""


def write_external(base, tmp, env):
    """accelbench run external: a program on the results protocol, and one that fails."""
    prog = os.path.join(tmp, "external.sh")
    with open(prog, "w") as f:
        f.write(EXTERNAL)
    os.chmod(prog, 0o755)
    ext = base[:2] + ["external"] + base[2:] + ["--name", "p", "--rule", "repetitions=2"]
    run(ext + ["--", prog, "ok"], env)
    run(ext + ["--", prog, "fail"], env)
    # Time to train with the tests' MLPerf-style trainer: three runs to the ruleset's target.
    trainer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads",
                           "external", "mlperf_trainer.py")
    run(base[:2] + ["external"] + base[2:] +
        ["--name", "t", "--set", "mode=time_to_train", "--rule", "training.runs=3", "--rule",
         "training.target.eval_accuracy=0.7", "--", sys.executable, trainer, "--benchmark", "x"],
        env)


def write_all(args, tmp, env):
    exe, db = args.exe, os.path.join(tmp, "r.db")
    base = [exe, "run", "--db", db, "--quiet"]
    kq = ["--rules", "kernel-quick"]
    run(base[:2] + ["gemm"] + base[2:] + kq + ["--set", "M=32", "--set", "N=32", "--set", "K=32",
                                                "--sweep", "dtype=fp32,bf16"], env)
    run(base[:2] + ["attention"] + base[2:] + kq +
        ["--set", "batch=1", "--set", "heads=2", "--set", "kv_heads=1", "--set", "seq_q=16",
         "--set", "seq_k=16", "--set", "head_dim=16", "--set", "pass=fwd_bwd"], env)
    run(base[:2] + ["collective"] + base[2:] + kq + ["--set", "bytes=4096"], env)
    train = base[:2] + ["train.llama"] + base[2:] + ["--set", "threads=1", "--seed", "7"]
    run(train + ["--set", "steps=1", "--set", "seq=16", "--set", "batch=2"], env)
    run(train + ["--set", "steps=1", "--set", "seq=16", "--set", "batch=2", "--set", "layers=1"],
        env)
    rules = os.path.join(tmp, "ttt.json")
    tiny_ttt_rules(rules)
    run(train + ["--rules", rules, "--set", "mode=time_to_train"], env)
    if args.mpiexec:
        # CI runs as root; two ranks on two cores need --oversubscribe.
        menv = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    OMPI_MCA_rmaps_base_oversubscribe="1")
        mpi = [args.mpiexec, "--oversubscribe", "-np", "2"]
        for cmd in (train + ["--set", "steps=1", "--set", "seq=16", "--set", "batch=2",
                             "--set", "baseline=1"],
                    base[:2] + ["collective"] + base[2:] + kq + ["--set", "bytes=4096"]):
            p = run(mpi + cmd, menv)
            if "stored" not in p.stdout:
                sys.exit(f"FAIL: {' '.join(mpi + cmd)} stored no run:\n{p.stdout}\n{p.stderr}")
    write_external(base, tmp, env)
    # accelbench ab: an A/A of the external program, two rounds (extra.ab; exit 1 if it calls one)
    prog = shlex.quote(os.path.join(tmp, "external.sh"))
    run([exe, "ab", "external", "--name", "ab", "--rule", "repetitions=2", "--rounds", "2",
         "--baseline-args", f"-- {prog} ok", "--candidate-args", f"-- {prog} ok", "--tag", "ab",
         "--quiet", "--db", db], env)
    gb = os.path.join(tmp, "gbench.json")
    with open(gb, "w") as f:
        json.dump(GBENCH, f)
    run([exe, "import", gb, "--db", db, "--system", "box", "--format", "gbench"], env)
    published = os.path.join(args.root, "results", "published")
    run([exe, "import", os.path.join(published, "mlperf"), "--db", db], env)
    for name in ("kernels.json", "training.json"):
        run([exe, "import", os.path.join(published, name), "--db", db], env)
    out = os.path.join(tmp, "export.json")
    run([exe, "export", "--db", db, "-o", out], env, ok=(0,))
    # The types in the schema are what the writers write: the export imports back.
    run([exe, "import", out, "--db", os.path.join(tmp, "back.db")], env, ok=(0,))
    with open(out) as f:
        return json.load(f)["runs"]


def undocumented_in_table(root, run_keys, sample_keys):
    """Schema keys without their row in docs/store.md's table of extra keys."""
    with open(os.path.join(root, "docs", "store.md")) as f:
        text = f.read()
    return [f"{where}.extra.{k}" for where, keys in (("run", run_keys), ("sample", sample_keys))
            for k in sorted(keys) if f"| `{k}` | {where}.extra |" not in text]


def json_type(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(v), "null")


def dump_types(runs):
    types = {}
    for r in runs:
        for where, extras in (("run", [r.get("extra") or {}]),
                              ("sample", [s.get("extra") or {} for s in r.get("samples", [])])):
            for x in extras:
                for k, v in x.items():
                    types.setdefault((where, k), set()).add((json_type(v), r["workload"]))
    for (where, k), ts in sorted(types.items()):
        print(f"{where}.extra.{k}: {sorted({t for t, _ in ts})} from {sorted({w for _, w in ts})}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--dump", action="store_true", help="print every key written with its types")
    args = ap.parse_args()
    with open(os.path.join(args.root, "schemas", "results.schema.json")) as f:
        defs = json.load(f)["$defs"]
    run_keys = set(defs["run_extra"]["properties"])
    sample_keys = set(defs["sample_extra"]["properties"])
    no_row = undocumented_in_table(args.root, run_keys, sample_keys)
    for k in no_row:
        print(f"FAIL: {k} is in the schema but has no row in docs/store.md's table")
    with tempfile.TemporaryDirectory(prefix="accelbench-extra-keys-") as tmp:
        env = dict(os.environ, ACCELBENCH_CACHE_DIR=os.path.join(tmp, "cache"))
        env.pop("ACCELBENCH_DB", None)
        runs = write_all(args, tmp, env)
    seen, missing = set(), []
    workloads = set()
    for r in runs:
        who = f"{r['workload']} ({r['backend']}, {r.get('source', 'measured')})"
        workloads.add(r["workload"].split(".")[0])
        for k in r.get("extra") or {}:
            seen.add(("run", k))
            if k not in run_keys:
                missing.append(f"run.extra.{k} written by {who}")
        for s in r.get("samples", []):
            for k in s.get("extra") or {}:
                seen.add(("sample", k))
                if k not in sample_keys:
                    missing.append(f"sample.extra.{k} written by {who}")
    if args.dump:
        dump_types(runs)
    for m in sorted(set(missing)):
        print(f"FAIL: {m} is not documented in schemas/results.schema.json "
              f"($defs/run_extra or $defs/sample_extra)")
    expected = {"gemm", "attention", "collective", "train", "mlperf", "gbench"}
    if not expected <= workloads:
        print(f"FAIL: no runs of {sorted(expected - workloads)} were written")
        missing.append("workloads")
    print(f"{len(runs)} runs, {len(seen)} distinct extra keys written, "
          f"{len(run_keys)} run and {len(sample_keys)} sample keys documented")
    return 1 if missing or no_row else 0


if __name__ == "__main__":
    sys.exit(main())
