#!/usr/bin/env python3
"""kiln's CPU normalizations against ONNX Runtime in one Python process, interleaved.

On a shared machine a separate process per side measures whoever else is loading the machine at
that moment; here kiln (through its Python package, the same `KILN_CPU_NORM_V1` plans as the
CLI) and ONNX Runtime (CPU provider, opset 17, `--threads` intra-op threads, kiln's rayon pool
set to the same count through RAYON_NUM_THREADS) run alternately in one process: each round
times `--runs` calls of kiln, then of the peer (or the other way round, alternating), and keeps
the median; the report gives each side's best median over `--rounds` rounds, the ratio of the
bests (peer / kiln: above 1 means kiln is faster), the spread of the per-round ratios and the
load average before and after.

Cases: layernorm over the last dim (ONNX LayerNormalization, axis -1), rmsnorm (ONNX 23's
RMSNormalization where the installed ONNX Runtime has it, else the same as a
SimplifiedLayerNormalization contrib node), batchnorm_inference per channel of NCHW (ONNX
BatchNormalization, inference mode). Outputs of both sides are compared before timing.

    RAYON_NUM_THREADS=2 PYTHONPATH=<dir with the kiln package> python3 \
        scripts/bench_norms_inprocess.py [--runs 20] [--rounds 5] [--threads 2] [--json]

The kiln package without maturin: `cargo build --release -p kiln-python`, then a folder `kiln/`
holding crates/kiln-python/python/kiln/*.py and target/release/lib_kiln.so renamed
`_kiln.abi3.so`; PYTHONPATH names the folder above it. NumPy, onnx and onnxruntime come from
scripts/requirements-bench.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import kiln

CASES = [
    ("layernorm", (4096, 1024)),
    ("rmsnorm", (4096, 1024)),
    ("layernorm", (16384, 4096)),
    ("batchnorm_inference", (8, 64, 56, 56)),
]


def session(nodes, inits, shape, threads, domains=(("", 17),)):
    graph = helper.make_graph(
        nodes,
        "norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        initializer=inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in domains]
    )
    model.ir_version = min(model.ir_version, 9)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def init(name, a):
    return helper.make_tensor(name, TensorProto.FLOAT, a.shape, a.ravel())


def peer(op, shape, params, threads):
    """An ONNX Runtime callable for the case, and the name of the ONNX node it runs."""
    if op == "layernorm":
        s, b = params
        node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1, epsilon=1e-5)
        sess = session([node], [init("s", s), init("b", b)], shape, threads)
        return sess, "LayerNormalization"
    if op == "rmsnorm":
        (s,) = params
        try:
            node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=-1, epsilon=1e-5)
            sess = session([node], [init("s", s)], shape, threads, (("", 23),))
            return sess, "RMSNormalization"
        except Exception:  # an ONNX Runtime without opset 23
            node = helper.make_node(
                "SimplifiedLayerNormalization", ["x", "s"], ["y"], axis=-1, epsilon=1e-5,
            )
            sess = session([node], [init("s", s)], shape, threads)
            return sess, "SimplifiedLayerNormalization"
    s, b, m, v = params
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-5)
    inits = [init(n, a) for n, a in zip("sbmv", (s, b, m, v))]
    return session([node], inits, shape, threads), "BatchNormalization"


def kiln_case(op, shape, params, handle):
    """A built kiln graph for the case and its variant pack (x, parameters, y)."""
    g = kiln.Graph(io_data_type="f32", handle=handle)
    x = g.tensor(name="x", dim=list(shape))
    if op in ("layernorm", "rmsnorm"):
        pdims = [1] + list(shape[1:])
        s = g.tensor(name="s", dim=pdims)
        if op == "layernorm":
            b = g.tensor(name="b", dim=pdims)
            y, _, _ = g.layernorm(x, s, b, epsilon=1e-5)
            tensors = [s, b]
        else:
            y, _ = g.rmsnorm(x, s, epsilon=1e-5)
            tensors = [s]
        arrays = [p.reshape(pdims) for p in params]
    else:
        c = shape[1]
        pdims = [1, c, 1, 1]
        s, b, m, iv = (g.tensor(name=n, dim=pdims) for n in ("s", "b", "m", "iv"))
        y = g.batchnorm_inference(x, m, iv, s, b)
        tensors = [s, b, m, iv]
        sa, ba, ma, va = params
        arrays = [a.reshape(pdims) for a in (sa, ba, ma, (1 / np.sqrt(va + 1e-5)).astype(np.float32))]
    y.set_output(True)
    g.build([kiln.heur_mode.A])
    return g, x, y, dict(zip(tensors, arrays))


def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    handle = kiln.Handle("cpu")
    rng = np.random.default_rng(7)
    rows = []
    for op, shape in CASES:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        if op == "layernorm":
            params = [rng.uniform(-1, 1, (shape[-1],)).astype(np.float32) for _ in range(2)]
        elif op == "rmsnorm":
            params = [rng.uniform(-1, 1, (shape[-1],)).astype(np.float32)]
        else:
            c = shape[1]
            params = [rng.uniform(-1, 1, c).astype(np.float32) for _ in range(3)]
            params.append(rng.uniform(0.5, 2, c).astype(np.float32))
        sess, peer_node = peer(op, shape, params, args.threads)
        g, xt, yt, pack = kiln_case(op, shape, params, handle)
        y = np.empty_like(x)
        pack = {**pack, xt: x, yt: y}
        n = g.get_workspace_size()
        ws = np.empty(n, np.uint8) if n else None

        def run_kiln():
            g.execute(pack, ws)

        def run_peer():
            sess.run(None, {"x": x})

        run_kiln()
        want = sess.run(None, {"x": x})[0]
        err = float(np.max(np.abs(y - want)))
        for _ in range(3):
            run_kiln()
            run_peer()
        load0 = os.getloadavg()[0]
        kiln_ms, peer_ms = [], []
        for r in range(args.rounds):
            order = (run_kiln, run_peer) if r % 2 == 0 else (run_peer, run_kiln)
            got = {f: median_ms(f, args.runs) for f in order}
            kiln_ms.append(got[run_kiln])
            peer_ms.append(got[run_peer])
        load1 = os.getloadavg()[0]
        ratios = [p / k for p, k in zip(peer_ms, kiln_ms)]
        row = {
            "case": f"{op} f32 {list(shape)}",
            "engine": g.get_engine_name(),
            "peer": f"ONNX Runtime {ort.__version__} {peer_node}",
            "kiln_best_ms": round(min(kiln_ms), 3),
            "peer_best_ms": round(min(peer_ms), 3),
            "ratio_of_bests": round(min(peer_ms) / min(kiln_ms), 3),
            "round_ratios": [round(v, 3) for v in ratios],
            "max_abs_diff": err,
            "load_average": [round(load0, 2), round(load1, 2)],
        }
        rows.append(row)
        if not args.json:
            print(
                f"{row['case']:<40} kiln {row['kiln_best_ms']:8.3f} ms  peer {row['peer_best_ms']:8.3f} ms"
                f"  ratio {row['ratio_of_bests']:.3f}  rounds {row['round_ratios']}"
                f"  |diff| {err:.2e}  load {row['load_average']}  ({row['engine']}, {row['peer']})",
                flush=True,
            )
    if args.json:
        print(json.dumps({"threads": args.threads, "runs": args.runs, "rounds": args.rounds, "cases": rows}, indent=1))


if __name__ == "__main__":
    main()
