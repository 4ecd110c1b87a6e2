"""Python programs over MPI ranks: `mpirun -np N python prog.py` runs the script on rank 0 with
every rank's devices as one group, and gives the bits of one device.

Runs where the module was built with the `mpi` feature (`maturin develop --features mpi`) and
`mpirun` is on the PATH; `BROOK_MPI_TESTS=required` (CI) turns a missing piece into a failure."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import brook

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
REQUIRED = os.environ.get("BROOK_MPI_TESTS") == "required"
MISSING = None if brook.mpi_available() else "this build of brook has no MPI (the `mpi` feature)"
MISSING = MISSING or (None if shutil.which("mpirun") else "no mpirun on the PATH")

SCRIPT = """
import numpy as np, brook
group = brook.default_device()
print("members:", " ".join(m.name for m in group.members))
prog = brook.Program("kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }\\n"
                     "reduce void total(float x<>, reduce float s<>) { s += x; }")
rng = np.random.default_rng(3)
x = rng.standard_normal((96, 40)).astype(np.float32)
y = rng.standard_normal((96, 40)).astype(np.float32)
r = brook.Stream.empty((96, 40), device=group)
prog.saxpy(1.5, brook.Stream.from_numpy(x, device=group), y, r)
alone = brook.Stream.empty((96, 40), device="cpu:0")
prog.saxpy(1.5, brook.Stream.from_numpy(x, device="cpu:0"), y, alone)
print("same bits:", r.numpy().tobytes() == alone.numpy().tobytes() == (np.float32(1.5) * x + y).tobytes())
print("same sum:", prog.total(r) == prog.total(alone))
"""


def mpirun(ranks, *command):
    launcher = ["mpirun", "-np", str(ranks)]
    if "Open MPI" in subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout:
        launcher.insert(1, "--oversubscribe")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               BRT_RUNTIME="mpi:cpu", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    return subprocess.run(launcher + list(command), capture_output=True, text=True, timeout=300, env=env)


def check_available():
    if MISSING:
        if REQUIRED:
            pytest.fail(f"BROOK_MPI_TESTS=required, but {MISSING}")
        pytest.skip(MISSING)


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_script_over_ranks_gives_one_devices_bits(ranks):
    check_available()
    result = mpirun(ranks, sys.executable, "-c", SCRIPT)
    assert result.returncode == 0, result.stdout + result.stderr
    members = [f"rank{k}:cpu:0" for k in range(1, ranks)]
    assert all(m in result.stdout for m in members), result.stdout
    assert "same bits: True" in result.stdout and "same sum: True" in result.stdout
    assert result.stdout.count("same bits") == 1  # only rank 0 ran the script


def test_the_heat_example_over_two_ranks():
    check_available()
    result = mpirun(2, sys.executable, str(EXAMPLES / "heat.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the same bits as NumPy: True" in result.stdout
