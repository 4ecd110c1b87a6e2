"""Random shapes and values against NumPy: elementwise maps, reductions and scans give NumPy's
float32 results bit for bit (Brook contracts and reassociates nothing), on every device."""

import numpy as np
import pytest

import brook
from conftest import same_bits

PROG = brook.Program(
    """
    kernel void fma_free(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
    kernel void mix(float x<>, float y<>, out float r<>) { r = (x - y) / (x * x + 1.0f); }
    kernel void clampi(int lo, int hi, int x<>, out int r<>) { r = clamp(x, lo, hi); }
    reduce void add(int x<>, reduce int r<>) { r += x; }
    """,
    name="property.br",
)

CASES = 60


def random_shape(rng):
    rank = int(rng.integers(1, 5))
    return tuple(int(n) for n in rng.integers(1, 9 if rank > 2 else 70, size=rank))


@pytest.mark.parametrize("seed", range(CASES))
def test_maps_match_numpy(device, seed):
    rng = np.random.default_rng(seed)
    shape = random_shape(rng)
    x = (rng.standard_normal(shape) * 10).astype(np.float32)
    y = (rng.standard_normal(shape) * 10).astype(np.float32)
    a = np.float32(rng.standard_normal())
    sx = brook.Stream.from_numpy(x, device=device)
    sy = brook.Stream.from_numpy(y, device=device)
    r = brook.Stream.empty(shape, device=device)
    PROG.fma_free(float(a), sx, sy, r)
    assert same_bits(r.numpy(), a * x + y)
    PROG.mix(sx, sy, r)
    assert same_bits(r.numpy(), (x - y) / (x * x + np.float32(1)))
    ints = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    ri = brook.Stream.empty(shape, dtype="int", device=device)
    PROG.clampi(-10, 20, ints, ri)
    assert same_bits(ri.numpy(), np.clip(ints, -10, 20))


@pytest.mark.parametrize("seed", range(0, CASES, 4))
def test_integer_reductions_and_scans_match_numpy(device, seed):
    rng = np.random.default_rng(1000 + seed)
    shape = random_shape(rng)
    ints = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    stream = brook.Stream.from_numpy(ints, device=device)
    assert PROG.add(stream) == int(ints.sum())
    scanned = PROG.add.scan(stream).numpy()
    assert same_bits(scanned, np.cumsum(ints, axis=-1, dtype=np.int32))
