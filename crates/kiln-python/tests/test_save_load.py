"""Saving and loading graphs and plans from Python: byte-identical re-saves, a plan loaded in a
fresh process, probe, and damaged bytes as BadParamError."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from conftest import poisoned, workspace_for


def conv_bias_relu(handle):
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT, name="cbr")
    x = g.tensor(name="x", dim=[1, 3, 6, 6])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    b = g.tensor(name="b", dim=[1, 4, 1, 1])
    y = g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1]), b)).set_output(True)
    y.set_name("y")
    g.build([kiln.heur_mode.A], handle=handle)
    return g


def arrays(rng):
    return {
        "x": rng.standard_normal((1, 3, 6, 6)).astype(np.float32),
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal((1, 4, 1, 1)).astype(np.float32),
    }


def run(g, inputs):
    y = poisoned((1, 4, 6, 6))
    pack = {g.tensor_by_name(k): v for k, v in inputs.items()}
    pack[g.tensor_by_name("y")] = y
    g.execute(pack, workspace_for(g))
    return y


def test_graph_with_plan_roundtrip(handle, rng):
    g = conv_bias_relu(handle)
    data = arrays(rng)
    want = run(g, data)
    blob = g.serialize()
    assert isinstance(blob, bytes) and g.to_binary() == blob
    info = kiln.probe(blob)
    assert info["kind"] == "graph_and_plan" and info["checksum_ok"]
    assert info["engine"] == g.get_engine_name()
    loaded = kiln.Graph.deserialize(blob, handle=kiln.Handle("cpu"))
    assert isinstance(loaded, kiln.Graph)
    assert loaded.serialize() == blob
    assert loaded.to_compiled_plan_binary() == g.to_compiled_plan_binary()
    np.testing.assert_array_equal(run(loaded, data), want)


def test_graph_only_then_plan(handle, rng):
    g = conv_bias_relu(handle)
    data = arrays(rng)
    want = run(g, data)
    plan = g.serialize_compiled_plan()
    assert kiln.probe(plan)["kind"] == "plan"
    # The graph alone (no handle: the plan is not restored), then the plan attached to it.
    graph_only = kiln.Graph.from_binary(g.serialize())
    with pytest.raises(kiln.NotInitializedError):
        graph_only.get_workspace_size()
    graph_only.from_compiled_plan_binary(plan, handle=kiln.Handle("cpu"))
    assert graph_only.to_compiled_plan_binary() == plan
    np.testing.assert_array_equal(run(graph_only, data), want)


def test_loaders_refuse_the_wrong_kind_and_damage(handle):
    g = conv_bias_relu(handle)
    plan = g.to_compiled_plan_binary()
    with pytest.raises(kiln.BadParamError, match="plan"):
        kiln.Graph.deserialize(plan, handle=handle)
    damaged = bytearray(g.serialize())
    damaged[len(damaged) // 2] ^= 0xFF
    with pytest.raises(kiln.BadParamError):
        kiln.Graph.deserialize(bytes(damaged), handle=handle)
    with pytest.raises(kiln.BadParamError):
        kiln.probe(b"not a kiln blob at all, not even close")
    other = kiln.Graph(io_data_type="f32")
    a = other.tensor(name="a", dim=[2])
    other.relu(a).set_output(True)
    with pytest.raises(kiln.BadParamError, match="another graph"):
        other.deserialize_compiled_plan(plan, handle=handle)


def test_plan_loaded_in_a_new_process(handle, rng, tmp_path):
    g = conv_bias_relu(handle)
    data = arrays(rng)
    want = run(g, data)
    (tmp_path / "graph.kiln").write_bytes(g.serialize())
    np.savez(tmp_path / "inputs.npz", **data)
    script = textwrap.dedent(
        """
        import sys, numpy as np, kiln
        d = sys.argv[1]
        g = kiln.Graph.deserialize(open(d + "/graph.kiln", "rb").read(), handle=kiln.Handle("cpu"))
        inputs = np.load(d + "/inputs.npz")
        y = np.full((1, 4, 6, 6), np.nan, np.float32)
        pack = {g.tensor_by_name(k): inputs[k] for k in ("x", "w", "b")}
        pack[g.tensor_by_name("y")] = y
        n = g.get_workspace_size()
        g.execute(pack, np.empty(n, np.uint8) if n else None)
        np.save(d + "/y.npy", y)
        """
    )
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, env=env)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)
