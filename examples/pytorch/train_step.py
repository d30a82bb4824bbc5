#!/usr/bin/env python3
"""A PyTorch training step, measured by accelbench (docs/external.md).

    accelbench run external --name step --set batch=8 -- python3 train_step.py --batch {batch}

A small causal Transformer (torch.nn.TransformerEncoder) learns a fixed token pattern with AdamW.
After --warmup untimed steps, each timed step is one sample: its seconds (the device synchronised
before and after), the tokens it trained on, and its FLOPs by the 6 x parameters x tokens
convention (attention's own FLOPs not counted; the run's extra says so). The check: every loss
finite and the last below the first. Only the standard library speaks to accelbench
(accelbench_protocol.py). Runs on PyTorch 1.13 (Debian 12's python3-torch, as CTest
python_example_pytorch runs it) and 2.x: only APIs both have.
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accelbench_protocol import Reporter  # noqa: E402

import torch  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--steps", type=int, default=20, help="timed steps (one sample each)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda")
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--seed", type=int, default=int(os.environ.get("SEED", "0")))
    return p.parse_args()


class Model(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = torch.nn.Embedding(a.vocab, a.dim)
        layer = torch.nn.TransformerEncoderLayer(a.dim, a.heads, 4 * a.dim, dropout=0.0,
                                                 batch_first=True, norm_first=True)
        self.body = torch.nn.TransformerEncoder(layer, a.layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(a.dim, a.vocab)
        # Causal attention through the mask tensor alone, which PyTorch 1.13 (Debian 12's) and 2.x
        # both take (2.x's is_causal= flag is only a hint about this mask, and 1.13 refuses it).
        # A buffer, so that .to(device) moves it with the weights.
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(a.seq),
                             persistent=False)

    def forward(self, tokens):
        # tokens [B, T] -> logits [B, T, vocab]
        return self.head(self.body(self.embed(tokens), mask=self.mask))


def batch_of(a, step, device):
    # A learnable pattern: each sequence counts up from its own start (next token = token + 1).
    start = torch.arange(a.batch, device=device).unsqueeze(1) * 7 + step
    seq = (start + torch.arange(a.seq + 1, device=device)) % a.vocab
    return seq[:, :-1], seq[:, 1:]


def main():
    a = parse_args()
    torch.manual_seed(a.seed)
    device = torch.device("cuda" if a.device == "auto" and torch.cuda.is_available()
                          else ("cpu" if a.device == "auto" else a.device))
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    model = Model(a).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    params = sum(p.numel() for p in model.parameters())
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.dtype == "bf16")
    rep = Reporter()
    losses = []

    def step(i):
        x, y = batch_of(a, i, device)
        with autocast:
            loss = torch.nn.functional.cross_entropy(model(x).float().flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for i in range(a.warmup):
        losses.append(step(i).item())
    tokens = a.batch * a.seq
    for i in range(a.steps):
        sync()
        t0 = time.perf_counter()
        loss = step(a.warmup + i)
        sync()
        rep.sample(time.perf_counter() - t0, items=tokens, flops=6.0 * params * tokens)
        losses.append(loss.item())  # after the clock: .item() waits for the device
    finite = all(math.isfinite(v) for v in losses)
    rep.metric("final_loss", losses[-1], direction="lower")
    rep.check(finite and losses[-1] < losses[0],
              f"loss {losses[0]:.3f} -> {losses[-1]:.3f}" + ("" if finite else " (not finite)"))
    rep.extra(framework=f"torch {torch.__version__}", device=str(device),
              device_name=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              dtype=a.dtype, parameters=params, tokens_per_step=tokens,
              flop_convention="6 x parameters x tokens (attention score FLOPs not counted)")
    rep.close()


if __name__ == "__main__":
    main()
