#!/usr/bin/env python3
"""gpu_check_scripts (tests/gpu_bundle/CMakeLists.txt): the Python helpers of
scripts/gpu-check.sh, without a GPU and without torch.

- plan: the caps and reserves fit the budget for every architecture, every benchmark is followed
  by its PyTorch peer, and a plan that breaks a rule is caught (so the check can fail);
- peers carry the ruleset's measurement settings (the same warm-up and samples as accelbench);
- the peers' measurement (warm-up, calibration, samples, median) on a simulated clock;
- library folders chosen by CUDA major from fake folder trees (cuDNN 9 keeps its soname across
  CUDA 12 and 13);
- the step records and the ratios of the summary, a missing side said as missing.
Usage: test_gpu_check_scripts.py SOURCE_DIR"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else ".")
sys.path.insert(0, os.path.join(SRC, "scripts"))
import gpu_check_libs as libs  # noqa: E402
import gpu_check_plan as plan  # noqa: E402
import gpu_check_summary as summary  # noqa: E402
import gpu_check_torch as peers  # noqa: E402


class Plan(unittest.TestCase):
    def test_every_architecture_fits_and_pairs(self):
        for arch in plan.ARCHES:
            p = plan.plan(arch)
            self.assertEqual(plan.broken_rules(p), [], f"sm_{arch}")
            self.assertLessEqual(plan.total(p), plan.BUDGET_S)

    def test_check_command(self):
        r = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gpu_check_plan.py"),
                            "check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("plan ok", r.stdout)

    def test_over_budget_is_caught(self):
        p = plan.plan(90)
        p["steps"][3]["cap_s"] += plan.BUDGET_S
        self.assertTrue(any("over the" in b for b in plan.broken_rules(p)))

    def test_peer_far_from_its_benchmark_is_caught(self):
        p = plan.plan(90)
        i = next(i for i, s in enumerate(p["steps"]) if s["name"] == "torch_gemm_bf16")
        p["steps"].append(p["steps"].pop(i))
        bad = plan.broken_rules(p)
        self.assertTrue(any("gemm_bf16 is followed by" in b for b in bad), bad)

    def test_peer_with_another_shape_is_caught(self):
        p = plan.plan(90)
        peer = next(s for s in p["steps"] if s["name"] == "torch_sdpa_fwd_c0")
        peer["config"] = dict(peer["config"], seq_q=2048)
        self.assertTrue(any("does not measure the config" in b for b in plan.broken_rules(p)))

    def test_gpu_tests_before_benchmarks_and_cpu_cases_last(self):
        p = plan.plan(90)
        kinds = [s["kind"] for s in p["steps"]]
        last_gpu_test = max(i for i, s in enumerate(p["steps"])
                            if s["kind"] == "test" and s["cases"] == "[gpu]")
        self.assertLess(last_gpu_test, kinds.index("bench"))
        self.assertEqual(p["steps"][-1]["cases"], "~[gpu]")
        bad = copy.deepcopy(p)
        bad["steps"].append(bad["steps"].pop(last_gpu_test))
        self.assertTrue(any("comes after a benchmark" in b for b in plan.broken_rules(bad)))

    def test_gemm_states_bf16_output_on_both_sides(self):
        p = plan.plan(90)
        for s in p["steps"]:
            if s["workload"] == "gemm" if "workload" in s else False:
                self.assertEqual(s["config"]["out_dtype"], "bf16", s["name"])
        args = plan.accelbench_args(next(s for s in p["steps"] if s["name"] == "gemm_fp8_e4m3"))
        self.assertIn("out_dtype=bf16", args)

    def test_peers_carry_the_rulesets_measurement(self):
        p = plan.with_measurement(plan.plan(90), SRC)
        with open(os.path.join(SRC, "workloads/gemm/rulesets/kernel-quick.json")) as f:
            quick = json.load(f)["measurement"]
        with open(os.path.join(SRC, "workloads/training/rulesets/train-v1.json")) as f:
            train = json.load(f)
        for s in p["steps"]:
            if s["kind"] != "peer":
                continue
            want = train["measurement"] if s["rules"] == "train-v1" else quick
            self.assertEqual(s["measurement"], want, s["name"])
        block = next(s for s in p["steps"] if s["name"] == "torch_train_8b_block_bf16")
        self.assertEqual(block["hyperparameters"], train["training"]["hyperparameters"])
        self.assertEqual(block["recipe"], "bf16-mixed-v1")
        for line in plan.tsv(p).splitlines():
            kind, _, _, payload = line.split("\t")
            if kind == "peer":
                self.assertIn("measurement", json.loads(payload))

    def test_every_peer_workload_has_a_peer(self):
        for arch in plan.ARCHES:
            for s in plan.plan(arch)["steps"]:
                if s["kind"] == "peer":
                    self.assertIn(s["workload"], peers.PEERS, s["name"])


class FakeGpu:
    """A kernel of `per` seconds a call, the first `slow` calls 3x slower (clocks ramping)."""
    def __init__(self, per, slow=0):
        self.t, self.per, self.slow, self.calls = 0.0, per, slow, 0

    def clock(self):
        return self.t

    def batch(self, n):
        d = 0.0
        for _ in range(n):
            d += self.per * (3 if self.calls < self.slow else 1)
            self.calls += 1
        self.t += d
        return d


class Measure(unittest.TestCase):
    M = {"warmup_iterations": 1, "min_warmup_time_s": 0.01, "repetitions": 5, "min_time_s": 0.02,
         "max_time_s": 10}

    def test_short_kernel(self):
        g = FakeGpu(10e-6, slow=50)
        r = peers.measure(g.batch, self.M, clock=g.clock)
        self.assertEqual(len(r["samples"]), 5)
        self.assertAlmostEqual(r["time_s"], 10e-6, delta=1e-9)
        self.assertGreaterEqual(r["iterations"] * r["time_s"], 0.02)  # samples >= min_time_s
        self.assertNotIn("recalibrated_from", r)  # a steady kernel: calibrated right at once
        self.assertAlmostEqual(r["iterations"] * r["time_s"], 1.25 * 0.02, delta=1e-4)
        self.assertTrue(r["warmup"]["steady"])
        self.assertGreaterEqual(r["warmup"]["seconds"], 0.01)

    def test_long_kernel_takes_one_call_a_sample(self):
        g = FakeGpu(0.05)
        r = peers.measure(g.batch, dict(self.M, repetitions=3), clock=g.clock)
        self.assertEqual(r["iterations"], 1)
        self.assertEqual(len(r["samples"]), 3)

    def test_never_steady_stops_after_three_seconds(self):
        calls = []
        state = {"t": 0.0}

        def noisy(n):  # alternates 1x / 2x: never within 3%
            d = n * 1e-3 * (1 + len(calls) % 2)
            calls.append(n)
            state["t"] += d
            return d
        r = peers.measure(noisy, self.M, clock=lambda: state["t"])
        self.assertFalse(r["warmup"]["steady"])
        self.assertLess(r["warmup"]["seconds"], peers.MAX_STEADY_WARMUP_S + 0.1)

    def test_clock_facts_after_every_sample(self):
        # The same facts as accelbench's samples carry, read after each sample; throttled ones
        # counted. The warm-up does not wait for the clock (one rule on both sides).
        g = FakeGpu(10e-6)
        readings = iter([{"sm_clock_mhz": 1980, "throttled": False},
                         {"sm_clock_mhz": 1500, "throttled": True}] * 20)
        r = peers.measure(g.batch, dict(self.M, repetitions=4), clock=g.clock,
                          facts=lambda: next(readings))
        self.assertEqual(len(r["sample_clocks"]), len(r["samples"]))
        self.assertEqual(r["throttled_samples"], sum(c["throttled"] for c in r["sample_clocks"]))
        self.assertGreater(r["throttled_samples"], 0)

    def test_nvml_without_a_driver_gives_no_facts(self):
        self.assertEqual(peers.Nvml(lib="libnvidia-ml-does-not-exist.so.1").facts(), {})

    def test_settled_is_the_harness_rule(self):
        self.assertTrue(peers.settled([1.0, 1.01, 0.99, 1.02, 1.0]))
        self.assertFalse(peers.settled([1.0, 1.01, 0.99, 1.05, 1.0]))
        self.assertFalse(peers.settled([1.0, 1.0]))

    def test_attention_flops_follow_accelbench(self):
        cfg = {"batch": 4, "heads": 16, "seq_q": 4096, "head_dim": 128}
        full = 4.0 * 4 * 16 * 128 * 4096 * 4096
        self.assertEqual(peers.attention_flops(dict(cfg, causal=0, **{"pass": "fwd"})), full)
        self.assertEqual(peers.attention_flops(dict(cfg, causal=0, **{"pass": "fwd_bwd"})), 3.5 * full)
        self.assertEqual(peers.attention_flops(dict(cfg, causal=1, **{"pass": "fwd"})),
                         4.0 * 4 * 16 * 128 * 4096 * 4097 / 2)


def touch(path, data=b"\x7fELF"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


class Libraries(unittest.TestCase):
    def tree(self, root):
        site = os.path.join(root, "site")
        touch(os.path.join(site, "nvidia/cublas/lib/libcublasLt.so.13"))
        touch(os.path.join(site, "nvidia/cudnn/lib/libcudnn.so.9"))
        info = os.path.join(site, "nvidia_cudnn_cu12-9.10.2.21.dist-info")
        os.makedirs(info)
        with open(os.path.join(info, "RECORD"), "w") as f:
            f.write("nvidia/cudnn/lib/libcudnn.so.9,sha256=x,1\n")
        cuda = os.path.join(root, "cuda/lib64")
        touch(os.path.join(cuda, "libcudnn.so.9"))
        touch(os.path.join(cuda, "libcudnn_adv.so.9"), b"\0" * 100 + b"libcublasLt.so.13\0" + b"\0" * 9)
        touch(os.path.join(cuda, "libnvrtc.so.13"))
        touch(os.path.join(root, "mystery/libcudnn.so.9"))
        touch(os.path.join(root, "old/libcublasLt.so.12"))
        return site, cuda

    def test_prefers_cuda13_and_leaves_out_a_cuda12_cudnn(self):
        with tempfile.TemporaryDirectory() as d:
            site, cuda = self.tree(d)
            dirs = libs.candidate_dirs([site, cuda, os.path.join(d, "mystery"), os.path.join(d, "old")])
            chosen, left, have_lt, have_dnn, have_nccl = libs.choose(dirs, 13)
            order = [x for x, _ in chosen]
            self.assertEqual(order, [os.path.join(site, "nvidia/cublas/lib"), cuda,
                                     os.path.join(d, "mystery")])
            why = dict(left)
            self.assertIn("built for CUDA 12", why[os.path.join(site, "nvidia/cudnn/lib")])
            self.assertIn("nvidia_cudnn_cu12", why[os.path.join(site, "nvidia/cudnn/lib")])
            self.assertIn(os.path.join(d, "old"), why)
            self.assertIn("names CUDA 13", dict(chosen)[cuda])
            self.assertIn("unknown", dict(chosen)[os.path.join(d, "mystery")])
            self.assertTrue(have_lt and have_dnn)
            self.assertFalse(have_nccl)

    def test_keeps_pytorchs_nccl_folder_of_the_cuda_major(self):
        # PyTorch's wheels: NCCL in nvidia/nccl/lib, nothing else of CUDA beside it. A program
        # linked with NCCL cannot start without that folder on its path.
        with tempfile.TemporaryDirectory() as d:
            site, cuda = self.tree(d)
            for wheel, major in (("site", 13), ("site12", 12)):
                base = os.path.join(d, wheel)
                touch(os.path.join(base, "nvidia/nccl/lib/libnccl.so.2"))
                info = os.path.join(base, f"nvidia_nccl_cu{major}-2.27.7.dist-info")
                os.makedirs(info)
                with open(os.path.join(info, "RECORD"), "w") as f:
                    f.write("nvidia/nccl/lib/libnccl.so.2,sha256=x,1\n")
            nccl13 = os.path.join(site, "nvidia/nccl/lib")
            nccl12 = os.path.join(d, "site12", "nvidia/nccl/lib")
            chosen, left, _, _, have_nccl = libs.choose(
                libs.candidate_dirs([site, cuda, os.path.join(d, "site12")]), 13)
            self.assertIn(nccl13, dict(chosen))
            self.assertIn("nvidia_nccl_cu13", dict(chosen)[nccl13])
            self.assertIn("NCCL built for CUDA 12", dict(left)[nccl12])
            self.assertTrue(have_nccl)

    def test_only_a_cuda12_cudnn_is_said_and_fails(self):
        with tempfile.TemporaryDirectory() as d:
            site, _ = self.tree(d)
            r = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gpu_check_libs.py"),
                                "--cuda-major", "13", "--root", site], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("no folder has a cuDNN 9 built for CUDA 13", r.stdout)
            self.assertIn("leave out", r.stdout)
            self.assertRegex(r.stdout, r"path: .*nvidia/cublas/lib\n")

    def test_usage(self):
        r = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gpu_check_libs.py"),
                            "--cuda-major", "x"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("'--cuda-major'", r.stderr)


class Summary(unittest.TestCase):
    def test_records_and_ratios(self):
        p = plan.plan(90)
        with tempfile.TemporaryDirectory() as d:
            ab = os.path.join(d, "ab.json")
            with open(ab, "w") as f:
                json.dump({"runs": [{"status": "ok", "validity": "VALID", "metrics": [
                    {"name": "tflops", "value": 700.0}], "samples": [{"extra": {"throttled": True}},
                                                                      {"extra": {}}]}]}, f)
            pr = os.path.join(d, "peer.json")
            with open(pr, "w") as f:
                f.write(json.dumps({"name": "torch_gemm_bf16", "ok": True, "tflops": 800.0,
                                    "impl": "torch.matmul"}) + "\n")
            log = os.path.join(d, "x.log")
            with open(log, "w") as f:
                f.write("".join(f"line {i}\n" for i in range(40)))
            summary.record(d, "gemm_bf16", "bench", "passed", "0", "7", "18", "18", ab, log)
            summary.record(d, "torch_gemm_bf16", "peer", "passed", "0", "2", "8", "8", pr, "-")
            summary.record(d, "gemm_fp8_e4m3", "bench", "failed", "3", "1", "18", "18", "-", log)
            with open(os.path.join(d, "steps.jsonl")) as f:
                lines = f.read().splitlines()
            self.assertEqual(len(lines), 3)
            failed = json.loads(lines[2])
            self.assertIn("line 39", failed["log_tail"])
            self.assertNotIn("line 10\n", failed["log_tail"])
            pj = os.path.join(d, "plan.json")
            with open(pj, "w") as f:
                json.dump(p, f)
            r = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gpu_check_summary.py"),
                                "ratios", d, pj], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("ratio GEMM bf16 8192^3, bf16 out: accelbench 700.0 / torch torch.matmul "
                          "800.0 TFLOP/s = 87.5% (aim >= 95%: MISSED); 1/2 samples throttled", r.stdout)
            self.assertIn("ratio GEMM fp8_e4m3 8192^3, bf16 out: missing (accelbench failed (exit 3);"
                          " torch not run)", r.stdout)
            with open(os.path.join(d, "ratios.json")) as f:
                rows = json.load(f)
            self.assertEqual(len(rows), sum(s["kind"] == "bench" for s in p["steps"]))

    def test_recipe_mismatch_is_said(self):
        p = plan.plan(90)
        s = next(x for x in p["steps"] if x["name"] == "train_8b_block_bf16")
        steps = {
            s["name"]: {"status": "passed", "exit": 0, "result": {"metrics": [
                {"name": "tokens_per_s", "value": 90.0}], "extra": {"recipe": "fp32-v0"}}},
            s["peer"]: {"status": "passed", "exit": 0, "result": {
                "ok": True, "tokens_per_s": 100.0, "recipe": "bf16-mixed-v1"}}}
        r = summary.row(s, steps)
        self.assertAlmostEqual(r["ratio"], 0.9)
        self.assertEqual(r["recipe"], {"accelbench": "fp32-v0", "torch": "bf16-mixed-v1"})


if __name__ == "__main__":
    unittest.main(verbosity=1)
