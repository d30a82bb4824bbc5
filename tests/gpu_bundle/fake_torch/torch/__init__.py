"""A stand-in for torch, for tests/gpu_bundle/test_gpu_bundle.sh only: just enough of the API for
scripts/gpu_check_torch.py's server and its GEMM peer to run without a GPU (a "matmul" spins for
20 us and CUDA events read the host clock), so that the script's PyTorch plumbing is tested where
no GPU and no torch exist. Its fp8 path (torch.tensor) blocks for a minute, to test a peer that
outruns its cap. It measures nothing."""
import time
import types

__version__ = "0.0-fake"
version = types.SimpleNamespace(cuda="13.0")
bfloat16, float16, float32 = "bfloat16", "float16", "float32"
float8_e4m3fn, float8_e5m2 = "float8_e4m3fn", "float8_e5m2"
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91000),
                                 cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))


class Tensor:
    def t(self):
        return self

    def sum(self):
        return self

    def item(self):
        return 1.0

    def to(self, dtype):
        return self


def randn(*shape, device=None, dtype=None):
    return Tensor()


def ones(*shape, device=None, dtype=None):
    return Tensor()


def matmul(a, b):
    end = time.perf_counter() + 20e-6
    while time.perf_counter() < end:
        pass
    return Tensor()


def tensor(x, device=None):
    time.sleep(60)
    return Tensor()


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3


cuda = types.SimpleNamespace(is_available=lambda: True, get_device_name=lambda: "fake GPU",
                             Event=_Event, empty_cache=lambda: None, synchronize=lambda: None,
                             current_device=lambda: 0)
