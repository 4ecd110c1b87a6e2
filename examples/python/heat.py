"""Heat diffusion on a plate, in Brook from Python: a 5-point stencil written with gathers,
run for some steps on the default device (or the one named on the command line), and checked
bit for bit against the same arithmetic in NumPy.

    python examples/python/heat.py            # the default device
    python examples/python/heat.py cpu:0      # any device spec: interp, cuda:0, vulkan:0
"""

import sys

import numpy as np

import brook

STENCIL = """
// One explicit step: each cell moves toward the mean of its four neighbours (edges clamped).
kernel void step(float k, float t[][], float2 size, out float r<>) {
    float2 p = indexof(r).xy;
    float2 left = float2(max(p.x - 1.0f, 0.0f), p.y);
    float2 right = float2(min(p.x + 1.0f, size.x - 1.0f), p.y);
    float2 up = float2(p.x, max(p.y - 1.0f, 0.0f));
    float2 down = float2(p.x, min(p.y + 1.0f, size.y - 1.0f));
    float here = t[p];
    r = here + k * (t[left] + t[right] + t[up] + t[down] - 4.0f * here);
}

reduce void total(float x<>, reduce float s<>) { s += x; }
"""


def numpy_step(k, t):
    padded = np.pad(t, 1, mode="edge")
    left, right = padded[1:-1, :-2], padded[1:-1, 2:]
    up, down = padded[:-2, 1:-1], padded[2:, 1:-1]
    return t + k * (left + right + up + down - np.float32(4) * t)


def main():
    device = brook.Device(sys.argv[1]) if len(sys.argv) > 1 else brook.default_device()
    height, width, steps, k = 48, 64, 200, np.float32(0.2)
    plate = np.zeros((height, width), np.float32)
    plate[height // 3 : height // 2, width // 4 : width // 2] = 100.0  # a hot patch

    prog = brook.Program(STENCIL, name="heat.br")
    a = brook.Stream.from_numpy(plate, device=device)
    b = brook.Stream.empty((height, width), device=device)
    size = (float(width), float(height))
    for _ in range(steps):
        prog.step(float(k), a, size, b)
        a, b = b, a
    result = a.numpy()

    expected = plate
    for _ in range(steps):
        expected = numpy_step(k, expected)

    print(f"device: {device.description}")
    print(f"{steps} steps on a {height}x{width} plate")
    print(f"hottest cell: {result.max():.4f}, total heat: {prog.total(a):.2f}")
    print(f"the same bits as NumPy: {result.tobytes() == expected.tobytes()}")
    return 0 if result.tobytes() == expected.tobytes() else 1


if __name__ == "__main__":
    sys.exit(main())
