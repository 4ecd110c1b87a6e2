"""Kernels called from Python, on every device, compared with the interpreter and NumPy."""

import warnings

import numpy as np
import pytest

import brook
from conftest import same_bits

SOURCE = """
kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
kernel void shift(int k, uint m, int x<>, out int r<>) { r = (x + k) % (int)m; }
kernel void scale4(float4 s, float4 x<>, out float4 r<>) { r = s * x; }
kernel void gather_rows(float2 idx<>, float table[][], out float r<>) { r = table[idx]; }
kernel void ramp(iter float i<>, out float r<>) { r = i * 2.0f; }
kernel void positives(float x<>, vout float kept<>) { if (x > 0.0f) { kept = x; push(kept); } }
kernel void where_am_i(out float2 r<>) { r = indexof(r).xy; }
reduce void total(float x<>, reduce float r<>) { r += x; }
reduce void biggest(int x<>, reduce int r<>) { r = max(r, x); }
reduce void dsum(double x<>, reduce double r<>) { r += x; }
"""


@pytest.fixture(scope="module")
def prog():
    return brook.Program(SOURCE, name="kernels.br")


def on(device, host, **kw):
    return brook.Stream.from_numpy(host, device=device, **kw)


def run_both(device, interp, launch):
    """`launch(device)` on the device under test and on the interpreter: the same bits."""
    got, reference = launch(device), launch(interp)
    assert same_bits(got, reference)
    return got


def test_saxpy_matches_numpy_and_the_interpreter(prog, device, interp):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)

    def launch(d):
        r = brook.Stream.empty(1000, device=d)
        prog.saxpy(2.5, on(d, x), on(d, y), r)
        return r.numpy()

    got = run_both(device, interp, launch)
    assert same_bits(got, np.float32(2.5) * x + y)


def test_kernels_are_attributes_and_named(prog):
    assert "saxpy" in prog.kernels
    assert prog.saxpy.name == "saxpy"
    assert prog.kernel("saxpy").params == [("a", "const"), ("x", "in"), ("y", "in"), ("r", "out")]
    assert repr(prog.saxpy) == "brook.Kernel(saxpy(a, x, y, r))"
    with pytest.raises(brook.UsageError, match="no kernel `nope`"):
        prog.kernel("nope")
    with pytest.raises(AttributeError, match="no kernel `nope`"):
        prog.nope


def test_integer_values_are_checked(prog, device, interp):
    x = np.arange(-5, 5, dtype=np.int32)

    def launch(d):
        r = brook.Stream.empty(10, dtype="int", device=d)
        prog.shift(3, 4, on(d, x), r)
        return r.numpy()

    got = run_both(device, interp, launch)
    assert list(got) == [int(np.fmod(v + 3, 4)) for v in x]
    r = brook.Stream.empty(10, dtype="int", device=device)
    with pytest.raises(brook.UsageError, match="does not fit a `uint`"):
        prog.shift(3, -1, on(device, x), r)
    with pytest.raises(brook.UsageError, match="an integer parameter takes an int"):
        prog.shift(1.5, 4, on(device, x), r)


def test_vector_values_and_streams(prog, device, interp):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def launch(d):
        r = brook.Stream.empty(3, dtype="float4", device=d)
        prog.scale4((1.0, 2.0, 3.0, 4.0), on(d, x, dtype="float4"), r)
        return r.numpy()

    got = run_both(device, interp, launch)
    assert same_bits(got, x * np.float32([1, 2, 3, 4]))
    with pytest.raises(brook.UsageError, match="has 4 parts, not 2"):
        prog.scale4((1.0, 2.0), on(device, x, dtype="float4"), brook.Stream.empty(3, dtype="float4", device=device))


def test_numpy_arrays_are_copied_for_inputs_only(prog, device):
    x = np.arange(4, dtype=np.float32)
    r = brook.Stream.empty(4, device=device)
    prog.saxpy(1.0, x, x, r)
    assert same_bits(r.numpy(), x + x)
    with pytest.raises(brook.UsageError, match="the kernel writes it"):
        prog.saxpy(1.0, x, x, np.zeros(4, np.float32))


def test_gathers(prog, device, interp):
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[0, 0], [3, 2], [1, 1], [2, 0]], np.float32)  # (x, y)

    def launch(d):
        r = brook.Stream.empty(4, device=d)
        prog.gather_rows(on(d, idx, dtype="float2"), on(d, table), r)
        return r.numpy()

    got = run_both(device, interp, launch)
    assert list(got) == [0.0, 11.0, 5.0, 2.0]


def test_iterators(prog, device, interp):
    def launch(d):
        r = brook.Stream.empty(5, device=d)
        prog.ramp(brook.Iter(5, 0.0, 5.0), r)
        return r.numpy()

    assert list(run_both(device, interp, launch)) == [0.0, 2.0, 4.0, 6.0, 8.0]
    with pytest.raises(brook.UsageError, match="brook.Iter"):
        prog.ramp(np.zeros(5, np.float32), brook.Stream.empty(5, device=device))


def test_vout_replaces_the_stream(prog, device, interp):
    x = np.array([1, -2, 3, -4, 5, 0], np.float32)

    def launch(d):
        kept = brook.Stream.empty(1, device=d)
        prog.positives(on(d, x), kept)
        assert kept.shape == (3,)
        return kept.numpy()

    assert list(run_both(device, interp, launch)) == [1.0, 3.0, 5.0]


def test_indexof_and_with_domain(prog, device, interp):
    def launch(d):
        r = brook.Stream.empty((3, 4), dtype="float2", device=d)
        prog.where_am_i.with_domain((1, 1), (2, 2))(r)
        return r.numpy()

    got = run_both(device, interp, launch)
    assert list(got[1, 1]) == [1.0, 1.0] and list(got[2, 2]) == [2.0, 2.0]
    assert list(got[0, 0]) == [0.0, 0.0]


def test_reductions_return_python_values(prog, device, interp):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(5000).astype(np.float32)
    got = prog.total(on(device, x))
    assert isinstance(got, float)
    assert got == prog.total(on(interp, x))
    assert prog.total.reduce(on(device, x)) == got
    ints = rng.integers(-1000, 1000, 777).astype(np.int32)
    assert prog.biggest(on(device, ints)) == int(ints.max())
    doubles = rng.standard_normal(300)
    assert prog.dsum(on(device, doubles)) == prog.dsum(on(interp, doubles))


def test_reductions_into_streams(prog, device, interp):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)

    def launch(d):
        rows = brook.Stream.empty((4, 1), device=d)
        prog.total(on(d, x), out=rows)
        return rows.numpy()

    assert same_bits(run_both(device, interp, launch), x.sum(axis=1, keepdims=True))
    with pytest.raises(brook.UsageError, match="is not a reduction"):
        prog.saxpy.reduce(x)


def test_scans(prog, device, interp):
    x = np.arange(1, 11, dtype=np.float32).reshape(2, 5)

    def inclusive(d):
        return prog.total.scan(on(d, x)).numpy()

    def exclusive(d):
        return brook.scan(prog.total, on(d, x), exclusive=True, init=0.0).numpy()

    def whole(d):
        return prog.total.scan(on(d, x), whole=True).numpy()

    assert same_bits(run_both(device, interp, inclusive), np.cumsum(x, axis=1, dtype=np.float32))
    assert list(run_both(device, interp, exclusive)[0]) == [0, 1, 3, 6, 10]
    assert same_bits(run_both(device, interp, whole), np.cumsum(x, dtype=np.float32).reshape(2, 5))
    with pytest.raises(brook.UsageError, match="needs init="):
        prog.total.scan(on(device, x), exclusive=True)


def test_argument_count_and_kinds_are_checked(prog, device):
    x = brook.Stream.empty(4, device=device)
    with pytest.raises(brook.UsageError, match=r"takes 4 argument\(s\) \(a, x, y, r\), not 2"):
        prog.saxpy(1.0, x)
    with pytest.raises(brook.UsageError, match="argument `a` of kernel `saxpy` \\(const\\)"):
        prog.saxpy("two", x, x, x)
    with pytest.raises(brook.UsageError, match=r"\.\.\. \(str\)"):  # long text cut, not split
        prog.saxpy("\u00e9\u00e8" * 40, x, x, x)


def test_refused_launches_raise_launch_errors(prog, device):
    x = brook.Stream.empty(4, device=device)
    with pytest.raises(brook.LaunchError, match="same as output"):
        prog.saxpy(1.0, x, x, x)
    ints = brook.Stream.empty(4, dtype="int", device=device)
    with pytest.raises(brook.LaunchError):
        prog.saxpy(1.0, ints, x, x)


def test_loom_kernels(device, interp):
    loom = brook.LoomProgram(
        "func add(x: Float32, y: Float32): Float32\n  return x + y\n\n"
        "kernel sums(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- add /. in\n  return\n",
        name="sums.loom",
    )
    assert loom.name == "sums"
    data = np.arange(1, 17, dtype=np.float32)

    def launch(d):
        out = brook.Stream.empty(4, device=d)
        loom.kernel(threads=16, block=4)(on(d, data), out)
        return out.numpy()

    assert list(run_both(device, interp, launch)) == [10.0, 26.0, 42.0, 58.0]
    with pytest.raises(brook.LaunchError):
        loom.kernel(threads=16, block=4)(on(device, data[:8]), brook.Stream.empty(4, device=device))


def test_brookgpu_dialect_and_defines(device):
    prog = brook.Program(
        "kernel void inc(float x<>, out float r<>) { r = x + N; }",
        dialect="brookgpu",
        defines=["N=3"],
        preprocess=True,
    )
    x = brook.Stream.from_numpy(np.zeros(3, np.float32), device=device)
    prog.inc(x, x)  # BrookGPU permits a stream as input and output
    assert list(x.numpy()) == [3.0, 3.0, 3.0]
    with pytest.raises(brook.UsageError, match="unknown dialect"):
        brook.Program("", dialect="cg")


def test_launch_warnings_go_through_warnings(device):
    prog = brook.Program("kernel void copy(float x<>, out float r<>) { r = x; }")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prog.copy(brook.Stream.empty(3, device=device), brook.Stream.empty(3, device=device))
    assert any(issubclass(w.category, brook.BrookWarning) and "Uninitialized" in str(w.message) for w in caught)


def test_profile_context(device):
    prog = brook.Program("kernel void twice(float x<>, out float r<>) { r = x * 2.0f; }")
    x = brook.Stream.from_numpy(np.ones(8, np.float32), device=device)
    out = brook.Stream.empty(8, device=device)
    with brook.profile() as p:
        prog.twice(x, out)
        out.finish()
    assert "twice" in p.report and device.description.split(" ")[0] in p.report
