"""Building graphs and running every operation on NumPy arrays, checked against NumPy."""

import math

import numpy as np
import pytest

import kiln
from conftest import conv2d_ref, poisoned, workspace_for


def build(g, handle, modes=None):
    g.build(modes or [kiln.heur_mode.A], handle=handle)
    return workspace_for(g)


def test_import_and_version():
    assert kiln.version() == kiln.__version__
    assert issubclass(kiln.BadParamError, kiln.Error)
    assert issubclass(kiln.SizeInsufficientError, kiln.BadParamError)
    assert issubclass(kiln.NotSupportedError, kiln.Error)


def test_handle_cpu(handle):
    assert handle.device == "cpu"
    assert "KILN_CPU_REFERENCE" in handle.engines
    assert repr(handle) == "kiln.Handle('cpu')"
    handle.set_stream(0)  # CPU handles take and ignore streams
    assert handle.get_stream() == 0


def test_bad_device_names_it():
    with pytest.raises(kiln.BadParamError, match="tpu:0"):
        kiln.Handle("tpu:0")


def test_cuda_handle_without_driver_says_why():
    try:
        h = kiln.Handle("cuda:0")
    except kiln.NotSupportedError as e:
        assert "cuda" in str(e).lower()
    else:  # a machine with a GPU
        assert h.device == "cuda:0"


def test_pointwise_relu_add(handle, rng):
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT, compute_data_type=kiln.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])
    b = g.tensor(name="b", dim=[1, 3])
    y = g.relu(g.add(x, b)).set_output(True)
    ws = build(g, handle)
    xa = rng.standard_normal((2, 3), dtype=np.float32)
    ba = rng.standard_normal((1, 3), dtype=np.float32)
    ya = poisoned((2, 3))
    g.execute({x: xa, b: ba, y: ya}, ws)
    np.testing.assert_allclose(ya, np.maximum(xa + ba, 0), rtol=1e-6)
    # uids key the pack as well as tensors
    yb = poisoned((2, 3))
    g.execute({x.uid: xa, b.get_uid(): ba, y.uid: yb}, ws)
    np.testing.assert_array_equal(ya, yb)


UNARY = {
    "identity": lambda x: x,
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "exp": np.exp,
    "abs": np.abs,
    "neg": np.negative,
    "sqrt": lambda x: np.sqrt(np.abs(x)),
    "gelu": lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
    "swish": lambda x: x / (1 + np.exp(-x)),
}

BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


@pytest.mark.parametrize("mode", sorted(UNARY))
def test_named_unary_forms(handle, rng, mode):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[4, 5])
    xin = x
    if mode == "sqrt":
        xin = g.abs(x)
    y = getattr(g, mode)(xin).set_output(True)
    ws = build(g, handle)
    xa = rng.standard_normal((4, 5)).astype(np.float32)
    ya = poisoned((4, 5))
    g.execute({x: xa, y: ya}, ws)
    np.testing.assert_allclose(ya, UNARY[mode](xa.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", sorted(BINARY))
def test_named_binary_forms(handle, rng, mode):
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT)
    a = g.tensor(name="a", dim=[3, 4])
    b = g.tensor(name="b", dim=[3, 4])
    y = getattr(g, mode)(a, b).set_output(True)
    ws = build(g, handle)
    aa, ba = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    ya = poisoned((3, 4))
    g.execute({a: aa, b: ba, y: ya}, ws)
    np.testing.assert_allclose(ya, BINARY[mode](aa, ba), rtol=1e-6)


def test_every_pointwise_mode_has_a_method():
    for mode in dir(kiln.pointwise_mode):
        if mode.isupper():
            assert callable(getattr(kiln.Graph, getattr(kiln.pointwise_mode, mode)))


def test_scalar_operand_and_mode_parameters(handle, rng):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[8])
    y = g.relu(g.mul(x, 2.0), relu_lower_clip_slope=0.1).set_output(True)
    ws = build(g, handle)
    xa = rng.standard_normal(8).astype(np.float32)
    ya = poisoned(8)
    g.execute({x: xa, y: ya}, ws)
    want = np.where(2 * xa > 0, 2 * xa, 0.1 * 2 * xa)
    np.testing.assert_allclose(ya, want, rtol=1e-6)


def test_pointwise_generic_spelling(handle):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[3])
    y = g.pointwise(x, mode=kiln.pointwise_mode.NEG).set_output(True)
    ws = build(g, handle)
    ya = poisoned(3)
    g.execute({x: np.array([1, -2, 3], np.float32), y: ya}, ws)
    np.testing.assert_array_equal(ya, [-1, 2, -3])
    with pytest.raises(kiln.BadParamError, match="not_a_mode"):
        g.pointwise(x, mode="not_a_mode")


@pytest.mark.parametrize("pad,stride,dilation", [((1, 1), (1, 1), (1, 1)), ((0, 2), (2, 1), (1, 2))])
def test_conv_fprop_matches_numpy(handle, rng, pad, stride, dilation):
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3, 9, 8])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    y = g.conv_fprop(x, w, padding=list(pad), stride=list(stride), dilation=list(dilation))
    y.set_output(True)
    ws = build(g, handle)
    xa = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    wa = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    want = conv2d_ref(xa, wa, pad, stride, dilation)
    assert y.get_dim() == list(want.shape)
    ya = poisoned(want.shape)
    g.execute({x: xa, w: wa, y: ya}, ws)
    np.testing.assert_allclose(ya, want, rtol=1e-4, atol=1e-4)


def test_conv_dgrad_and_wgrad_match_numpy(handle, rng):
    # y = conv(x, w) is linear: <dy, conv(x, w)> = <dgrad(dy, w), x> = <wgrad(x, dy), w>.
    xa = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    wa = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    dya = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    inner = float((conv2d_ref(xa, wa, (1, 1)) * dya).sum())

    g = kiln.Graph(io_data_type="f32")
    dy = g.tensor(name="dy", dim=[2, 4, 6, 6])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    dx = g.conv_dgrad(dy, w, padding=[1, 1]).set_dim([2, 3, 6, 6]).set_output(True)
    ws = build(g, handle)
    dxa = poisoned((2, 3, 6, 6))
    g.execute({dy: dya, w: wa, dx: dxa}, ws)
    assert float((dxa.astype(np.float64) * xa).sum()) == pytest.approx(inner, rel=1e-4)

    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[2, 3, 6, 6])
    dy = g.tensor(name="dy", dim=[2, 4, 6, 6])
    dw = g.conv_wgrad(x, dy, padding=[1, 1]).set_dim([4, 3, 3, 3]).set_output(True)
    ws = build(g, handle)
    dwa = poisoned((4, 3, 3, 3))
    g.execute({x: xa, dy: dya, dw: dwa}, ws)
    assert float((dwa.astype(np.float64) * wa).sum()) == pytest.approx(inner, rel=1e-4)


def test_matmul_batched(handle, rng):
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT)
    a = g.tensor(name="A", dim=[3, 5, 7])
    b = g.tensor(name="B", dim=[3, 7, 4])
    c = g.matmul(a, b).set_output(True)
    ws = build(g, handle)
    aa = rng.standard_normal((3, 5, 7)).astype(np.float32)
    ba = rng.standard_normal((3, 7, 4)).astype(np.float32)
    ca = poisoned((3, 5, 4))
    g.execute({a: aa, b: ba, c: ca}, ws)
    np.testing.assert_allclose(ca, aa @ ba, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,fn", [("sum", np.sum), ("max", np.max), ("mean", np.mean)])
def test_reduction(handle, rng, mode, fn):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[4, 6])
    y = g.reduction(x, mode=getattr(kiln.reduction_mode, mode.upper())).set_dim([4, 1])
    y.set_output(True)
    ws = build(g, handle)
    xa = rng.standard_normal((4, 6)).astype(np.float32)
    ya = poisoned((4, 1))
    g.execute({x: xa, y: ya}, ws)
    np.testing.assert_allclose(ya, fn(xa, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("training", [False, True])
def test_rmsnorm_from_the_table(handle, rng, training):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[3, 8])
    scale = g.tensor(name="scale", dim=[1, 8])
    phase = kiln.norm_forward_phase.TRAINING if training else kiln.norm_forward_phase.INFERENCE
    y, inv_rms = g.rmsnorm(x, scale, epsilon=1e-5, forward_phase=phase)
    y.set_output(True)
    assert (inv_rms is not None) == training
    if training:
        inv_rms.set_output(True)
    ws = build(g, handle)
    xa = rng.standard_normal((3, 8)).astype(np.float32)
    sa = rng.standard_normal((1, 8)).astype(np.float32)
    ya = poisoned((3, 8))
    pack = {x: xa, scale: sa, y: ya}
    if training:
        ra = poisoned((3, 1))
        pack[inv_rms] = ra
    g.execute(pack, ws)
    inv = 1 / np.sqrt((xa.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ya, xa * inv * sa, rtol=1e-5, atol=1e-6)
    if training:
        np.testing.assert_allclose(ra, inv, rtol=1e-5)


def test_rmsnorm_epsilon_tensor_and_bias(handle, rng):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[2, 4])
    scale = g.tensor(name="scale", dim=[1, 4])
    bias = g.tensor(name="bias", dim=[1, 4])
    y, _ = g.rmsnorm(x, scale, bias=bias, epsilon=g.scalar(1e-3))
    y.set_output(True)
    ws = build(g, handle)
    xa, sa, ba = (rng.standard_normal(s).astype(np.float32) for s in [(2, 4), (1, 4), (1, 4)])
    ya = poisoned((2, 4))
    g.execute({x: xa, scale: sa, bias: ba, y: ya}, ws)
    inv = 1 / np.sqrt((xa.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(ya, xa * inv * sa + ba, rtol=1e-5, atol=1e-6)


def test_generic_op_directly(handle):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[2, 2])
    s = g.tensor(name="s", dim=[1, 2])
    (y,) = g.generic_op("rmsnorm", {"x": x, "scale": s}, ["y"], {"epsilon": 1}, name="norm")
    y.set_output(True)
    build(g, handle)
    with pytest.raises(kiln.BadParamError, match="unknown operation 'nope'"):
        g.generic_op("nope", {"x": x}, ["y"])
    with pytest.raises(kiln.BadParamError, match="attribute 'epsilon'"):
        g.generic_op("rmsnorm", {"x": x, "scale": s}, ["y"], {"epsilon": "small"})
    with pytest.raises(TypeError, match="no input or attribute 'gamma'"):
        g.rmsnorm(x, s, gamma=1.0)


def test_operation_specs_lists_the_generic_table():
    specs = kiln.operation_specs()
    assert "rmsnorm" in specs
    assert ("x", True) in specs["rmsnorm"]["inputs"]


def test_tensor_like_takes_layout_and_type(handle, rng):
    xa = rng.standard_normal((4, 6)).astype(np.float32)[:, ::2]  # strides (6, 2)
    g = kiln.Graph()
    x = g.tensor_like(xa, name="x")
    assert x.get_dim() == [4, 3] and x.get_stride() == [6, 2]
    assert x.get_data_type() == kiln.data_type.FLOAT
    y = g.neg(x).set_output(True).set_stride([3, 1])
    ws = build(g, handle)
    ya = poisoned((4, 3))
    g.execute({x: xa, y: ya}, ws)
    np.testing.assert_array_equal(ya, -xa)
    # A type kiln has no tensors of (int32, int8 and bool it has).
    with pytest.raises(kiln.NotSupportedError, match="uint16"):
        g.tensor_like(np.zeros(3, np.uint16), name="i")


def test_tensor_identity_and_attributes():
    g = kiln.Graph()
    x = g.tensor(name="x", dim=[2], data_type=kiln.data_type.HALF, uid=7)
    assert g.tensor_by_name("x") == x and hash(g.tensor_by_uid(7)) == hash(x)
    assert {x: 1}[g.tensor_by_name("x")] == 1
    assert x.uid == 7 and x.name == "x" and x.dim == [2] and x.data_type == kiln.data_type.HALF
    assert not x.is_virtual and x.set_output(False).is_virtual
    assert x.set_data_type("bf16").data_type == kiln.data_type.BFLOAT16
    assert kiln.data_type.BFLOAT16.short_name == "bf16" and kiln.data_type.DOUBLE.size == 8
    assert "name='x'" in repr(x)


def test_f16_and_f64_arrays(handle, rng):
    for dt, npdt in [(kiln.data_type.HALF, np.float16), (kiln.data_type.DOUBLE, np.float64)]:
        g = kiln.Graph(io_data_type=dt)
        a = g.tensor(name="a", dim=[5])
        y = g.add(a, a).set_output(True)
        ws = build(g, handle)
        aa = rng.standard_normal(5).astype(npdt)
        ya = np.full(5, np.nan, npdt)
        g.execute({a: aa, y: ya}, ws)
        np.testing.assert_allclose(ya, aa + aa, rtol=1e-3)


def test_lifecycle_step_by_step(handle):
    g = kiln.Graph(io_data_type="f32", handle=handle)
    x = g.tensor(name="x", dim=[2])
    y = g.exp(x).set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([kiln.heur_mode.A, kiln.heur_mode.FALLBACK])
    g.select_behavior_notes([kiln.behavior_note.SUPPORTS_PLAN_SERIALIZATION])
    g.check_support()
    g.build_plans(kiln.build_plan_policy.ALL)
    engines = g.get_plan_engines()
    assert "KILN_CPU_REFERENCE" in engines and g.get_engine_name() == engines[0]
    g.select_plan_by_engine("KILN_CPU_REFERENCE")
    assert g.get_engine_name() == "KILN_CPU_REFERENCE"
    ya = poisoned(2)
    g.execute({x: np.zeros(2, np.float32), y: ya}, workspace_for(g))
    np.testing.assert_array_equal(ya, [1, 1])
    assert g.handle is handle


def test_lifecycle_errors(handle):
    g = kiln.Graph(io_data_type="f32")
    x = g.tensor(name="x", dim=[2])
    g.relu(x).set_output(True)
    with pytest.raises(kiln.NotInitializedError):
        g.build_operation_graph()  # no handle anywhere
    with pytest.raises(kiln.NotInitializedError, match="no plan"):
        g.execute({})
    with pytest.raises(kiln.NotInitializedError):
        g.get_workspace_size()
    g.build_operation_graph(handle)
    g.create_execution_plans([kiln.heur_mode.A])
    g.deselect_engines(g.get_plan_engines() + ["KILN_CPU_POINTWISE_V1", "KILN_CPU_REFERENCE"])
    with pytest.raises(kiln.NotSupportedError, match="filters"):
        g.check_support()
    with pytest.raises(kiln.NotSupportedError):
        kiln.Graph(compute_data_type=kiln.data_type.HALF)


def test_validation_errors_name_the_node_or_tensor(handle):
    g = kiln.Graph(io_data_type="f32")
    a = g.tensor(name="left", dim=[2, 3])
    b = g.tensor(name="right", dim=[4, 5])
    g.add(a, b, name="sum").set_output(True)
    with pytest.raises(kiln.BadParamError, match="node 'sum'"):
        g.build(handle=handle)
    g = kiln.Graph()
    g.tensor(name="untyped", dim=[2])
    with pytest.raises(kiln.BadParamError, match="untyped"):
        g.validate()
