"""Shared fixtures: every kernel test runs on every device given, and is compared with the
reference interpreter.

The devices are `BROOK_PY_DEVICES` (comma-separated specs, e.g. `cpu:0,cuda:0,vulkan:0`) or, by
default, the interpreter, the CPU device and every CUDA device this machine has. A device
named in `BROOK_PY_DEVICES` that this machine lacks fails the run (it is never skipped
silently)."""

import os

import numpy as np
import pytest

import brook


def _device_specs():
    named = os.environ.get("BROOK_PY_DEVICES", "").strip()
    if named:
        return [spec.strip() for spec in named.split(",") if spec.strip()]
    specs = ["interp:0", "cpu:0"]
    specs += [d.name for d in brook.devices() if d.kind == "cuda"]
    return specs


DEVICES = _device_specs()


def pytest_report_header(config):
    gpus = [d.name for d in brook.devices() if d.kind == "cuda"]
    note = "" if gpus else " (no CUDA device here: GPU cases not run)"
    return f"brook devices under test: {', '.join(DEVICES)}{note}"


@pytest.fixture(params=DEVICES)
def device(request):
    return brook.Device(request.param)


@pytest.fixture
def interp():
    return brook.Device("interp:0")


def same_bits(a, b):
    """Whether two arrays hold the same bits (NaNs of the same payload equal)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
