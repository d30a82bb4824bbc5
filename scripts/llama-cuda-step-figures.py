#!/usr/bin/env python3
"""Per-step figures of train.llama's CUDA step, before and after the recipe bf16-mixed-v1
(the like-for-like recipe of the PyTorch peer), computed from the code paths without a GPU: kernel launches, cast kernels,
host waits, and an estimate of DRAM bytes moved.

The estimate: every kernel reads each operand once and writes each output once (no reuse across
kernels through L2, ideal GEMM tiling: A, B read once, C read when beta != 0, D written once;
attention reads q, k, v (and o, dO in backward) once and writes its outputs once: FlashAttention's
re-reads of K/V tiles are the same in both columns and left out). Library launches count one
(cuBLASLt's GEMM and cuDNN's SDPA may launch more than one kernel; same in both columns).

"before" is commit 40cf2d9's bf16 path (fp32 activations, a cast before every GEMM operand that is
not a weight, fp32 GEMM outputs, per-tensor AdamW, clipping by a host-side norm, a host wait after
forward, backward and optimizer); "after" is bf16-mixed-v1. Both: blocks-only, as gpu-check's
8B block step. Usage: python3 scripts/llama-cuda-step-figures.py [--seq 2048 --batch 1 --layers 1]
"""
import argparse

p = argparse.ArgumentParser()
p.add_argument("--seq", type=int, default=2048)
p.add_argument("--batch", type=int, default=1)
p.add_argument("--layers", type=int, default=1)
a = p.parse_args()
BT = a.batch * a.seq
C, KV, F, NH = 4096, 1024, 14336, 32  # Llama 3 8B
L = a.layers
P = L * (2 * C + 2 * C * C + 2 * C * KV + 3 * C * F)  # block parameters


class Step:
    def __init__(self):
        self.launches = self.casts = self.waits = 0
        self.bytes = 0

    def k(self, read, write, cast=False, n=1):
        self.launches += n
        self.casts += n if cast else 0
        self.bytes += n * (read + write)

    def gemm(self, m, n, k, in_b, out_b, beta=0.0, c_b=None):
        c_b = out_b if c_b is None else c_b
        self.k(m * k * in_b + k * n * in_b + (m * n * c_b if beta else 0), m * n * out_b)


def before():
    s = Step()
    cast = lambda n: s.k(4 * n, 2 * n, cast=True)
    uncast = lambda n: s.k(2 * n, 4 * n, cast=True)
    for _ in range(L):  # forward
        s.k(4 * BT * C + 4 * C, 4 * BT * C)  # rmsnorm
        for oc in (C, KV, KV):
            cast(BT * C)
            s.gemm(BT, oc, C, 2, 4)
        s.k(8 * BT * C, 0)  # rope q (read+write in place counted as 4+4)
        s.k(8 * BT * KV, 0)
        for n in (BT * C, BT * KV, BT * KV):
            cast(n)
        s.k(2 * (BT * C + 2 * BT * KV), 2 * BT * C + 4 * BT * NH)  # sdpa fwd
        uncast(BT * C)
        cast(BT * C)
        s.gemm(BT, C, C, 2, 4)  # wo
        s.k(8 * BT * C, 4 * BT * C)  # add
        s.k(4 * BT * C + 4 * C, 4 * BT * C)  # rmsnorm
        for _ in range(2):
            cast(BT * C)
            s.gemm(BT, F, C, 2, 4)
        s.k(8 * BT * F, 4 * BT * F)  # swiglu
        cast(BT * F)
        s.gemm(BT, C, F, 2, 4)
        s.k(8 * BT * C, 4 * BT * C)  # add
    s.k(8 * BT * C, 0)  # probe loss partials
    s.waits += 2  # partials download + synchronize("forward")

    def lin_bwd(c, oc, acc):  # linear_backward: dout cast twice, inp cast once
        cast(BT * oc)
        s.gemm(BT, c, oc, 2, 4, beta=acc)
        cast(BT * oc)
        cast(BT * c)
        s.gemm(oc, c, BT, 2, 4, beta=1)

    s.k(4 * BT * C, 4 * BT * C)  # scale probe -> dres
    for _ in range(L):
        lin_bwd(F, C, 0)
        s.k(4 * 3 * BT * F, 8 * BT * F)  # swiglu bwd
        lin_bwd(C, F, 0)
        lin_bwd(C, F, 1)
        s.k(4 * 4 * BT * C, 4 * BT * C)  # rmsnorm bwd dx (dres read+write, dxn, x)
        s.k(4 * 2 * BT * C + 4 * C, 4 * C)  # rmsnorm bwd dw
        lin_bwd(C, C, 0)
        for n in (BT * C, BT * KV, BT * KV, BT * C, BT * C):
            cast(n)
        s.k(2 * (3 * BT * C + 2 * BT * KV) + 4 * BT * NH, 2 * (BT * C + 2 * BT * KV))  # sdpa bwd
        for n in (BT * C, BT * KV, BT * KV):
            uncast(n)
        s.k(8 * BT * C, 0)
        s.k(8 * BT * KV, 0)  # rope bwd
        lin_bwd(C, C, 0)
        lin_bwd(C, KV, 1)
        lin_bwd(C, KV, 1)
        s.k(4 * 4 * BT * C, 4 * BT * C)
        s.k(4 * 2 * BT * C + 4 * C, 4 * C)
    s.waits += 1  # synchronize after backward
    s.k(4 * P, 0)  # clip: dot_partials
    s.waits += 1  # its download
    s.k(4 * P, 4 * P)  # scale (when clipping)
    s.k(16 * P, 12 * P, n=1)  # AdamW: its bytes once...
    s.launches += 9 * L - 1  # ...in one launch per tensor
    s.k(4 * P, 2 * P, cast=True)  # refresh the bf16 weight copies
    s.waits += 1  # synchronize after the optimizer
    s.k(0, 4 * P)  # zero_grad memset
    return s


def after():
    s = Step()
    for _ in range(L):
        s.k(2 * BT * C + 4 * C, 2 * BT * C)  # rmsnorm bf16
        for oc in (C, KV, KV):
            s.gemm(BT, oc, C, 2, 2)
        s.k(4 * BT * C, 0)  # rope q bf16 in place
        s.k(4 * BT * KV, 0)
        s.k(2 * (BT * C + 2 * BT * KV), 2 * BT * C + 4 * BT * NH)  # sdpa fwd
        s.gemm(BT, C, C, 2, 2, beta=1)  # wo + residual epilogue
        s.k(2 * BT * C + 4 * C, 2 * BT * C)  # rmsnorm
        for _ in range(2):
            s.gemm(BT, F, C, 2, 2)
        s.k(4 * BT * F, 2 * BT * F)  # swiglu
        s.gemm(BT, C, F, 2, 2, beta=1)  # w2 + residual
    s.k(2 * BT * C + 4 * BT * C, 0)  # probe loss partials
    s.k(0, 0)  # accumulate_partials into the step log

    def lin_bwd(c, oc, acc):
        s.gemm(BT, c, oc, 2, 2, beta=acc)
        s.gemm(oc, c, BT, 2, 4, beta=1, c_b=4)  # dW accumulated into fp32

    s.k(4 * BT * C, 2 * BT * C)  # scale_to_bf16
    for _ in range(L):
        lin_bwd(F, C, 0)
        s.k(2 * 3 * BT * F, 4 * BT * F)
        lin_bwd(C, F, 0)
        lin_bwd(C, F, 1)
        s.k(2 * 4 * BT * C, 2 * BT * C)
        s.k(2 * 2 * BT * C + 4 * C, 4 * C)
        lin_bwd(C, C, 0)
        s.k(2 * (3 * BT * C + 2 * BT * KV) + 4 * BT * NH, 2 * (BT * C + 2 * BT * KV))
        s.k(4 * BT * C, 0)
        s.k(4 * BT * KV, 0)
        lin_bwd(C, C, 0)
        lin_bwd(C, KV, 1)
        lin_bwd(C, KV, 1)
        s.k(2 * 4 * BT * C, 2 * BT * C)
        s.k(2 * 2 * BT * C + 4 * C, 4 * C)
    s.k(4 * P, 0)  # norm partials
    s.k(16 * P, 14 * P)  # fused clip + AdamW + bf16 copies
    s.k(0, 4 * P)  # zero_grad memset
    return s


b, f = before(), after()
print(f"Llama 3 8B block x{L}, batch {a.batch}, seq {a.seq}: {P / 1e6:.1f}M parameters")
print(f"{'per step':<28}{'before':>12}{'after':>12}")
for name, x, y in [("kernel launches", b.launches, f.launches), ("cast kernels", b.casts, f.casts),
                   ("host waits", b.waits, f.waits)]:
    print(f"{name:<28}{x:>12}{y:>12}")
print(f"{'DRAM bytes (estimate, GB)':<28}{b.bytes / 1e9:>12.2f}{f.bytes / 1e9:>12.2f}")
