"""Zero-copy interchange through DLPack: NumPy on the CPU device (here and in CI), PyTorch and
CuPy on CUDA devices (where a GPU and those libraries are installed)."""

import importlib.util

import numpy as np
import pytest

import brook

CUDA = [d for d in brook.devices() if d.kind == "cuda"]
needs_gpu = pytest.mark.skipif(not CUDA, reason="no CUDA device on this machine")


def address(array):
    return array.__array_interface__["data"][0]


def test_numpy_memory_becomes_a_stream_in_place():
    host = np.arange(6, dtype=np.float32)
    stream = brook.Stream.from_dlpack(host)
    assert stream.device.kind == "cpu"
    prog = brook.Program("kernel void twice(float a<>, out float b<>) { b = a * 2.0f; }")
    out = brook.Stream.empty(6, device=stream.device)
    prog.twice(stream, out)
    prog.twice(out, stream)  # writes the NumPy array's own memory
    stream.finish()
    assert list(host) == [0, 4, 8, 12, 16, 20]


def test_a_stream_is_seen_by_numpy_in_place():
    stream = brook.Stream.from_numpy(np.arange(8, dtype=np.int32).reshape(2, 4), device="cpu")
    view = np.from_dlpack(stream)
    assert view.shape == (2, 4) and view.dtype == np.int32
    stream.read(np.full((2, 4), 9, np.int32))
    stream.finish()
    assert view.sum() == 72  # the same memory


def test_round_trip_keeps_the_address():
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    back = np.from_dlpack(brook.Stream.from_dlpack(host))
    assert address(back) == address(host)


def capsule_name(capsule):
    import ctypes

    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.py_object]
    return name(capsule).decode()


def test_capsules_are_versioned_when_asked():
    stream = brook.Stream.from_numpy(np.arange(4, dtype=np.float32), device="cpu")
    assert capsule_name(stream.__dlpack__()) == "dltensor"
    assert capsule_name(stream.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(stream.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(stream.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    # NumPy 2.1 and later ask for the versioned capsule and share it in place.
    view = np.from_dlpack(stream)
    stream.read(np.full(4, 5, np.float32))
    stream.finish()
    assert list(view) == [5, 5, 5, 5]


class LegacyProducer:
    """A producer of DLPack before 1.0: its `__dlpack__` takes no `max_version`."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_producers_before_dlpack_1_are_asked_again_without_max_version():
    host = np.arange(5, dtype=np.int32)
    stream = brook.Stream.from_dlpack(LegacyProducer(host))
    stream.read(np.full(5, 7, np.int32))
    stream.finish()
    assert list(host) == [7] * 5  # the same memory


def test_read_only_arrays_are_refused_with_the_fix():
    host = np.arange(4, dtype=np.float32)
    host.flags.writeable = False
    if tuple(int(p) for p in np.__version__.split(".")[:2]) < (2, 1):
        pytest.skip("NumPy before 2.1 gives no versioned capsule (no read-only flag)")
    with pytest.raises(brook.UsageError, match="read-only.*from_numpy"):
        brook.Stream.from_dlpack(host)


def test_vectors_take_the_last_axis():
    host = np.arange(8, dtype=np.float32).reshape(2, 4)
    stream = brook.Stream.from_dlpack(host, dtype="float4")
    assert stream.element == "float4" and stream.shape == (2,)
    assert np.from_dlpack(stream).shape == (2, 4)
    with pytest.raises(brook.UsageError, match="last axis to be 4"):
        brook.Stream.from_dlpack(np.zeros((2, 3), np.float32), dtype="float4")
    with pytest.raises(brook.UsageError, match="holds float, not double"):
        brook.Stream.from_dlpack(np.zeros(3, np.float32), dtype="double")


def test_strided_arrays_are_refused_with_the_fix():
    with pytest.raises(brook.UsageError, match="not C-contiguous"):
        brook.Stream.from_dlpack(np.arange(10, dtype=np.float32)[::2])


def test_devices_that_share_nothing_say_so():
    on_interp = brook.Stream.empty(3, device="interp")
    with pytest.raises(BufferError, match="interp:0 does not share"):
        np.from_dlpack(on_interp)
    with pytest.raises(brook.UsageError, match="not interp:0's"):
        brook.Stream.from_dlpack(np.zeros(3, np.float32), device="interp")
    with pytest.raises(brook.UsageError, match="does not support DLPack"):
        brook.Stream.from_dlpack([1, 2, 3])


def test_structs_have_no_dlpack_type():
    dtype = np.dtype([("a", np.float32), ("b", np.int32)], align=True)
    stream = brook.Stream.from_numpy(np.zeros(2, dtype), device="cpu")
    with pytest.raises(BufferError, match="no struct types"):
        np.from_dlpack(stream)


def test_views_share_when_contiguous():
    stream = brook.Stream.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4), device="cpu")
    rows = np.from_dlpack(stream.domain((1, 0), (3, 4)))
    assert rows.tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    with pytest.raises(BufferError, match="not one contiguous block"):
        np.from_dlpack(stream.domain((0, 1), (3, 3)))


@needs_gpu
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch not installed")
def test_pytorch_tensors_without_copies():
    import torch

    device = CUDA[0]
    ordinal = int(device.name.split(":")[1])
    tensor = torch.arange(1 << 20, dtype=torch.float32, device=f"cuda:{ordinal}")
    stream = brook.Stream.from_dlpack(tensor)
    assert stream.device == device
    prog = brook.Program("kernel void twice(float a<>, out float b<>) { b = a * 2.0f; }")
    out = brook.Stream.empty(1 << 20, device=device)
    prog.twice(stream, out)
    back = torch.from_dlpack(out)
    assert back.device == tensor.device
    assert torch.equal(back, tensor * 2)
    assert torch.from_dlpack(stream).data_ptr() == tensor.data_ptr()
    # Brook's writes are seen by PyTorch and PyTorch's by Brook, in order.
    tensor.fill_(3.0)
    prog.twice(stream, out)
    assert float(back.sum()) == 6.0 * (1 << 20)


@needs_gpu
@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy not installed")
def test_cupy_arrays_without_copies():
    import cupy

    with cupy.cuda.Device(int(CUDA[0].name.split(":")[1])):
        array = cupy.arange(4096, dtype=cupy.int32)
        stream = brook.Stream.from_dlpack(array)
        back = cupy.from_dlpack(stream)
        assert back.data.ptr == array.data.ptr
        prog = brook.Program("kernel void inc(int a<>, out int b<>) { b = a + 1; }")
        out = brook.Stream.empty(4096, dtype="int", device=CUDA[0])
        prog.inc(stream, out)
        assert bool((cupy.from_dlpack(out) == array + 1).all())
