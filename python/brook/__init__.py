"""Brook from Python: stream programs that run on the CPU and GPUs with the same bits.

    import numpy as np, brook
    prog = brook.Program("kernel void saxpy(float a, float x<>, float y<>, out float r<>)"
                         " { r = a * x + y; }")
    x = brook.Stream.from_numpy(np.arange(4, dtype=np.float32))
    y = brook.Stream.from_numpy(np.ones(4, dtype=np.float32))
    r = brook.Stream.empty(4)
    prog.saxpy(2.0, x, y, r)
    r.numpy()   # array([1., 3., 5., 7.], dtype=float32)

See docs/PYTHON.md in the repository for the whole guide.
"""

import contextlib

from ._brook import (
    BrookError,
    BrookWarning,
    CompileError,
    Device,
    Iter,
    Kernel,
    LaunchError,
    LoomProgram,
    Program,
    Stream,
    StreamError,
    UsageError,
    default_device,
    devices,
    mpi_available,
    profile_report,
    reset_profile,
    set_profile,
)

__all__ = [
    "BrookError",
    "BrookWarning",
    "CompileError",
    "Device",
    "Iter",
    "Kernel",
    "LaunchError",
    "LoomProgram",
    "Program",
    "Stream",
    "StreamError",
    "UsageError",
    "default_device",
    "devices",
    "mpi_available",
    "profile",
    "profile_report",
    "reset_profile",
    "scan",
    "set_profile",
]


def scan(kernel, input, output=None, *, exclusive=False, init=None, whole=False):
    """The scan of `input` under the reduce kernel `kernel`'s operator: `kernel.scan(...)`."""
    return kernel.scan(input, output, exclusive=exclusive, init=init, whole=whole)


class _Profile:
    """What `brook.profile()` gathered: `report` is the table, `str(p)` too."""

    def __init__(self):
        self.report = ""

    def __str__(self):
        return self.report


@contextlib.contextmanager
def profile():
    """Profiles the launches and transfers of the `with` block:

        with brook.profile() as p:
            prog.saxpy(2.0, x, y, r)
        print(p.report)

    A launch is counted once it has run: the block's end waits for the devices of
    `brook.devices()`; wait for the streams of other devices (a group's) in the block
    (`stream.finish()`).
    """
    result = _Profile()
    reset_profile()
    set_profile(True)
    try:
        yield result
    finally:
        for device in devices():  # the block's work is counted once it has run
            device.synchronize()
        set_profile(False)
        result.report = profile_report()
        reset_profile()  # reported here: not again when the program ends
