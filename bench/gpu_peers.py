#!/usr/bin/env python3
"""The operations of `cargo run --release -p brook-lang --example gpu_bench`, measured with PyTorch and
CuPy (whichever is installed), in the same way: CUDA events around each operation, median of 21
runs after a warm-up. Prints a table; writes JSON when given a path:

    python3 bench/gpu_peers.py [out.json]
"""
import json
import sys


def median_ms(run, sync, event_pair, repeats=21):
    run()
    sync()
    times = []
    for _ in range(repeats):
        start, end = event_pair()
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def torch_rows():
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    events = lambda: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
    t = lambda f: median_ms(f, torch.cuda.synchronize, events)
    n = 1 << 26
    x = torch.rand(n, device=dev)
    y = torch.rand(n, device=dev)
    r = torch.empty(n, device=dev)
    rows = [("copy 2^26 floats", t(lambda: r.copy_(x)), 8 * n)]
    rows.append(("LOOM block reduce 2^26 (256)", t(lambda: x.view(-1, 256).sum(1)), 4 * (n + n // 256)))
    rows.append(("LOOM block scan 2^26 (256)", t(lambda: torch.cumsum(x.view(-1, 256), 1, out=r.view(-1, 256))), 8 * n))
    rows.append(("saxpy 2^26 float", t(lambda: torch.add(y, x, alpha=2.0, out=r)), 12 * n))
    x4 = torch.rand(4 * n, device=dev)
    y4 = torch.rand(4 * n, device=dev)
    r4 = torch.empty(4 * n, device=dev)
    rows.append(("saxpy 2^26 float4", t(lambda: torch.add(y4, x4, alpha=2.0, out=r4)), 48 * n))
    del x4, y4, r4
    big = torch.rand(1 << 28, device=dev)
    rows.append(("sum 2^28 floats", t(lambda: big.sum()), 4 << 28))
    scanned = torch.empty_like(big)
    rows.append(("scan 2^28 floats (inclusive +)", t(lambda: torch.cumsum(big, 0, out=scanned)), 8 << 28))
    del big, scanned
    v4 = torch.rand(1 << 20, 4, device=dev)
    rows.append(("sum 2^20 float4", t(lambda: v4.sum(0)), 16 << 20))
    m = torch.rand(8192, 8192, device=dev)
    rows.append(("row sums 8192x8192", t(lambda: m.sum(1)), 4 * 8192 * 8192))
    rows.append(("column sums 8192x8192", t(lambda: m.sum(0)), 4 * 8192 * 8192))
    ms_out = torch.empty_like(m)
    rows.append(("row scans 8192x8192 (inclusive +)", t(lambda: torch.cumsum(m, 1, out=ms_out)), 8 * 8192 * 8192))
    del ms_out
    a = torch.rand(4096, 4096, device=dev)
    b = torch.rand(4096, 4096, device=dev)
    ms = t(lambda: a @ b)
    rows.append(("sgemm 4096^3 (fp32, no TF32)", ms, None, 2 * 4096**3 / (ms / 1e3) / 1e9))
    # gpu_bench's keys and queries: 0, 1, 2, ... as floats, and i * 2654435761 mod 2^24 (every
    # other one + 0.5, so half are present).
    keys = torch.arange(1 << 24, device=dev, dtype=torch.float32)
    i = torch.arange(1 << 24, device=dev, dtype=torch.int64)
    queries = ((i * 2654435761) % (1 << 24)).to(torch.float32) + (i % 2).to(torch.float32) * 0.5
    ms = t(lambda: torch.searchsorted(keys, queries))
    rows.append(("binary search 2^24 keys", ms, None, (1 << 24) / (ms / 1e3) / 1e9))
    return "torch " + torch.__version__, rows


def cupy_rows():
    import cupy as cp

    events = lambda: (cp.cuda.Event(), cp.cuda.Event())

    def t(f):
        f()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(21):
            s, e = events()
            s.record()
            f()
            e.record()
            e.synchronize()
            times.append(cp.cuda.get_elapsed_time(s, e))
        times.sort()
        return times[len(times) // 2]

    n = 1 << 26
    x = cp.random.rand(n, dtype=cp.float32)
    y = cp.random.rand(n, dtype=cp.float32)
    r = cp.empty(n, dtype=cp.float32)
    saxpy = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 r", "r = a * x + y", "saxpy")
    rows = [("copy 2^26 floats", t(lambda: r.__setitem__(slice(None), x)), 8 * n)]
    rows.append(("LOOM block reduce 2^26 (256)", t(lambda: x.reshape(-1, 256).sum(1)), 4 * (n + n // 256)))
    rows.append(("LOOM block scan 2^26 (256)", t(lambda: cp.cumsum(x.reshape(-1, 256), 1)), 8 * n))
    rows.append(("saxpy 2^26 float", t(lambda: saxpy(cp.float32(2.0), x, y, r)), 12 * n))
    big = cp.random.rand(1 << 28, dtype=cp.float32)
    rows.append(("sum 2^28 floats", t(lambda: big.sum()), 4 << 28))
    scanned = cp.empty_like(big)
    rows.append(("scan 2^28 floats (inclusive +)", t(lambda: cp.cumsum(big, out=scanned)), 8 << 28))
    del big, scanned
    m = cp.random.rand(8192, 8192, dtype=cp.float32)
    rows.append(("row sums 8192x8192", t(lambda: m.sum(1)), 4 * 8192 * 8192))
    rows.append(("column sums 8192x8192", t(lambda: m.sum(0)), 4 * 8192 * 8192))
    ms_out = cp.empty_like(m)
    rows.append(("row scans 8192x8192 (inclusive +)", t(lambda: cp.cumsum(m, 1, out=ms_out)), 8 * 8192 * 8192))
    del m, ms_out
    keys = cp.arange(1 << 24, dtype=cp.float32)
    i = cp.arange(1 << 24, dtype=cp.int64)
    queries = ((i * 2654435761) % (1 << 24)).astype(cp.float32) + (i % 2).astype(cp.float32) * 0.5
    ms = t(lambda: cp.searchsorted(keys, queries))
    rows.append(("binary search 2^24 keys", ms, None, (1 << 24) / (ms / 1e3) / 1e9))
    return "cupy " + cp.__version__, rows


def main():
    results = {}
    for name, make in (("torch", torch_rows), ("cupy", cupy_rows)):
        try:
            version, rows = make()
        except Exception as e:  # not installed, or no GPU
            print(f"{name}: skipped ({type(e).__name__}: {e})")
            continue
        print(f"{version}, median of 21 runs (CUDA events)")
        print(f"{'what':<32} {'ms':>10} {'GB/s':>10} {'rate':>12}")
        out = []
        for row in rows:
            what, ms = row[0], row[1]
            if row[2] is not None:
                gbps = row[2] / (ms / 1e3) / 1e9
                print(f"{what:<32} {ms:>10.3f} {gbps:>10.0f}")
                out.append({"what": what, "ms": ms, "gbps": gbps})
            else:
                print(f"{what:<32} {ms:>10.3f} {'':>10} {row[3]:>10.1f} G/s")
                out.append({"what": what, "ms": ms, "giga_per_s": row[3]})
        results[name] = {"version": version, "rows": out}
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
