#!/usr/bin/env python3
"""Which CUDA library folders accelbench's programs get on the GPU machine (the library path
scripts/gpu-check.sh --from gives them), and why: a bundle built with CUDA 13 needs cuBLASLt
libcublasLt.so.13 and a cuDNN 9 built for CUDA 13. cuDNN 9 keeps the soname libcudnn.so.9 across
its CUDA 12 and CUDA 13 builds, so the soname alone cannot tell them apart: a folder's cuDNN is
given the CUDA major of the pip distribution that installed it (nvidia-cudnn-cu12/-cu13), else
the one its libraries name (libcublasLt.so.N, libcudart.so.N, libnvrtc.so.N inside them).
At run time accelbench checks cudnnGetCudartVersion itself (accelbench env).

  gpu_check_libs.py --cuda-major 13 [--json FILE] [--root DIR ...]

Without --root, the folders are those of PyTorch's `nvidia` pip packages and the CUDA
installation (/usr/local/cuda). Order of the path: folders with libcublasLt.so.<major>; then
folders whose cuDNN is built for <major>; then folders with other CUDA libraries of <major>
(cudart, NVRTC, nvJitLink, which cuDNN's runtime-compiled engines load); then folders whose
cuDNN's CUDA major is unknown (a warning). Folders whose cuDNN is built for another CUDA major are
left out (said with the evidence), as are folders with nothing of <major>; then folders with NCCL
(libnccl.so.2, linked by programs built with MPI), unless its pip distribution is for another
major. Prints one line per
folder and decision, then `path: DIR:DIR...`. Exit codes: 0 (a cuBLASLt and a cuDNN of the
major were found), 1 (one is missing: said), 2 usage."""
import glob
import json
import os
import re
import sys
import time

SYSTEM_DIRS = ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
               "/usr/local/cuda/targets/sbsa-linux/lib", "/usr/local/cuda/lib")
CUDA_LIBS = ("libcudart", "libnvrtc", "libnvJitLink", "libcublas")
# The cuDNN 9 libraries that name the CUDA libraries they load, those seen to name them first
CUDNN_PARTS = ("libcudnn_adv.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_graph.so.9",
               "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn.so.9",
               "libcudnn_heuristic.so.9", "libcudnn_engines_runtime_compiled.so.9")
SCAN_S = 5  # seconds of reading a folder may take (a slow disk leaves its cuDNN "unknown")
SCAN_CHUNKS = 4  # of 16 MiB: libcudnn_adv.so.9 9.x names libcublasLt.so.13 within its first 6 MB
NAMED = re.compile(rb"lib(?:cublasLt|cudart|nvrtc)\.so\.(\d+)")


def nvidia_package_dirs():
    """The folders of PyTorch's `nvidia` pip packages that hold shared libraries."""
    try:
        import nvidia  # noqa: F401  (a namespace package: the folders of all nvidia-* wheels)
    except Exception:
        return []
    out = []
    for base in sorted(nvidia.__path__):
        for d, _, files in sorted(os.walk(base)):
            if any(".so" in f for f in files):
                out.append(d)
    return out


def candidate_dirs(roots):
    if roots:
        out = []
        for r in roots:
            for d, _, files in sorted(os.walk(r)):
                if any(".so" in f for f in files):
                    out.append(d)
        return out
    return nvidia_package_dirs() + [d for d in SYSTEM_DIRS if os.path.isdir(d)]


def majors_of(folder, stem):
    """CUDA majors of `stem`.so.N files in folder (libcublasLt.so.13 -> {13})."""
    out = set()
    for f in os.listdir(folder):
        m = re.fullmatch(re.escape(stem) + r"\.so\.(\d+)(\..*)?", f)
        if m:
            out.add(int(m.group(1)))
    return out


def dist_major(folder, dist="nvidia_cudnn", lib="libcudnn.so.9"):
    """The CUDA major of the pip distribution that installed folder's `lib` (nvidia-cudnn-cuNN,
    nvidia-nccl-cuNN), from the RECORD files of the site-packages folder above it; (major, dist)
    or (None, None)."""
    d = os.path.abspath(folder)
    while d != os.path.dirname(d):
        up = os.path.dirname(d)
        infos = glob.glob(os.path.join(up, dist + "*.dist-info"))
        if infos:
            rel = os.path.relpath(os.path.join(folder, lib), up)
            for info in sorted(infos):
                try:
                    with open(os.path.join(info, "RECORD")) as f:
                        owns = any(line.split(",")[0] == rel for line in f)
                except OSError:
                    continue
                m = re.search(r"_cu(\d+)-", os.path.basename(info))
                if owns and m:
                    return int(m.group(1)), os.path.basename(info)
            return None, None
        d = up
    return None, None


def named_majors(folder):
    """The CUDA majors that folder's cuDNN libraries name; (majors, file) of the first that names
    any."""
    t0 = time.monotonic()
    for part in CUDNN_PARTS:
        p = os.path.join(folder, part)
        if not os.path.isfile(p) or time.monotonic() - t0 > SCAN_S:
            continue
        found = set()
        with open(p, "rb") as f:  # up to the first chunk that names one, 64 MiB at most
            tail = b""
            for _ in range(SCAN_CHUNKS):
                chunk = f.read(1 << 24)
                found |= {int(x) for x in NAMED.findall(tail + chunk)}
                if found or not chunk:
                    break
                tail = chunk[-32:]
        if found:
            return found, part
    return set(), None


def cudnn_major(folder):
    """(major or None, evidence) of the cuDNN 9 in folder."""
    m, dist = dist_major(folder)
    if m is not None:
        return m, f"pip distribution {dist}"
    found, part = named_majors(folder)
    if len(found) == 1:
        (m,) = found
        return m, f"{part} names CUDA {m} libraries"
    if found:
        return None, f"{part} names CUDA libraries of several majors {sorted(found)}"
    return None, "neither a pip distribution nor its libraries say which CUDA it is built for"


def choose(dirs, want):
    """The folders in path order, the left-out ones, and what was found."""
    cublas, cudnn, other, nccl, unknown, left = [], [], [], [], [], []
    seen = {}
    for d in dirs:  # a folder once, also when two names lead to it (lib64 -> targets/.../lib)
        seen.setdefault(os.path.realpath(d), d)
    for d in seen.values():
        lt = majors_of(d, "libcublasLt")
        has_cudnn = os.path.exists(os.path.join(d, "libcudnn.so.9"))
        if has_cudnn:
            m, why = cudnn_major(d)
            if m is None:
                unknown.append((d, f"cuDNN 9, CUDA major unknown ({why})"))
                continue
            if m != want:
                left.append((d, f"cuDNN 9 built for CUDA {m}, not {want} ({why})"))
                continue
            cudnn.append((d, f"cuDNN 9 for CUDA {m} ({why})"))
        elif want in lt:
            cublas.append((d, f"libcublasLt.so.{want}"))
        elif any(want in majors_of(d, s) for s in CUDA_LIBS):
            names = [f"{s}.so.{want}" for s in CUDA_LIBS if want in majors_of(d, s)]
            other.append((d, "other CUDA libraries: " + ", ".join(names)))
        elif os.path.exists(os.path.join(d, "libnccl.so.2")):
            # NCCL keeps the soname libnccl.so.2 across CUDA majors: its pip distribution
            # (nvidia-nccl-cuNN) says which; a CUDA installation's own NCCL is taken as its.
            m, dist = dist_major(d, "nvidia_nccl", "libnccl.so.2")
            if m is not None and m != want:
                left.append((d, f"NCCL built for CUDA {m}, not {want} (pip distribution {dist})"))
                continue
            nccl.append((d, "NCCL 2" + (f" for CUDA {m} (pip distribution {dist})" if m else
                                         " (CUDA major not recorded)")))
        elif lt or any(majors_of(d, s) for s in CUDA_LIBS):
            left.append((d, f"CUDA libraries of another major only (want {want})"))
    chosen = cublas + cudnn + other + nccl + unknown
    have_nccl = any(os.path.exists(os.path.join(d, "libnccl.so.2")) for d, _ in chosen)
    return chosen, left, bool(cublas) or any(
        want in majors_of(d, "libcublasLt") for d, _ in cudnn), bool(cudnn), have_nccl


def main(argv):
    want, roots, js = None, [], None
    it = iter(argv)
    for a in it:
        v = next(it, None)
        if a == "--cuda-major" and v and v.isdigit():
            want = int(v)
        elif a == "--root" and v:
            roots.append(v)
        elif a == "--json" and v:
            js = v
        else:
            print(f"gpu_check_libs: bad argument '{a}' (--cuda-major N [--json FILE] [--root DIR])",
                  file=sys.stderr)
            return 2
    if want is None:
        print("gpu_check_libs: --cuda-major N is needed (the bundle's CUDA major)", file=sys.stderr)
        return 2
    chosen, left, have_lt, have_dnn, have_nccl = choose(candidate_dirs(roots), want)
    for d, why in chosen:
        print(f"libs: use {d}: {why}")
    for d, why in left:
        print(f"libs: leave out {d}: {why}")
    if not have_lt:
        print(f"libs: no folder has libcublasLt.so.{want}: accelbench's CUDA GEMM cannot load")
    if not have_dnn:
        print(f"libs: no folder has a cuDNN 9 built for CUDA {want}: cuDNN attention cannot load "
              "(the dynamic loader may still find one elsewhere; accelbench env says which)")
    if not have_nccl:
        print("libs: no folder has libnccl.so.2: a program built with NCCL cannot start "
              "(gpu-check fails it by name)")
    path = ":".join(d for d, _ in chosen)
    print(f"path: {path}")
    if js:
        with open(js, "w") as f:
            json.dump({"cuda_major": want, "path": [{"dir": d, "why": w} for d, w in chosen],
                       "left_out": [{"dir": d, "why": w} for d, w in left],
                       "cublaslt": have_lt, "cudnn": have_dnn, "nccl": have_nccl}, f, indent=1)
    return 0 if have_lt and have_dnn else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
