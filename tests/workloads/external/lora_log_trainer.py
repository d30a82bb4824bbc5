#!/usr/bin/env python3
"""A fake MLPerf trainer that logs a closed-division llama2_70b_lora run without training.

For the tests of the RCP check of `accelbench run external --set mode=time_to_train`: what the
check reads of a run is where it converged (the samples_count of its last eval_accuracy before
run_stop with status success) and at which global_batch_size, so this script prints the log of a
run that converges where the test says, with every event the closed rules of llama2_70b_lora ask
for (the hyperparameters of closed_llama2_70b_lora.yaml, eval_accuracy with samples_count, the
quality target 0.925 reached; epoch_num too, which the open division asks for), in the form MLCommons' mlperf_logging library prints
(":::MLLOG {json}"), with the seed from MLPerf's SEED variable.

  --batch N          global_batch_size (8: the smallest in MLCommons' reference data)
  --samples A,B,...  the samples_count at convergence of the 1st, 2nd, ... run that shares
                     --counter FILE (a count kept in it; the last value for the runs after)
  --division D       submission_division (closed)
  --benchmark B      submission_benchmark (llama2_70b_lora)
Standard library only.
"""
import argparse
import json
import os
import sys
import time


def mllog(key, value=None, event_type="POINT_IN_TIME", metadata=None):
    """One line as mlperf_logging's mllog prints it."""
    meta = {"file": os.path.basename(__file__), "lineno": sys._getframe(1).f_lineno}
    meta.update(metadata or {})
    line = {"namespace": "", "time_ms": int(time.time() * 1000), "event_type": event_type,
            "key": key, "value": value, "metadata": meta}
    print(":::MLLOG " + json.dumps(line), flush=True)


def run_number(counter):
    """Counts this run in `counter`; its number, from 1."""
    n = 0
    if os.path.exists(counter):
        with open(counter) as f:
            n = int(f.read() or 0)
    n += 1
    with open(counter, "w") as f:
        f.write(str(n))
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--samples", default="3184")
    ap.add_argument("--counter", required=True)
    ap.add_argument("--division", default="closed")
    ap.add_argument("--benchmark", default="llama2_70b_lora")
    args = ap.parse_args()
    if "SEED" not in os.environ:
        print("lora_log_trainer: SEED is not set (MLPerf's run_and_time.sh passes it)",
              file=sys.stderr)
        return 2
    plan = [int(s) for s in args.samples.split(",")]
    converge_at = plan[min(run_number(args.counter), len(plan)) - 1]

    mllog("cache_clear", True)
    mllog("init_start", event_type="INTERVAL_START")
    mllog("submission_benchmark", args.benchmark)
    mllog("submission_org", "accelbench-tests")
    mllog("submission_division", args.division)
    mllog("submission_status", "onprem")
    mllog("submission_platform", "cpu")
    mllog("global_batch_size", args.batch)
    mllog("gradient_accumulation_steps", 1)
    mllog("opt_gradient_clip_norm", 0.3)
    mllog("opt_adamw_weight_decay", 0.0001)
    mllog("opt_base_learning_rate", 0.0005)
    mllog("opt_learning_rate_training_steps", 800)
    mllog("lora_rank", 16)
    mllog("lora_alpha", 32)
    mllog("train_samples", 3901)
    mllog("eval_samples", 173)
    mllog("seed", int(os.environ["SEED"]))
    mllog("init_stop", event_type="INTERVAL_END")

    mllog("run_start", event_type="INTERVAL_START")
    # Two evaluations: halfway (above the target) and at the convergence point (below it). The
    # sleep gives run_start to run_stop a span of whole milliseconds.
    for samples, accuracy in ((converge_at // 2, 0.95), (converge_at, 0.924)):
        mllog("block_start", event_type="INTERVAL_START", metadata={"samples_count": 0})
        time.sleep(0.005)
        mllog("block_stop", event_type="INTERVAL_END", metadata={"samples_count": samples})
        mllog("eval_start", event_type="INTERVAL_START", metadata={"samples_count": samples})
        mllog("eval_accuracy", accuracy, metadata={"samples_count": samples, "epoch_num": 1})
        mllog("eval_stop", event_type="INTERVAL_END", metadata={"samples_count": samples})
    mllog("run_stop", event_type="INTERVAL_END",
          metadata={"samples_count": converge_at, "status": "success"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
