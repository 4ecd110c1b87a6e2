#!/usr/bin/env python3
"""Brook from Python against NumPy, CuPy and PyTorch, in one process: launch overhead and a
saxpy of 2^26 floats. Prints a table (wall-clock medians of 7 rounds, after a warm-up).

    python bench/python_bench.py                 # interp-free: cpu:0 and every CUDA device
    python bench/python_bench.py cpu:0 cuda:0    # the devices to measure

Launch rows: 2,000 back-to-back launches of a 1-element kernel, then one wait (what a loop of
small kernels costs per launch); "launch + wait": each launch waited for. Saxpy rows: 10
launches then one wait, per launch, and the bandwidth of its 12 bytes per element.
"""

import sys
import time

import numpy as np

import brook

LAUNCHES = 2000
SAXPY_N = 1 << 26
SAXPY_REPEATS = 10
ROUNDS = 7

SOURCE = """
kernel void one(float x<>, out float r<>) { r = x + 1.0f; }
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
"""


def median_time(run, sync, count):
    """Seconds per operation: `run()` does `count` operations; median over ROUNDS rounds."""
    run()
    sync()
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        run()
        sync()
        times.append((time.perf_counter() - start) / count)
    times.sort()
    return times[len(times) // 2]


def brook_rows(spec):
    device = brook.Device(spec)
    prog = brook.Program(SOURCE, name="bench.br")
    one = prog.one
    x1 = brook.Stream.from_numpy(np.zeros(1, np.float32), device=device)
    r1 = brook.Stream.empty(1, device=device)

    def launches():
        for _ in range(LAUNCHES):
            one(x1, r1)

    def launch_and_wait():
        for _ in range(200):
            one(x1, r1)
            r1.finish()

    rows = [
        (f"launch, 1 element ({spec})", "brook", median_time(launches, r1.finish, LAUNCHES), None),
        (f"launch + wait ({spec})", "brook", median_time(launch_and_wait, r1.finish, 200), None),
    ]
    n = SAXPY_N if device.kind == "cuda" else SAXPY_N // 4
    x = brook.Stream.from_numpy(np.random.default_rng(0).random(n, np.float32), device=device)
    y = brook.Stream.from_numpy(np.ones(n, np.float32), device=device)
    r = brook.Stream.empty(n, device=device)
    saxpy = prog.saxpy

    def saxpys():
        for _ in range(SAXPY_REPEATS):
            saxpy(2.0, x, y, r)

    rows.append((f"saxpy 2^{n.bit_length() - 1} floats ({spec})", "brook",
                 median_time(saxpys, r.finish, SAXPY_REPEATS), 12 * n))
    return rows


def numpy_rows():
    n = SAXPY_N // 4
    x = np.random.default_rng(0).random(n, np.float32)
    y = np.ones(n, np.float32)
    r = np.empty(n, np.float32)

    def saxpys():
        for _ in range(SAXPY_REPEATS):
            np.multiply(x, np.float32(2.0), out=r)
            np.add(r, y, out=r)

    return [(f"saxpy 2^{n.bit_length() - 1} floats (cpu:0)", "numpy",
             median_time(saxpys, lambda: None, SAXPY_REPEATS), 12 * n)]


def cupy_rows():
    import cupy

    one = cupy.RawKernel(r'extern "C" __global__ void one(const float* x, float* r) { r[0] = x[0] + 1.0f; }', "one")
    saxpy = cupy.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 r", "r = a * x + y", "saxpy")
    x1, r1 = cupy.zeros(1, cupy.float32), cupy.zeros(1, cupy.float32)
    sync = cupy.cuda.Device().synchronize

    def launches():
        for _ in range(LAUNCHES):
            one((1,), (1,), (x1, r1))

    def launch_and_wait():
        for _ in range(200):
            one((1,), (1,), (x1, r1))
            sync()

    n = SAXPY_N
    x = cupy.random.random(n, dtype=cupy.float32)
    y = cupy.ones(n, cupy.float32)
    r = cupy.empty(n, cupy.float32)
    a = cupy.float32(2.0)

    def saxpys():
        for _ in range(SAXPY_REPEATS):
            saxpy(a, x, y, r)

    return [
        ("launch, 1 element (cuda:0)", "cupy RawKernel", median_time(launches, sync, LAUNCHES), None),
        ("launch + wait (cuda:0)", "cupy RawKernel", median_time(launch_and_wait, sync, 200), None),
        ("saxpy 2^26 floats (cuda:0)", "cupy", median_time(saxpys, sync, SAXPY_REPEATS), 12 * n),
    ]


def torch_rows():
    import torch

    dev = torch.device("cuda")
    x1, r1 = torch.zeros(1, device=dev), torch.zeros(1, device=dev)
    sync = torch.cuda.synchronize

    def launches():
        for _ in range(LAUNCHES):
            torch.add(x1, 1.0, out=r1)

    n = SAXPY_N
    x = torch.rand(n, device=dev)
    y = torch.ones(n, device=dev)
    r = torch.empty(n, device=dev)

    def saxpys():
        for _ in range(SAXPY_REPEATS):
            torch.add(y, x, alpha=2.0, out=r)

    return [
        ("launch, 1 element (cuda:0)", "torch add", median_time(launches, sync, LAUNCHES), None),
        ("saxpy 2^26 floats (cuda:0)", "torch add", median_time(saxpys, sync, SAXPY_REPEATS), 12 * n),
    ]


def main():
    specs = sys.argv[1:] or ["cpu:0"] + [d.name for d in brook.devices() if d.kind == "cuda"]
    rows = []
    for spec in specs:
        rows += brook_rows(spec)
    rows += numpy_rows()
    if any(spec.startswith("cuda") for spec in specs):
        for peer in (cupy_rows, torch_rows):
            try:
                rows += peer()
            except ImportError as missing:
                print(f"({peer.__name__[:-5]} not measured: {missing})")
    print(f"{'operation':<34} {'who':<16} {'time':>12} {'GB/s':>8}")
    for name, who, seconds, bytes_moved in rows:
        shown = f"{seconds * 1e6:.2f} us" if seconds < 1e-3 else f"{seconds * 1e3:.3f} ms"
        rate = f"{bytes_moved / seconds / 1e9:.1f}" if bytes_moved else ""
        print(f"{name:<34} {who:<16} {shown:>12} {rate:>8}")


if __name__ == "__main__":
    main()
