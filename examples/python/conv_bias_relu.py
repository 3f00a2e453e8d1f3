# %% [markdown]
# # kiln from Python: conv + bias + relu on NumPy arrays
#
# Build a graph, run it on NumPy arrays, save its plan, load it on a fresh handle (no rebuild),
# run it again and compare both results with kiln's reference engine. Run it as a script
# (`python examples/python/conv_bias_relu.py`) or cell by cell in an editor that knows `# %%`.
# It exits non-zero when a result differs.

# %%
import sys

import numpy as np

import kiln

handle = kiln.Handle("cpu")


def conv_bias_relu(modes):
    """The graph y = relu(conv(x, w) + b), built with the heuristics `modes`."""
    g = kiln.Graph(
        io_data_type=kiln.data_type.FLOAT,
        compute_data_type=kiln.data_type.FLOAT,
        name="conv_bias_relu",
        handle=handle,
    )
    x = g.tensor(name="x", dim=[2, 16, 32, 32])
    w = g.tensor(name="w", dim=[32, 16, 3, 3])
    b = g.tensor(name="b", dim=[1, 32, 1, 1])
    conv = g.conv_fprop(x, w, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    y = g.relu(g.add(conv, b))
    y.set_output(True).set_name("y")
    g.build(modes)
    return g


# %% Build with the default heuristics: the optimized CPU engine.
graph = conv_bias_relu([kiln.heur_mode.A])
print("engine:", graph.get_engine_name(), "| workspace bytes:", graph.get_workspace_size())

# %% Run it on NumPy arrays (any array with __dlpack__ works: PyTorch, CuPy, JAX).
rng = np.random.default_rng(0)
inputs = {
    "x": rng.uniform(-1, 1, (2, 16, 32, 32)).astype(np.float32),
    "w": rng.uniform(-1, 1, (32, 16, 3, 3)).astype(np.float32),
    "b": rng.uniform(-1, 1, (1, 32, 1, 1)).astype(np.float32),
}


def run(g):
    y = np.full((2, 32, 32, 32), np.nan, np.float32)  # poisoned: unwritten outputs show
    pack = {g.tensor_by_name(name): array for name, array in inputs.items()}
    pack[g.tensor_by_name("y")] = y
    size = g.get_workspace_size()
    g.execute(pack, np.empty(size, np.uint8) if size else None)
    return y


y = run(graph)

# %% Save the graph with its plan, load it on a fresh handle: nothing is rebuilt, and the
# loaded plan saves again to exactly the same bytes.
saved = graph.serialize()
info = kiln.probe(saved)
print("saved:", info["kind"], info["total_bytes"], "bytes, engine", info["engine"])
loaded = kiln.Graph.deserialize(saved, handle=kiln.Handle("cpu"))
same_bytes = loaded.serialize() == saved
y_loaded = run(loaded)

# The plan alone travels too: attach it to a graph built (or loaded) elsewhere.
plan_only = kiln.Graph.deserialize(graph.serialize())  # graph only without a handle
plan_only.from_compiled_plan_binary(graph.to_compiled_plan_binary(), handle=handle)
y_plan_only = run(plan_only)

# %% Compare with the reference engine (plain loops, f64 accumulation).
reference = conv_bias_relu([kiln.heur_mode.FALLBACK])
assert reference.get_engine_name() == "KILN_CPU_REFERENCE"
y_ref = run(reference)
err = float(np.max(np.abs(y - y_ref)))
print(f"max |optimized - reference| = {err:.2e}")

ok = (
    same_bytes
    and err < 1e-4
    and np.array_equal(y, y_loaded)
    and np.array_equal(y, y_plan_only)
    and not np.isnan(y).any()
)
print("re-save byte-identical:", same_bytes, "| loaded plan matches:", np.array_equal(y, y_loaded))
print("OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
