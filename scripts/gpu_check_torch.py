#!/usr/bin/env python3
"""PyTorch peers of scripts/gpu-check.sh --from: each benchmark step of the plan
(scripts/gpu_check_plan.py) measured with PyTorch right after accelbench, on the same GPU, with
the same config (shapes, dtypes, BSHD layout, output type) and the same method as the ruleset
asks of accelbench (harness/measure): warm-up of at least warmup_iterations and
min_warmup_time_s, then on until 5 batch times of at least 1 ms agree within 3% (at most 3 s);
iterations per sample calibrated to 1.25 x min_time_s; `repetitions` samples timed with CUDA
events; the median. Training: warmup_iterations untimed steps, then `steps` timed steps, one
sample each, and no host synchronisation until the last one has been queued.

  gpu_check_torch.py --serve          # one JSON request a line on stdin, one JSON answer a line
  gpu_check_torch.py --request JSON   # one request, answer on stdout
  gpu_check_torch.py --workloads      # the workloads it has peers for (no torch needed)

--serve imports torch once (the script starts it while the CUDA tests run) and answers
{"ready": true, "versions": {...}} first. A request is {"name", "workload", "config",
"measurement", "recipe", "deadline_s"}; the answer {"name", "ok", "tflops" | "tokens_per_s",
"time_s", "samples", "method", ...} or {"name", "ok": false, "error"}. FLOP counts follow
accelbench's: GEMM 2*M*N*K; attention 4*B*H*D per visible (query, key) pair (causal: S(S+1)/2
pairs), forward+backward 3.5x the forward."""
import ctypes
import json
import math
import statistics
import sys
import time
import traceback

MAX_STEADY_WARMUP_S = 3.0  # harness/measure/measure.hpp k_max_steady_warmup_s
STEADY_WINDOW, STEADY_TOL, STEADY_BATCH_S = 5, 0.03, 1e-3
CALIBRATION_MARGIN = 1.25  # harness/measure/measure.cpp k_calibration_margin

torch = F = None


class Nvml:
    """The SM clock facts accelbench records with every CUDA sample (harness/device/device.cpp
    clock_facts), read through the driver's NVML with ctypes: the clock, the reference (default
    application clock, else the maximum), the clock-event reasons, and `throttled` (under 90% of
    the reference, or a power, thermal or hardware slowdown). {} where NVML cannot be read."""
    SM, SLOWING = 1, 0x4 | 0x8 | 0x20 | 0x40 | 0x80

    def __init__(self, index=0, lib="libnvidia-ml.so.1"):
        self.dev = None
        try:
            self.nvml = ctypes.CDLL(lib)
            if self.nvml.nvmlInit_v2() != 0:
                return
            dev = ctypes.c_void_p()
            if self.nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(dev)) == 0:
                self.dev = dev
        except (OSError, AttributeError):
            self.dev = None

    def _clock(self, fn):
        mhz = ctypes.c_uint(0)
        f = getattr(self.nvml, fn, None)
        return mhz.value if f is not None and f(self.dev, self.SM, ctypes.byref(mhz)) == 0 else 0

    def facts(self):
        if self.dev is None:
            return {}
        sm = self._clock("nvmlDeviceGetClockInfo")
        if not sm:
            return {}
        ref, kind = self._clock("nvmlDeviceGetDefaultApplicationsClock"), "default_application"
        if not ref:
            ref, kind = self._clock("nvmlDeviceGetMaxClockInfo"), "max"
        out = {"sm_clock_mhz": sm, "reference_clock_mhz": ref, "reference_clock": kind}
        throttled = bool(ref) and sm < 0.9 * ref
        mask = ctypes.c_ulonglong(0)
        for fn in ("nvmlDeviceGetCurrentClocksEventReasons",
                   "nvmlDeviceGetCurrentClocksThrottleReasons"):
            f = getattr(self.nvml, fn, None)
            if f is not None and f(self.dev, ctypes.byref(mask)) == 0:
                out["reasons_mask"] = mask.value
                throttled = throttled or bool(mask.value & self.SLOWING)
                break
        out["throttled"] = throttled
        return out


NVML = None  # opened by --serve and --request (the GPU machine); None: no clock facts


def clock_facts():
    return NVML.facts() if NVML is not None else {}


def settled(values, window=STEADY_WINDOW, tol=STEADY_TOL):
    """harness/measure's rule: the last `window` values within tol of their median."""
    if len(values) < window:
        return False
    last = sorted(values[-window:])
    med = last[len(last) // 2]
    return all(abs(v - med) <= tol * abs(med) for v in last)


def measure(batch, m, clock=time.perf_counter, facts=clock_facts):
    """accelbench's kernel measurement over batch(n) -> seconds of n back-to-back calls: the same
    warm-up rule (batch times settle; the SM clock is recorded, never waited for) and `facts()`
    (the SM clock facts) after each sample, as accelbench records them.
    Returns {"time_s": median per call, "samples", "iterations", "warmup": {...}, "sample_clocks",
    "throttled_samples"}."""
    m = m or {}
    warm_iters, warm_s = max(1, int(m.get("warmup_iterations", 1))), m.get("min_warmup_time_s", 0)
    reps, min_t = max(1, int(m.get("repetitions", 5))), float(m.get("min_time_s", 0.02))
    max_t = float(m.get("max_time_s", 0) or 0)
    start, n_warm, last = clock(), 0, 0.0
    while n_warm < warm_iters or clock() - start < warm_s:
        last = batch(1)
        n_warm += 1
    ruleset_s, per = clock() - start, []
    n = max(1, math.ceil(STEADY_BATCH_S / max(last, 1e-9)))
    while not settled(per) and clock() - start - ruleset_s < MAX_STEADY_WARMUP_S:
        per.append(batch(n) / n)
        n_warm += n
    warmup = {"iterations": n_warm, "seconds": clock() - start, "steady": settled(per)}
    iters = calibrate(batch, min_t)
    samples, clocks = take_samples(batch, iters, reps, max_t, clock, facts)
    recal = None
    if min(samples) * iters < min_t:  # as accelbench: recalibrate from the samples, once
        recal = iters
        iters = math.ceil(iters * CALIBRATION_MARGIN * min_t / (min(samples) * iters))
        samples, clocks = take_samples(batch, iters, reps, max_t, clock, facts)
    out = {"time_s": statistics.median(samples), "samples": samples, "iterations": iters,
           "warmup": warmup, "sample_clocks": clocks,
           "throttled_samples": sum(1 for c in clocks if c.get("throttled"))}
    if recal is not None:
        out["recalibrated_from"] = recal
    return out


def calibrate(batch, min_t):
    """Iterations for a sample of 1.25 x min_time_s: batches grow tenfold until one lasts a tenth
    of min_time_s, then the fastest of three batches."""
    n, per = 1, 0.0
    for _ in range(12):
        t = batch(n)
        per = t / n
        if t >= min_t / 10 or n >= 1e9:
            break
        n *= 10
    for _ in range(2):
        per = min(per, batch(n) / n)
    return max(1, math.ceil(CALIBRATION_MARGIN * min_t / max(per, 1e-12)))


def take_samples(batch, iters, reps, max_t, clock=time.perf_counter, facts=clock_facts):
    """(seconds per call of each sample, the clock facts after each)."""
    t0, out, clocks = clock(), [], []
    for _ in range(reps):
        if out and max_t and clock() - t0 >= max_t:
            break  # accelbench cuts repetitions at max_time_s too
        out.append(batch(iters) / iters)
        clocks.append(facts())
    return out, clocks


def event_batch(fn):
    """batch(n): n calls of fn between two CUDA events; seconds."""
    def run(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) / 1e3
    return run


def method(m):
    m = m or {}
    return (f"CUDA events; warm-up >= {m.get('warmup_iterations', 1)} call(s) and "
            f"{m.get('min_warmup_time_s', 0)} s, then until steady (5 batches >= 1 ms within 3%, "
            f"<= 3 s); {m.get('repetitions', 5)} samples of >= {m.get('min_time_s', 0.02)} s; median")


# ---- GEMM ---------------------------------------------------------------------------------------
TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "tf32": "float32", "fp32": "float32"}


def gemm_operands(dt, M, N, K, dev):
    """A [M, K] and B stored [N, K] (accelbench trans_b=1), and the call for A x B^T."""
    if dt in TORCH_DTYPES:
        tdt = getattr(torch, TORCH_DTYPES[dt])
        return torch.randn(M, K, device=dev, dtype=tdt), torch.randn(N, K, device=dev, dtype=tdt)
    if dt in ("fp8_e4m3", "fp8_e5m2", "mxfp8"):
        f8 = torch.float8_e4m3fn if dt != "fp8_e5m2" else torch.float8_e5m2
        return torch.randn(M, K, device=dev).to(f8), torch.randn(N, K, device=dev).to(f8)
    if dt == "nvfp4":
        mk = lambda r: torch.randint(0, 255, (r, K // 2), device=dev, dtype=torch.uint8)  # noqa: E731
        return mk(M).view(torch.float4_e2m1fn_x2), mk(N).view(torch.float4_e2m1fn_x2)
    raise ValueError(f"dtype {dt} has no PyTorch peer")


def gemm_call(cfg, dev="cuda"):
    M, N, K, dt = int(cfg["M"]), int(cfg["N"]), int(cfg["K"]), cfg["dtype"]
    out = cfg.get("out_dtype") or dt
    if not int(cfg.get("trans_b", 0)) or int(cfg.get("trans_a", 0)):
        raise ValueError("the peer measures trans_a=0, trans_b=1 (B stored [N, K]) only")
    a, b = gemm_operands(dt, M, N, K, dev)
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    odt = getattr(torch, TORCH_DTYPES.get(out, "bfloat16"))
    if dt in TORCH_DTYPES:
        if out == dt or (dt == "tf32" and out == "fp32"):
            return lambda: torch.matmul(a, b.t())  # writes the input type, as accelbench out_dtype
        return lambda: torch.mm(a, b.t(), out_dtype=odt)
    if dt in ("fp8_e4m3", "fp8_e5m2"):
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=odt)
    blk = 32 if dt == "mxfp8" else 16
    sdt = torch.float8_e8m0fnu if dt == "mxfp8" else torch.float8_e4m3fn
    sa = torch.ones(M, K // blk, device=dev).to(sdt)
    sb = torch.ones(N, K // blk, device=dev).to(sdt)
    return lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=odt)


def run_gemm(req):
    cfg = req["config"]
    fn = gemm_call(cfg)
    r = measure(event_batch(fn), req.get("measurement"))
    flops = 2.0 * int(cfg["M"]) * int(cfg["N"]) * int(cfg["K"])
    dt, out = cfg["dtype"], cfg.get("out_dtype") or cfg["dtype"]
    impl = "torch._scaled_mm" if dt not in TORCH_DTYPES else \
        ("torch.matmul" if out == dt else "torch.mm(out_dtype)")
    r.update(tflops=flops / r["time_s"] / 1e12, impl=impl, out_dtype=out)
    torch.backends.cuda.matmul.allow_tf32 = False
    return r


# ---- attention ----------------------------------------------------------------------------------
def attention_flops(cfg):
    b, h, s, d = (int(cfg[k]) for k in ("batch", "heads", "seq_q", "head_dim"))
    pairs = s * (s + 1) / 2 if int(cfg.get("causal", 0)) else s * s
    fwd = 4.0 * b * h * d * pairs
    return {"fwd": fwd, "bwd": 2.5 * fwd, "fwd_bwd": 3.5 * fwd}[cfg.get("pass", "fwd")]


def attention_call(cfg, dev="cuda"):
    """q, k, v, o, dO in accelbench's [B, S, H, D] memory layout, handed to SDPA as [B, H, S, D]
    views. Forward+backward sets the gradients to None each call: every call writes dQ, dK, dV
    afresh, as accelbench's backward does, instead of adding into the previous ones."""
    b, h, s, d = (int(cfg[k]) for k in ("batch", "heads", "seq_q", "head_dim"))
    kvh = int(cfg.get("kv_heads", 0) or h)
    if int(cfg.get("seq_k", 0) or s) != s:
        raise ValueError("the peer measures seq_k = seq_q only")
    tdt = getattr(torch, TORCH_DTYPES[cfg.get("dtype", "bf16")])
    causal, gqa = bool(int(cfg.get("causal", 0))), kvh != h
    mk = lambda n: torch.randn(b, s, n, d, device=dev, dtype=tdt)  # noqa: E731
    q, k, v = mk(h), mk(kvh), mk(kvh)
    sdpa = lambda q, k, v: F.scaled_dot_product_attention(  # noqa: E731
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal, enable_gqa=gqa)
    # Inputs that require grad in both passes: the forward is then the training forward, which
    # writes the softmax statistics (LSE) as accelbench's cuDNN and native forwards do; without
    # grad PyTorch would pick its inference kernels, which skip that output.
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    if cfg.get("pass", "fwd") == "fwd":
        return lambda: sdpa(q, k, v)
    do = mk(h).transpose(1, 2)

    def fwd_bwd():
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v).backward(do)
    return fwd_bwd


def run_attention(req):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    cfg, impls, deadline = req["config"], {}, req.get("deadline")
    flops = attention_flops(cfg)
    for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        if deadline and time.time() > deadline:
            impls[name] = {"error": "not measured: the step's time was up"}
            continue
        try:
            with sdpa_kernel(be):
                r = measure(event_batch(attention_call(cfg)), req.get("measurement"))
            r["tflops"] = flops / r["time_s"] / 1e12
            impls[name] = r
        except Exception as e:  # one backend refusing the shape leaves the other
            impls[name] = {"error": one_line(e)}
        torch.cuda.empty_cache()
    ok = {n: r for n, r in impls.items() if "tflops" in r}
    if not ok:
        raise RuntimeError("; ".join(f"{n}: {r['error']}" for n, r in impls.items()))
    best = max(ok, key=lambda n: ok[n]["tflops"])
    return dict(ok[best], impl=f"SDPA {best}", impls=impls, layout="BSHD")


# ---- Llama 3 8B decoder block, one training step ------------------------------------------------
RECIPE_TEXT = ("fp32 master weights and AdamW state, fused AdamW on the device; bf16 weight "
               "copies (one cast a step), bf16 activations, bf16 GEMMs with fp32 accumulation "
               "and bf16 outputs; RMSNorm, softmax and loss statistics in fp32; gradient-norm "
               "clipping at 1.0 on the device; no host synchronisation in the timed loop")


def llama_block(dim, nh, kvh, ffn, seq, dev):
    """The block's fp32 master parameters and its bf16 forward (weights cast once a call; the
    cast's backward hands fp32 gradients to the masters)."""
    hd = dim // nh
    shapes = {"n1": (dim,), "n2": (dim,), "wq": (nh * hd, dim), "wk": (kvh * hd, dim),
              "wv": (kvh * hd, dim), "wo": (dim, nh * hd), "w1": (ffn, dim), "w3": (ffn, dim),
              "w2": (dim, ffn)}
    P = {n: torch.nn.Parameter(torch.ones(s, device=dev) if len(s) == 1 else
                               torch.randn(s, device=dev) * s[1] ** -0.5)
         for n, s in shapes.items()}
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=dev).float() / hd))
    ang = torch.outer(torch.arange(seq, device=dev).float(), inv)
    cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)

    def rope(x):  # x [B, T, heads, hd], pairs (2i, 2i+1)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[:, None, :], sin[:, None, :]
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), -1).flatten(-2)

    def forward(x):  # x [B, T, dim] bf16
        w = {n: p.to(torch.bfloat16) for n, p in P.items()}
        b, t, _ = x.shape
        h = F.rms_norm(x, (dim,), w["n1"], 1e-5)  # statistics in fp32 (PyTorch's opmath)
        q = rope((h @ w["wq"].t()).view(b, t, nh, hd))
        k = rope((h @ w["wk"].t()).view(b, t, kvh, hd))
        v = (h @ w["wv"].t()).view(b, t, kvh, hd)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True, enable_gqa=kvh != nh)
        x = x + a.transpose(1, 2).reshape(b, t, dim) @ w["wo"].t()
        h = F.rms_norm(x, (dim,), w["n2"], 1e-5)
        return x + (F.silu(h @ w["w1"].t()) * (h @ w["w3"].t())) @ w["w2"].t()
    return P, forward


def run_train(req, dev="cuda"):
    cfg, m = req["config"], req.get("measurement") or {}
    if cfg.get("model") != "llama3-8b" or int(cfg.get("layers", 0)) != 1:
        raise ValueError("the peer is one Llama 3 8B decoder block (model=llama3-8b, layers=1)")
    seq, batch, steps = int(cfg["seq"]), int(cfg.get("batch", 1) or 1), int(cfg.get("steps", 10))
    hp = req.get("hyperparameters") or {}
    dim, ffn = 4096, 14336
    P, forward = llama_block(dim, 32, 8, ffn, seq, dev)
    opt = torch.optim.AdamW(P.values(), lr=hp.get("base_lr", 1e-2),
                            betas=(hp.get("beta1", 0.9), hp.get("beta2", 0.95)),
                            eps=hp.get("eps", 1e-8), weight_decay=hp.get("weight_decay", 0.1),
                            fused=True)
    clip = float(hp.get("clip_norm", 1.0))
    x = torch.randn(batch, seq, dim, device=dev, dtype=torch.bfloat16)
    probe = torch.randn(batch, seq, dim, device=dev)  # blocks-only loss: accelbench's probe
    tokens = batch * seq

    def step():
        loss = (forward(x).float() * probe).sum() / tokens  # fp32 loss statistic
        loss.backward()
        torch.nn.utils.clip_grad_norm_(P.values(), clip, foreach=True)  # no host sync
        opt.step()
        opt.zero_grad(set_to_none=True)
    for _ in range(max(1, int(m.get("warmup_iterations", 2)))):
        step()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    ev[0].record()
    for i in range(steps):
        step()
        ev[i + 1].record()
    ev[-1].synchronize()  # the only host synchronisation, after the last step is queued
    samples = [ev[i].elapsed_time(ev[i + 1]) / 1e3 for i in range(steps)]
    t = statistics.median(samples)
    return {"time_s": t, "step_s": t, "tokens_per_s": tokens / t, "samples": samples,
            "sample_clocks": [clock_facts()],  # after the last step, as accelbench's last sample
            "parameters": sum(p.numel() for p in P.values()), "recipe": req.get("recipe"),
            "recipe_text": RECIPE_TEXT}


PEERS = {"gemm": run_gemm, "attention": run_attention, "train.llama": run_train}


def one_line(e):
    s = str(e).splitlines()[0][:300] if str(e) else ""
    return f"{e.__class__.__name__}: {s}"


def answer(req):
    name = req.get("name", "?")
    t0 = time.time()
    if req.get("deadline_s"):
        req["deadline"] = t0 + float(req["deadline_s"])
    try:
        fn = PEERS.get(req.get("workload"))
        if fn is None:
            raise ValueError(f"no PyTorch peer for workload '{req.get('workload')}'")
        out = dict(fn(req), name=name, ok=True)
        out["method"] = "CUDA events; median of one sample a step after warm-up steps" \
            if req.get("workload") == "train.llama" else method(req.get("measurement"))
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        out = {"name": name, "ok": False, "error": one_line(e)}
    out["seconds"] = time.time() - t0
    try:
        torch.cuda.empty_cache()  # leave the GPU's memory to accelbench's next step
    except Exception:
        pass
    return out


def start():
    """Import torch and make the first CUDA context; the versions, or why not."""
    global torch, F
    import torch as _t
    import torch.nn.functional as _f
    torch, F = _t, _f
    v = {"torch": torch.__version__, "cuda": torch.version.cuda,
         "cudnn": torch.backends.cudnn.version(), "cuda_available": torch.cuda.is_available()}
    if torch.cuda.is_available():
        global NVML
        v["device"] = torch.cuda.get_device_name()
        torch.ones(1, device="cuda").sum().item()  # context, allocator
        NVML = Nvml(torch.cuda.current_device())
        v["nvml_clock_facts"] = bool(clock_facts())
    return v


def main(argv):
    if argv == ["--workloads"]:
        print(" ".join(sorted(PEERS)))
        return 0
    if len(argv) == 2 and argv[0] == "--request":
        try:
            versions = start()
        except Exception as e:
            print(json.dumps({"ok": False, "error": one_line(e)}))
            return 1
        out = answer(json.loads(argv[1]))
        out["versions"] = versions
        print(json.dumps(out))
        return 0 if out.get("ok") else 1
    if argv != ["--serve"]:
        print("usage: gpu_check_torch.py --serve | --request JSON | --workloads", file=sys.stderr)
        return 2
    try:
        print(json.dumps({"ready": True, "versions": start()}), flush=True)
    except Exception as e:
        print(json.dumps({"ready": False, "error": one_line(e)}), flush=True)
        return 1
    for line in sys.stdin:
        if line.strip():
            try:
                req = json.loads(line)
            except ValueError as e:
                req = {"name": "?", "workload": None, "error": one_line(e)}
            print(json.dumps(answer(req)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
