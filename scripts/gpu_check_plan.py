#!/usr/bin/env python3
"""The plan of scripts/gpu-check.sh --from, as data: every step in the order it runs, with its cap
(seconds), so that one reading says what the one GPU call will do and how long it may take.

  gpu_check_plan.py [--arch N] [--share DIR] table    # the plan, one step a line, and the sum
  gpu_check_plan.py [--arch N] [--share DIR] json     # the plan as JSON
  gpu_check_plan.py [--arch N] [--share DIR] tsv      # kind, name, cap, payload (for the script)
  gpu_check_plan.py check                             # the rules below, for every architecture

Rules (checked by `check`, a CTest): the caps plus the reserves fit the budget (480 s: the device
call is limited to 10 minutes and the machine's start is not ours); every benchmark step is
followed by its PyTorch peer, with only benchmark steps sharing that peer in between; the GPU-only
test cases come before any benchmark; a peer measures the same config as its benchmark (both are
made from one dict here, so shapes, dtypes and layouts cannot drift apart), and its timing method
is the ruleset's (same warm-up, samples, minimum sample time; median).

Exit codes: 0 ok; 1 a rule broken (`check`, one line each); 2 usage."""
import json
import os
import sys

BUDGET_S = 480
# Outside the steps: unpacking and the library checks before them; export and summary after them
# (the summary is written even when every step ran to its cap).
RESERVE_S = {"setup": 10, "summary": 15}
KERNEL_RULES = "kernel-quick"
TRAIN_RULES = "train-v1"
ARCHES = (90, 100)

GEMM = {"M": 8192, "N": 8192, "K": 8192, "trans_b": 1}
ATTN = {"batch": 4, "heads": 16, "seq_q": 4096, "head_dim": 128, "dtype": "bf16"}
BLOCK = {"model": "llama3-8b", "layers": 1, "seq": 4096, "batch": 1, "dtype": "bf16", "steps": 5}
# The training recipe both sides run (workloads/training: the CUDA trainer's bf16 path).
RECIPE = "bf16-mixed-v1"


def gemm_dtypes(arch):
    """bf16 and the fp8 of the architecture: tensor-wide fp8 on Hopper, block-scaled on Blackwell."""
    return ["bf16", "fp8_e4m3"] if arch < 100 else ["bf16", "mxfp8", "nvfp4"]


def gemm_steps(arch):
    out = []
    for dt in gemm_dtypes(arch):
        # Output type stated on both sides: bf16 (torch.matmul's for bf16 inputs, and the
        # out_dtype torch._scaled_mm is given for the fp8 formats).
        cfg = dict(GEMM, dtype=dt, out_dtype="bf16")
        out.append(bench(f"gemm_{dt}", 15, "gemm", cfg, KERNEL_RULES, f"torch_gemm_{dt}",
                         f"GEMM {dt} 8192^3, bf16 out", 0.95))
        out.append(peer(f"torch_gemm_{dt}", 7, "gemm", cfg, KERNEL_RULES))
    return out


def attention_steps():
    out = []
    for c in (0, 1):
        cz = "causal" if c else "non-causal"
        fwd = dict(ATTN, causal=c, impl="cudnn", **{"pass": "fwd"})
        out.append(bench(f"attn_cudnn_fwd_c{c}", 14, "attention", fwd, KERNEL_RULES,
                         f"torch_sdpa_fwd_c{c}", f"cuDNN attention fwd {cz}", 0.90))
        out.append(peer(f"torch_sdpa_fwd_c{c}", 9, "attention", fwd, KERNEL_RULES))
        fb = dict(fwd, **{"pass": "fwd_bwd"})
        out.append(bench(f"attn_cudnn_fwd_bwd_c{c}", 16, "attention", fb, KERNEL_RULES,
                         f"torch_sdpa_fwd_bwd_c{c}", f"cuDNN attention fwd+bwd {cz}", 0.90))
        # The native kernel (tensor-core flash attention) against the same PyTorch figure.
        out.append(bench(f"attn_native_fwd_bwd_c{c}", 16, "attention", dict(fb, impl="native"),
                         KERNEL_RULES, f"torch_sdpa_fwd_bwd_c{c}",
                         f"native attention fwd+bwd {cz}", None))
        out.append(peer(f"torch_sdpa_fwd_bwd_c{c}", 11, "attention", fb, KERNEL_RULES))
    return out


def bench(name, cap, workload, config, rules, peer_name, label, aim):
    metric = "tokens_per_s" if workload == "train.llama" else "tflops"
    return {"kind": "bench", "name": name, "cap_s": cap, "workload": workload, "config": config,
            "rules": rules, "peer": peer_name, "label": label, "aim": aim, "metric": metric}


def peer(name, cap, workload, config, rules):
    return {"kind": "peer", "name": name, "cap_s": cap, "workload": workload, "config": config,
            "rules": rules}


def test(program, cap, cases):
    return {"kind": "test", "name": f"{program}{'' if cases == '[gpu]' else '_cpu'}",
            "cap_s": cap, "program": program, "cases": cases}


def plan(arch):
    steps = [
        {"kind": "info", "name": "nvidia_smi", "cap_s": 6},
        {"kind": "env", "name": "env", "cap_s": 12},
        # GPU-only test cases first (Catch2 tag [gpu]); PyTorch imports meanwhile. Generous caps,
        # paid for from the benchmarks': a cold cuDNN builds each of test_cuda_attention's ~28
        # SDPA plans with runtime-compiled engines, test_cuda_gemm measures ~40 runs; a test cut
        # at its cap is a failure, a benchmark that finishes early gives its time back. Each
        # step's seconds are in the summary and steps.jsonl: set the next caps from them.
        test("test_cuda_device", 15, "[gpu]"),
        test("test_cuda_gemm", 40, "[gpu]"),
        test("test_cuda_attention", 60, "[gpu]"),
        test("test_cuda_training", 45, "[gpu]"),
        {"kind": "torch_start", "name": "torch_start", "cap_s": 12},
    ]
    steps += gemm_steps(arch)
    steps += attention_steps()
    steps.append(bench("train_8b_block_bf16", 32, "train.llama", BLOCK, TRAIN_RULES,
                       "torch_train_8b_block_bf16", "Llama 3 8B block step bf16", 0.85))
    steps.append(dict(peer("torch_train_8b_block_bf16", 24, "train.llama", BLOCK, TRAIN_RULES),
                      recipe=RECIPE))
    steps[-2]["recipe"] = RECIPE
    # The test cases that need no GPU (CI runs them everywhere): last, if time is left.
    steps.append({"kind": "test_group", "name": "test_cuda_cpu_cases", "cap_s": 10,
                  "programs": ["test_cuda_device", "test_cuda_gemm", "test_cuda_attention",
                               "test_cuda_training"], "cases": "~[gpu]"})
    return {"arch": arch, "budget_s": BUDGET_S, "reserve_s": RESERVE_S, "recipe": RECIPE,
            "steps": steps}


def load_ruleset(share, rules):
    """The ruleset's JSON (share = ACCELBENCH_HOME or the source tree), or None."""
    if not share:
        return None
    for d, _, files in sorted(os.walk(share)):
        if f"{rules}.json" in files and os.path.basename(d) == "rulesets":
            with open(os.path.join(d, f"{rules}.json")) as f:
                return json.load(f)
    return None


def with_measurement(p, share):
    """Each peer carries its ruleset's measurement settings (the same warm-up and samples as
    accelbench) and, for training, its hyperparameters."""
    for s in p["steps"]:
        if s["kind"] == "peer":
            r = load_ruleset(share, s["rules"]) or {}
            s["measurement"] = r.get("measurement")
            s["hyperparameters"] = (r.get("training") or {}).get("hyperparameters")
    return p


def accelbench_args(step):
    args = [step["workload"]]
    for k, v in step["config"].items():
        args += ["--set", f"{k}={v}"]
    return args + ["--rules", step["rules"]]


def tsv(p):
    lines = []
    for s in p["steps"]:
        if s["kind"] == "bench":
            payload = " ".join(accelbench_args(s))
        elif s["kind"] == "peer":
            payload = json.dumps({"name": s["name"], "workload": s["workload"],
                                  "config": s["config"], "measurement": s.get("measurement"),
                                  "hyperparameters": s.get("hyperparameters"),
                                  "recipe": s.get("recipe")}, separators=(",", ":"))
        elif s["kind"] == "test":
            payload = f"{s['program']} {s['cases']}"
        elif s["kind"] == "test_group":
            payload = " ".join(s["programs"]) + " " + s["cases"]
        else:
            payload = "-"
        lines.append(f"{s['kind']}\t{s['name']}\t{s['cap_s']}\t{payload}")
    return "\n".join(lines)


def total(p):
    return sum(s["cap_s"] for s in p["steps"]) + sum(p["reserve_s"].values())


def table(p):
    out = [f"gpu-check plan for sm_{p['arch']}: {len(p['steps'])} steps"]
    for i, s in enumerate(p["steps"], 1):
        extra = f"  (peer: {s['peer']})" if s["kind"] == "bench" else ""
        out.append(f"{i:3d}  {s['kind']:<11} {s['name']:<28} cap {s['cap_s']:>3} s{extra}")
    r = p["reserve_s"]
    out.append(f"     reserve: setup {r['setup']} s, export and summary {r['summary']} s")
    out.append(f"sum of caps and reserves: {total(p)} s of the {p['budget_s']} s budget")
    return "\n".join(out)


def broken_rules(p):
    """Every rule the plan breaks, one line each (empty: the plan is sound)."""
    bad = []
    if total(p) > p["budget_s"]:
        bad.append(f"sm_{p['arch']}: caps and reserves sum to {total(p)} s, over the "
                   f"{p['budget_s']} s budget")
    steps = p["steps"]
    names = [s["name"] for s in steps]
    if len(set(names)) != len(names):
        bad.append(f"sm_{p['arch']}: step names repeat")
    first_bench = next((i for i, s in enumerate(steps) if s["kind"] == "bench"), len(steps))
    for i, s in enumerate(steps):
        if s["kind"] == "test" and s["cases"] == "[gpu]" and i > first_bench:
            bad.append(f"sm_{p['arch']}: GPU test step {s['name']} comes after a benchmark")
        if s["cap_s"] <= 0:
            bad.append(f"sm_{p['arch']}: step {s['name']} has no time (cap {s['cap_s']})")
        if s["kind"] == "bench":
            bad += peer_rules(p["arch"], steps, i)
    return bad


def peer_rules(arch, steps, i):
    """The peer of bench step i comes after it with only benches sharing that peer between, and
    measures the same config."""
    s = steps[i]
    j = i + 1
    while j < len(steps) and steps[j]["kind"] == "bench" and steps[j]["peer"] == s["peer"]:
        j += 1
    if j >= len(steps) or steps[j]["kind"] != "peer" or steps[j]["name"] != s["peer"]:
        nxt = steps[j]["name"] if j < len(steps) else "the end"
        return [f"sm_{arch}: benchmark {s['name']} is followed by {nxt}, not its peer {s['peer']}"]
    q = steps[j]
    same = {k: v for k, v in s["config"].items() if k != "impl"} == \
        {k: v for k, v in q["config"].items() if k != "impl"}
    bad = []
    if not same or q["workload"] != s["workload"] or q["rules"] != s["rules"]:
        bad.append(f"sm_{arch}: peer {q['name']} does not measure the config of {s['name']}")
    if s.get("recipe") != q.get("recipe"):
        bad.append(f"sm_{arch}: {s['name']} and {q['name']} state different recipes")
    return bad


def main(argv):
    arch, share, cmd = 90, None, None
    it = iter(argv)
    for a in it:
        if a == "--arch":
            v = next(it, "")
            if not v.isdigit():
                print(f"gpu_check_plan: --arch needs a number like 90, not '{v}'", file=sys.stderr)
                return 2
            arch = int(v)
        elif a == "--share":
            share = next(it, None)
        elif a in ("table", "json", "tsv", "check") and cmd is None:
            cmd = a
        else:
            print(f"gpu_check_plan: unknown argument '{a}' (table|json|tsv|check)", file=sys.stderr)
            return 2
    if cmd == "check":
        bad = [b for a in ARCHES for b in broken_rules(plan(a))]
        for b in bad:
            print(b)
        if not bad:
            print("plan ok: " + "; ".join(f"sm_{a} {total(plan(a))} s of {BUDGET_S} s"
                                          for a in ARCHES))
        return 1 if bad else 0
    p = with_measurement(plan(arch), share)
    if cmd == "json":
        print(json.dumps(p, indent=1))
    elif cmd == "tsv":
        print(tsv(p))
    else:
        print(table(p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
