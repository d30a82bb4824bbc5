#!/usr/bin/env python3
"""PyTorch side of scripts/gpu-check.sh --from: the shapes accelbench runs, on the same GPU in the
same call, timed with CUDA events (median of 10 samples of 5 iterations after a warm-up), written
as one JSON object {name: {"tflops": x} | {"step_s": s, "tokens_per_s": t} | {"error": why}}.
Names match the accelbench step names of gpu-check.sh, so the summary can put them side by side.
FLOP counts follow accelbench's conventions: GEMM 2*M*N*K; attention 4*B*H*D per unmasked
(query, key) pair (causal: exact count), forward+backward 3.5x the forward."""
import argparse, json, statistics, sys, time, traceback

ap = argparse.ArgumentParser()
ap.add_argument("--arch", type=int, default=0, help="compute capability x10 (100 = Blackwell)")
ap.add_argument("--out", required=True)
args = ap.parse_args()
res = {}

def save():
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # no torch: say so, write what there is
    res["torch"] = {"error": f"{e.__class__.__name__}: {e}"}
    save()
    sys.exit(1)

res["versions"] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                   "cudnn": torch.backends.cudnn.version(),
                   "device": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
print("torch", res["versions"], flush=True)

def timed(fn, reps=10, iters=5, min_warm_s=1.0):
    """Median seconds per call; warm-up of at least min_warm_s (clocks settle) and 3 calls."""
    t0, n = time.time(), 0
    while n < 3 or time.time() - t0 < min_warm_s:
        fn(); n += 1
        if n % 5 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / iters)
    return statistics.median(ts)

def record(name, fn, flops=None):
    try:
        t = fn()
        res[name] = {"time_s": t} if flops is None else {"time_s": t, "tflops": flops / t / 1e12}
    except Exception as e:
        res[name] = {"error": f"{e.__class__.__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
    print(name, res[name], flush=True)
    save()

# ---- GEMM 8192^3, B stored [N, K] (accelbench trans_b=1) ----
M = N = K = 8192
gf = 2.0 * M * N * K
dev = "cuda"
for dt, tdt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("tf32", torch.float32)):
    def g(dt=dt, tdt=tdt):
        torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
        a = torch.randn(M, K, device=dev, dtype=tdt)
        b = torch.randn(N, K, device=dev, dtype=tdt)
        return timed(lambda: a @ b.t())
    record(f"gemm_{dt}", g, gf)
torch.backends.cuda.matmul.allow_tf32 = False

def fp8():
    a = torch.randn(M, K, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device=dev).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    return timed(lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
record("gemm_fp8_e4m3", fp8, gf)

if args.arch >= 100:
    def mx(kind):
        if kind == "mxfp8":
            a = torch.randn(M, K, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(N, K, device=dev).to(torch.float8_e4m3fn)
            sa = torch.ones(M, K // 32, device=dev).to(torch.float8_e8m0fnu)
            sb = torch.ones(N, K // 32, device=dev).to(torch.float8_e8m0fnu)
        else:
            a = torch.randint(0, 255, (M, K // 2), device=dev, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
            b = torch.randint(0, 255, (N, K // 2), device=dev, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
            sa = torch.ones(M, K // 16, device=dev).to(torch.float8_e4m3fn)
            sb = torch.ones(N, K // 16, device=dev).to(torch.float8_e4m3fn)
        return timed(lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
    record("gemm_mxfp8", lambda: mx("mxfp8"), gf)
    record("gemm_nvfp4", lambda: mx("nvfp4"), gf)
torch.cuda.empty_cache()

# ---- attention: batch 4, heads 16, seq 4096, head_dim 128, bf16 ----
B, H, S, D = 4, 16, 4096, 128
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
for c in (0, 1):
    pairs = S * (S + 1) / 2 if c else S * S
    fwd = 4.0 * B * H * D * pairs
    for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        def f(be=be, c=c):
            with sdpa_kernel(be):
                return timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(c)))
        record(f"sdpa_{name}_fwd_c{c}", f, fwd)
        def fb(be=be, c=c):
            qq, kk, vv = (t.detach().clone().requires_grad_() for t in (q, k, v))
            do = torch.randn_like(q)
            def step():
                o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=bool(c))
                o.backward(do)
            with sdpa_kernel(be):
                return timed(step)
        record(f"sdpa_{name}_fwd_bwd_c{c}", fb, 3.5 * fwd)
del q, k, v
torch.cuda.empty_cache()

# ---- one Llama 3 8B decoder block, training step (forward, backward, AdamW), bf16 autocast ----
def block_step():
    dim, nh, kvh, ffn, T = 4096, 32, 8, 14336, 4096
    hd = dim // nh
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.n1 = torch.nn.RMSNorm(dim, eps=1e-5)
            self.n2 = torch.nn.RMSNorm(dim, eps=1e-5)
            self.wq = torch.nn.Linear(dim, nh * hd, bias=False)
            self.wk = torch.nn.Linear(dim, kvh * hd, bias=False)
            self.wv = torch.nn.Linear(dim, kvh * hd, bias=False)
            self.wo = torch.nn.Linear(nh * hd, dim, bias=False)
            self.w1 = torch.nn.Linear(dim, ffn, bias=False)
            self.w3 = torch.nn.Linear(dim, ffn, bias=False)
            self.w2 = torch.nn.Linear(ffn, dim, bias=False)
            inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2).float() / hd))
            ang = torch.outer(torch.arange(T).float(), inv)
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)
        def rope(self, x):
            x1, x2 = x[..., 0::2], x[..., 1::2]
            c, s = self.cos.to(x.dtype), self.sin.to(x.dtype)
            return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), -1).flatten(-2)
        def forward(self, x):
            b, t, _ = x.shape
            h = self.n1(x)
            q = self.rope(self.wq(h).view(b, t, nh, hd).transpose(1, 2))
            k = self.rope(self.wk(h).view(b, t, kvh, hd).transpose(1, 2))
            v = self.wv(h).view(b, t, kvh, hd).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.wo(a.transpose(1, 2).reshape(b, t, dim))
            h = self.n2(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))
    m = Block().to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    x = torch.randn(1, T, dim, device=dev)
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = m(x)
        y.float().square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    t = timed(step, reps=5, iters=2)
    n = sum(p.numel() for p in m.parameters())
    return t, n, T
try:
    t, n, T = block_step()
    res["train_8b_block_bf16"] = {"step_s": t, "tokens_per_s": T / t, "parameters": n,
                                  "precision": "fp32 weights, bf16 autocast, fused AdamW"}
except Exception as e:
    res["train_8b_block_bf16"] = {"error": f"{e.__class__.__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
print("train_8b_block_bf16", res["train_8b_block_bf16"], flush=True)
save()
