#!/usr/bin/env python3
"""Summary of scripts/gpu-check.sh --from: each accelbench figure next to PyTorch's on the same GPU
from the same call, the ratio, and the issue's aims (cuBLASLt bf16 >= 95% of torch.matmul, cuDNN
attention >= 90% of PyTorch SDPA). Reads OUT/<step>.json (accelbench run --json) and
OUT/torch.json; prints the lines for summary.txt and writes OUT/ratios.json. A missing side is
reported as missing, never as a number."""
import json, os, sys

out = sys.argv[1]

def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception:
        return None

def ab_run(step):
    d = load(step + ".json")
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

torch = load("torch.json") or {}

def tv(name, key="tflops"):
    return (torch.get(name) or {}).get(key)

rows = []
def row(label, step, torch_names, aim=None, key="tflops", ab_key="tflops", unit="TFLOP/s"):
    run = ab_run(step)
    a = metric(run, ab_key)
    cands = [(n, tv(n, key)) for n in torch_names if tv(n, key) is not None]
    t_name, t = max(cands, key=lambda x: x[1]) if cands else (None, None)
    status = (run or {}).get("status", "missing")
    r = {"label": label, "accelbench": a, "accelbench_status": status, "torch": t, "torch_impl": t_name,
         "unit": unit, "aim": aim, "throttle": throttled(run)}
    if a is None or t is None:
        why = [] if a is not None else [f"accelbench {status}" + (f": {run.get('status_reason')}" if run and run.get("status_reason") else "")]
        if t is None:
            errs = [f"{n}: {(torch.get(n) or {}).get('error', 'not run')}" for n in torch_names]
            why.append("torch " + "; ".join(errs))
        print(f"ratio {label}: missing ({'; '.join(why)})")
    else:
        r["ratio"] = a / t
        verdict = "" if aim is None else f" (aim >= {aim:.0%}: {'met' if a / t >= aim else 'MISSED'})"
        validity = (run or {}).get("validity", "")
        print(f"ratio {label}: accelbench {a:.1f} / torch {t_name} {t:.1f} {unit} = {a / t:.1%}{verdict}; "
              f"{r['throttle']}" + (f"; accelbench run {validity}" if validity and validity.lower() != "valid" else ""))
    rows.append(r)

for dt in ("bf16", "fp16", "tf32", "fp8_e4m3", "mxfp8", "nvfp4"):
    if ab_run(f"gemm_{dt}") is not None or f"gemm_{dt}" in torch:
        row(f"GEMM {dt} 8192^3", f"gemm_{dt}", [f"gemm_{dt}"], 0.95 if dt == "bf16" else None)
for c in (0, 1):
    cz = "causal" if c else "non-causal"
    row(f"cuDNN attention fwd {cz}", f"attn_cudnn_fwd_c{c}", [f"sdpa_cudnn_fwd_c{c}", f"sdpa_flash_fwd_c{c}"], 0.90)
    row(f"cuDNN attention fwd+bwd {cz}", f"attn_cudnn_fwd_bwd_c{c}",
        [f"sdpa_cudnn_fwd_bwd_c{c}", f"sdpa_flash_fwd_bwd_c{c}"], 0.90)
    row(f"native attention fwd+bwd {cz}", f"attn_native_fwd_bwd_c{c}",
        [f"sdpa_cudnn_fwd_bwd_c{c}", f"sdpa_flash_fwd_bwd_c{c}"])
row("Llama 3 8B block step bf16", "train_8b_block_bf16", ["train_8b_block_bf16"], key="tokens_per_s",
    ab_key="tokens_per_s", unit="tokens/s")

# MFU of both sides with accelbench's FLOPs per token and peak (one convention for both).
run = ab_run("train_8b_block_bf16")
fpt = metric(run, "model_flops_per_token")
peak = ((run or {}).get("extra") or {}).get("peak", {}).get("tflops")
mfu, mfu_c = metric(run, "mfu"), metric(run, "mfu_causal")
ttps = tv("train_8b_block_bf16", "tokens_per_s")
if mfu is not None:
    line = f"block step MFU (PaLM, causal attention at full cost): accelbench {mfu:.1f}%"
    if fpt and peak and ttps:
        line += f", torch {100.0 * fpt * ttps / 1e12 / peak:.1f}% (same FLOPs/token {fpt:.3g} and peak {peak} TFLOP/s)"
    print(line)
    if mfu_c is not None:
        print(f"block step MFU (causal attention at the visible pairs): accelbench {mfu_c:.1f}%"
              + (f", torch {mfu_c * ttps / metric(run, 'tokens_per_s'):.1f}%" if ttps and metric(run, "tokens_per_s") else ""))
with open(os.path.join(out, "ratios.json"), "w") as f:
    json.dump(rows, f, indent=1)
