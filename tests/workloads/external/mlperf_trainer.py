#!/usr/bin/env python3
"""A small MLPerf-style trainer for the tests of `accelbench run external --set mode=time_to_train`.

It trains for real: a softmax classifier over 8 features and 4 classes, by minibatch SGD, on a
fixed synthetic set of Gaussian clusters (the data is the same on every run; the seed in MLPerf's
SEED variable draws the initial weights and the shuffling). After each epoch it evaluates on a
held-out set and stops at the quality target, as MLPerf's reference implementations do. It prints
its MLPerf log on stdout in the form MLCommons' mlperf_logging library prints (":::MLLOG {json}").

It logs itself as an open-division result of MLPerf's rgat benchmark (classification accuracy,
target 0.72): an open submission may use any model, and the tests package its runs with
`accelbench package` and check the folder with `accelbench check-package`. It is a test fixture,
not an R-GAT.

Failing on purpose:
  --label-noise F     a fraction F of the labels drawn at random: above about 0.4 no model can
                      reach the target, and the run stops with status "aborted" after --max-epochs
  --abort-run K --counter FILE
                      the K-th run that shares FILE (a count kept in it) trains with a learning
                      rate of 0, so that run alone does not converge
  --seed-offset N     logs SEED + N as its seed (a trainer that does not use the seed it was given)
  --exit-code N       exits with N after training (a crash after the log)
Standard library only.
"""
import argparse
import json
import math
import os
import random
import sys
import time

FEATURES, CLASSES = 8, 4


def mllog(key, value=None, event_type="POINT_IN_TIME", metadata=None):
    """One line as mlperf_logging's mllog prints it."""
    meta = {"file": os.path.basename(__file__), "lineno": sys._getframe(1).f_lineno}
    meta.update(metadata or {})
    line = {"namespace": "", "time_ms": int(time.time() * 1000), "event_type": event_type,
            "key": key, "value": value, "metadata": meta}
    print(":::MLLOG " + json.dumps(line), flush=True)


def make_data(n, label_noise, rng):
    """n points around 4 fixed centres (a data seed of its own: the same set every run)."""
    centres = [[(1.5 if (c >> (f % 2)) & 1 else -1.5) * (1 if f < 4 else 0.5)
                for f in range(FEATURES)] for c in range(CLASSES)]
    data = []
    for _ in range(n):
        c = rng.randrange(CLASSES)
        x = [centres[c][f] + rng.gauss(0, 1.6) for f in range(FEATURES)]
        y = rng.randrange(CLASSES) if rng.random() < label_noise else c
        data.append((x, y))
    return data


def probabilities(w, b, x):
    z = [b[c] + sum(w[c][f] * x[f] for f in range(FEATURES)) for c in range(CLASSES)]
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


def sgd_epoch(w, b, data, batch, lr, rng):
    order = list(range(len(data)))
    rng.shuffle(order)
    for at in range(0, len(order), batch):
        gw = [[0.0] * FEATURES for _ in range(CLASSES)]
        gb = [0.0] * CLASSES
        chunk = order[at:at + batch]
        for i in chunk:
            x, y = data[i]
            p = probabilities(w, b, x)
            for c in range(CLASSES):
                d = p[c] - (1.0 if c == y else 0.0)
                gb[c] += d
                for f in range(FEATURES):
                    gw[c][f] += d * x[f]
        for c in range(CLASSES):
            b[c] -= lr * gb[c] / len(chunk)
            for f in range(FEATURES):
                w[c][f] -= lr * gw[c][f] / len(chunk)


def accuracy(w, b, data):
    right = 0
    for x, y in data:
        p = probabilities(w, b, x)
        right += max(range(CLASSES), key=lambda c: p[c]) == y
    return right / len(data)


def this_run_aborts(args):
    """Counts this run in --counter; true when it is the --abort-run-th."""
    if not args.abort_run or not args.counter:
        return False
    n = 0
    if os.path.exists(args.counter):
        with open(args.counter) as f:
            n = int(f.read() or 0)
    n += 1
    with open(args.counter, "w") as f:
        f.write(str(n))
    return n == args.abort_run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="rgat")
    ap.add_argument("--target", type=float, default=0.72)
    ap.add_argument("--max-epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--label-noise", type=float, default=0.0)
    ap.add_argument("--abort-run", type=int, default=0)
    ap.add_argument("--counter", default="")
    ap.add_argument("--seed-offset", type=int, default=0)
    ap.add_argument("--exit-code", type=int, default=0)
    args = ap.parse_args()
    if "SEED" not in os.environ:
        print("mlperf_trainer: SEED is not set (MLPerf's run_and_time.sh passes it)", file=sys.stderr)
        return 2
    seed = int(os.environ["SEED"])
    lr = 0.0 if this_run_aborts(args) else args.lr

    mllog("cache_clear", True)
    mllog("init_start", event_type="INTERVAL_START")
    mllog("submission_benchmark", args.benchmark)
    mllog("submission_division", "open")
    mllog("submission_org", "accelbench-tests")
    mllog("submission_platform", "cpu")
    mllog("submission_status", "onprem")
    mllog("seed", seed + args.seed_offset)
    mllog("global_batch_size", args.batch)
    mllog("opt_name", "sgd")
    mllog("opt_base_learning_rate", lr)
    data_rng = random.Random(20261204)
    train = make_data(512, args.label_noise, data_rng)
    held_out = make_data(256, args.label_noise, data_rng)
    rng = random.Random(seed)
    w = [[rng.gauss(0, 0.01) for _ in range(FEATURES)] for _ in range(CLASSES)]
    b = [0.0] * CLASSES
    mllog("train_samples", len(train))
    mllog("eval_samples", len(held_out))
    mllog("init_stop", event_type="INTERVAL_END")

    mllog("run_start", event_type="INTERVAL_START")
    status = "aborted"
    for epoch in range(1, args.max_epochs + 1):
        mllog("epoch_start", event_type="INTERVAL_START", metadata={"epoch_num": epoch})
        sgd_epoch(w, b, train, args.batch, lr, rng)
        mllog("epoch_stop", event_type="INTERVAL_END", metadata={"epoch_num": epoch})
        mllog("eval_start", event_type="INTERVAL_START", metadata={"epoch_num": epoch})
        acc = accuracy(w, b, held_out)
        mllog("eval_accuracy", acc, metadata={"epoch_num": epoch})
        mllog("eval_stop", event_type="INTERVAL_END", metadata={"epoch_num": epoch})
        print(f"epoch {epoch}: eval accuracy {acc:.4f} (target {args.target})", file=sys.stderr)
        if acc >= args.target:
            status = "success"
            break
    mllog("run_stop", event_type="INTERVAL_END", metadata={"status": status})
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
