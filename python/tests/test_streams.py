"""Streams from and to NumPy: every element type, vectors, structs, views, copies."""

import numpy as np
import pytest

import brook
from conftest import same_bits

SCALARS = [
    ("bool", np.bool_),
    ("char", np.int8),
    ("uchar", np.uint8),
    ("short", np.int16),
    ("ushort", np.uint16),
    ("int", np.int32),
    ("uint", np.uint32),
    ("long", np.int64),
    ("ulong", np.uint64),
    ("float", np.float32),
    ("double", np.float64),
]


@pytest.mark.parametrize("name,dtype", SCALARS)
def test_every_scalar_type_round_trips(device, name, dtype):
    rng = np.random.default_rng(len(name))
    host = rng.integers(0, 100, size=(3, 5)).astype(dtype)
    stream = brook.Stream.from_numpy(host, device=device)
    assert stream.element == name
    assert stream.shape == (3, 5)
    assert stream.dtype == np.dtype(dtype)
    assert same_bits(stream.numpy(), host)
    assert same_bits(np.asarray(stream), host)


@pytest.mark.parametrize("width", [2, 3, 4])
def test_vectors_have_a_trailing_axis(device, width):
    host = np.arange(6 * width, dtype=np.float32).reshape(2, 3, width)
    stream = brook.Stream.from_numpy(host, device=device, dtype=f"float{width}")
    assert stream.element == f"float{width}"
    assert stream.shape == (2, 3)
    assert stream.numpy().shape == (2, 3, width)
    assert same_bits(stream.numpy(), host)


def test_a_vector_needs_its_trailing_axis(device):
    with pytest.raises(brook.UsageError, match="last axis of 4"):
        brook.Stream.from_numpy(np.zeros((3, 5), np.float32), device=device, dtype="float4")


def test_dtype_converts_the_array(device):
    stream = brook.Stream.from_numpy(np.arange(4), device=device, dtype="float")
    assert stream.element == "float"
    assert same_bits(stream.numpy(), np.arange(4, dtype=np.float32))


def test_structs_are_structured_dtypes(device):
    dtype = np.dtype([("pos", np.float32, (3,)), ("id", np.int8), ("mass", np.float64)], align=True)
    host = np.zeros(4, dtype)
    host["pos"] = np.arange(12).reshape(4, 3)
    host["id"] = [1, -2, 3, -4]
    host["mass"] = [0.5, 1.5, 2.5, 3.5]
    stream = brook.Stream.from_numpy(host, device=device)
    back = stream.numpy()
    assert back.dtype.names == ("pos", "id", "mass")
    assert back.dtype.itemsize == dtype.itemsize
    assert same_bits(back.view(np.uint8), host.view(np.uint8))


def test_a_packed_struct_dtype_is_refused_with_the_fix(device):
    packed = np.dtype([("a", np.int8), ("b", np.float32)])
    with pytest.raises(brook.UsageError, match="align=True"):
        brook.Stream.from_numpy(np.zeros(2, packed), device=device)


def test_types_brook_lacks_are_refused(device):
    with pytest.raises(brook.UsageError, match="no Brook element type"):
        brook.Stream.from_numpy(np.zeros(2, np.complex64), device=device)
    with pytest.raises(brook.UsageError, match="big-endian"):
        brook.Stream.from_numpy(np.zeros(2, ">f4"), device=device)
    with pytest.raises(brook.UsageError, match="not an element type"):
        brook.Stream.empty(3, dtype="quaternion", device=device)


def test_empty_is_zero_filled(device):
    stream = brook.Stream.empty((2, 3), dtype="int2", device=device)
    assert stream.shape == (2, 3)
    assert same_bits(stream.numpy(), np.zeros((2, 3, 2), np.int32))
    assert len(stream) == 6
    assert stream.ndim == 2
    assert stream.device == device


def test_bad_shapes_are_errors_not_crashes(device):
    with pytest.raises(brook.StreamError, match="invalid shape"):
        brook.Stream.empty((0, 3), device=device)
    with pytest.raises(brook.StreamError, match="invalid shape"):
        brook.Stream.empty((1, 1, 1, 1, 2), device=device)
    with pytest.raises(brook.UsageError, match="a shape is"):
        brook.Stream.empty("big", device=device)


def test_domain_views_share_memory(device):
    host = np.arange(20, dtype=np.float32).reshape(4, 5)
    stream = brook.Stream.from_numpy(host, device=device)
    view = stream.domain((1, 2), (3, 5))
    assert view.shape == (2, 3)
    assert same_bits(view.numpy(), host[1:3, 2:5])
    view.read(np.full((2, 3), -1, np.float32))
    expected = host.copy()
    expected[1:3, 2:5] = -1
    assert same_bits(stream.numpy(), expected)


def test_read_checks_the_shape(device):
    stream = brook.Stream.empty((2, 2), device=device)
    with pytest.raises(brook.UsageError, match="shape"):
        stream.read(np.zeros(5, np.float32))


def test_assign_copies_between_devices(device, interp):
    host = np.arange(6, dtype=np.int32)
    source = brook.Stream.from_numpy(host, device=interp)
    target = brook.Stream.empty(6, dtype="int", device=device)
    target.assign(source)
    assert same_bits(target.numpy(), host)


def test_repr_names_type_shape_and_device(device):
    stream = brook.Stream.empty((2, 3), device=device)
    assert repr(stream) == f"brook.Stream(float [2, 3] on {device.name})"


def test_devices():
    names = [d.name for d in brook.devices()]
    assert "interp:0" in names and "cpu:0" in names
    assert brook.default_device().kind in ("cpu", "cuda", "vulkan", "group", "interp")
    assert brook.Device("cpu:0") == brook.Device("cpu")
    group = brook.Device("interp:0+interp:1")
    assert group.kind == "group"
    assert [m.name for m in group.members] == ["interp:0", "interp:1"]
    with pytest.raises(brook.BrookError, match="cuda:99|no device"):
        brook.Device("cuda:99")
    with pytest.raises(brook.UsageError, match="device="):
        brook.Stream.empty(3, device=3.5)
