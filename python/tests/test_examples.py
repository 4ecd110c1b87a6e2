"""The Python examples run and check themselves (exit status 0: NumPy's bits)."""

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def test_heat_example(device):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "heat.py"), device.name],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the same bits as NumPy: True" in result.stdout
