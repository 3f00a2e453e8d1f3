"""The DLPack binding: what execute accepts and refuses, and the capsule rules (a consumed
capsule is renamed and its deleter called once)."""

import ctypes
import sys

import numpy as np
import pytest

import kiln
from conftest import poisoned, workspace_for


@pytest.fixture
def neg(handle):
    """y = -x on [3, 4] f32, built."""
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[3, 4])
    y = g.neg(x).set_output(True)
    y.set_name("y")
    g.build(handle=handle)
    return g, x, y


def test_wrong_dtype_names_the_tensor(neg):
    g, x, y = neg
    with pytest.raises(kiln.BadParamError, match=r"tensor 'x' \(uid \d+\): the array is float64"):
        g.execute({x: np.zeros((3, 4)), y: poisoned((3, 4))})
    with pytest.raises(kiln.BadParamError, match="tensor 'x'.*int32"):
        g.execute({x: np.zeros((3, 4), np.int32), y: poisoned((3, 4))})


def test_wrong_shape_names_the_tensor(neg):
    g, x, y = neg
    with pytest.raises(kiln.BadParamError, match=r"tensor 'y'.*shape \[4, 3\]"):
        g.execute({x: np.zeros((3, 4), np.float32), y: poisoned((4, 3))})


def test_wrong_strides_name_the_tensor(neg):
    g, x, y = neg
    xt = np.zeros((4, 3), np.float32).T  # shape (3, 4), strides (1, 3)
    with pytest.raises(kiln.BadParamError, match=r"tensor 'x'.*strides \[1, 3\]"):
        g.execute({x: xt, y: poisoned((3, 4))})


def test_strides_of_extent_one_dims_are_free(handle):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[3, 1])
    y = g.neg(x).set_output(True)
    g.build(handle=handle)
    xa = np.arange(6, dtype=np.float32).reshape(3, 2)[:, :1]  # strides (2, 1) in elements
    assert xa.strides == (8, 4)
    col = np.arange(3, dtype=np.float32).reshape(3, 1)
    ya = poisoned((3, 1))
    g.execute({x: np.ascontiguousarray(xa), y: ya})
    np.testing.assert_array_equal(ya, -np.ascontiguousarray(xa))
    # A [3, 1] view whose unit dim has an odd stride is the same layout.
    wide = np.zeros((3, 5), np.float32)
    wide[:, 0] = col[:, 0]
    view = np.lib.stride_tricks.as_strided(col, shape=(3, 1), strides=(4, 400))
    g.execute({x: view, y: ya})
    np.testing.assert_array_equal(ya, -col)


def test_byte_offset_views_are_used_in_place(neg):
    g, x, y = neg
    big = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = np.full((2, 3, 4), np.nan, np.float32)
    g.execute({x: big[1], y: out[1]})  # views starting 48 bytes in
    np.testing.assert_array_equal(out[1], -big[1])
    assert np.isnan(out[0]).all()


def test_read_only_outputs_refused_inputs_allowed(neg):
    g, x, y = neg
    xa = np.ones((3, 4), np.float32)
    xa.flags.writeable = False
    ya = poisoned((3, 4))
    g.execute({x: xa, y: ya})
    np.testing.assert_array_equal(ya, -1)
    ya.flags.writeable = False
    with pytest.raises((kiln.BadParamError, BufferError), match="read-only|readonly"):
        g.execute({x: xa, y: ya})


def test_not_an_array(neg):
    g, x, y = neg
    with pytest.raises(TypeError, match="not a DLPack array"):
        g.execute({x: [[0.0] * 4] * 3, y: poisoned((3, 4))})
    with pytest.raises(kiln.BadParamError, match="variant pack key"):
        g.execute({"x": np.zeros((3, 4), np.float32)})


def test_missing_and_extra_bindings(neg):
    g, x, y = neg
    with pytest.raises(kiln.BadParamError, match="tensor 'y'.*not bound"):
        g.execute({x: np.zeros((3, 4), np.float32)})
    with pytest.raises(kiln.BadParamError, match="uid 999.*binds no such tensor"):
        g.execute({x: np.zeros((3, 4), np.float32), y: poisoned((3, 4)), 999: poisoned(1)})


def test_deleter_runs_once_no_leak(neg):
    g, x, y = neg
    xa = np.ones((3, 4), np.float32)
    ya = poisoned((3, 4))
    before = (sys.getrefcount(xa), sys.getrefcount(ya))
    for _ in range(100):
        g.execute({x: xa, y: ya})
    with pytest.raises(kiln.BadParamError):
        g.execute({x: xa, y: np.zeros((2, 2), np.float32)})
    assert (sys.getrefcount(xa), sys.getrefcount(ya)) == before


class LegacyProducer:
    """A producer from before DLPack 1.0: `__dlpack__` takes no max_version."""

    def __init__(self, arr):
        self.arr = arr
        self.calls = 0

    def __dlpack__(self, stream=None):
        self.calls += 1
        return self.arr.__dlpack__()

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


def test_legacy_producer(neg):
    g, x, y = neg
    xa = np.full((3, 4), 2, np.float32)
    ya = poisoned((3, 4))
    before = sys.getrefcount(ya)
    prod = LegacyProducer(ya)
    g.execute({x: LegacyProducer(xa), y: prod})
    np.testing.assert_array_equal(ya, -2)
    assert prod.calls == 1
    del prod
    assert sys.getrefcount(ya) == before


class SameCapsule:
    """Hands out one capsule every time: a second use sees it consumed."""

    def __init__(self, arr):
        self.capsule = arr.__dlpack__()

    def __dlpack__(self, stream=None, max_version=None):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_consumed_capsule_is_refused(neg):
    g, x, y = neg
    prod = SameCapsule(np.ones((3, 4), np.float32))
    ya = poisoned((3, 4))
    g.execute({x: prod, y: ya})
    with pytest.raises(kiln.BadParamError, match="already consumed"):
        g.execute({x: prod, y: ya})


class NotACapsule:
    def __dlpack__(self, stream=None, max_version=None):
        return 42

    def __dlpack_device__(self):
        return (1, 0)


def test_non_capsule_is_refused(neg):
    g, x, y = neg
    with pytest.raises(kiln.BadParamError, match="not a DLPack capsule"):
        g.execute({x: NotACapsule(), y: poisoned((3, 4))})


def test_workspace_checks(handle, rng):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[1, 3, 8, 8])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    y = g.conv_fprop(x, w, padding=[1, 1]).set_output(True)
    g.build(handle=handle)
    n = g.get_workspace_size()
    assert n > 0
    xa = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    wa = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    ya = poisoned((1, 4, 8, 8))
    with pytest.raises(kiln.NullPointerError, match="workspace"):
        g.execute({x: xa, w: wa, y: ya})
    with pytest.raises(kiln.SizeInsufficientError, match="workspace"):
        g.execute({x: xa, w: wa, y: ya}, np.empty(n - 1, np.uint8))
    with pytest.raises(kiln.BadParamError, match="not contiguous"):
        g.execute({x: xa, w: wa, y: ya}, np.empty(2 * n, np.uint8)[::2])
    g.execute({x: xa, w: wa, y: ya}, np.empty((n + 3) // 4, np.float32))  # any dtype
    assert not np.isnan(ya).any()
    assert workspace_for(g).nbytes == n



# A producer written with ctypes, so that every field of the DLPack structs can be set: device,
# data type, NULL strides, version. Its deleter counts its calls.


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class CtypesProducer:
    """Exports `arr`'s memory as a versioned DLPack tensor with the given fields."""

    def __init__(self, arr, device=(1, 0), dtype=(2, 32, 1), major=1, strides=True, flags=0):
        self.arr = arr
        self.deleted = 0
        self.shape = (ctypes.c_int64 * arr.ndim)(*arr.shape)
        self.strides = (ctypes.c_int64 * arr.ndim)(*[s // arr.itemsize for s in arr.strides])
        m = DLManagedTensorVersioned()
        m.major, m.minor = major, 0
        m.flags = flags
        t = m.dl_tensor
        t.data = arr.ctypes.data
        t.device = DLDevice(*device)
        t.ndim = arr.ndim
        t.dtype = DLDataType(*dtype)
        t.shape = self.shape
        t.strides = self.strides if strides else None

        def deleter(_ptr):
            self.deleted += 1

        self._deleter = DELETER(deleter)
        m.deleter = self._deleter
        self.managed = m

    def __dlpack__(self, stream=None, max_version=None):
        return PyCapsule_New(ctypes.addressof(self.managed), b"dltensor_versioned", None)

    def __dlpack_device__(self):
        return (self.managed.dl_tensor.device.device_type, self.managed.dl_tensor.device.device_id)


def test_ctypes_producer_runs_and_deleter_is_called_once(neg):
    g, x, y = neg
    xa = np.full((3, 4), 5, np.float32)
    ya = poisoned((3, 4))
    px, py = CtypesProducer(xa, strides=False), CtypesProducer(ya)
    g.execute({x: px, y: py})
    np.testing.assert_array_equal(ya, -5)
    assert (px.deleted, py.deleted) == (1, 1)


@pytest.mark.parametrize(
    "fields,message",
    [
        (dict(device=(2, 0)), "on cuda:0, but the handle runs on cpu"),
        (dict(device=(13, 0)), "managed memory"),
        (dict(dtype=(4, 16, 1)), "bfloat16 but the tensor is f32"),
        (dict(dtype=(2, 32, 4)), "float32x4"),
        (dict(major=2), "DLPack 2.0"),
        (dict(flags=1), "read-only"),
    ],
)
def test_ctypes_producer_refusals_call_the_deleter(neg, fields, message):
    g, x, y = neg
    xa = np.zeros((3, 4), np.float32)
    ya = poisoned((3, 4))
    bad = CtypesProducer(ya, **fields)
    with pytest.raises(kiln.BadParamError, match=message):
        g.execute({x: xa, y: bad})
    assert bad.deleted == 1
    assert np.isnan(ya).all()
