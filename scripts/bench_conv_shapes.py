#!/usr/bin/env python3
"""Times kiln's CPU convolutions against ONNX Runtime on shapes beyond bench_peers.py's four.

The default shapes are the layers real models have that the standard cases do not: depthwise
convolutions (MobileNet, EfficientNet and ConvNeXt shapes: 3x3, 5x5 and 7x7, strides 1 and 2,
planes from 112x112 to 7x7), a dilated 3x3, a 5x5, 1x7 and 7x1 filters, a 7x7 stride-2 stem,
a strided 3x3 without padding, a deep strided 3x3, and grouped 3x3s (4 to 32 channels a
group, ResNeXt's stages). Each case is a graph written to a temporary folder and timed by
`kiln bench GRAPH --json` in its own process (as bench_peers.py keeps
kiln apart from ONNX Runtime's spinning threads), against an ONNX Runtime session of the same
Conv [+ Add + Relu] in this process, both on `--threads` threads and random data. The ratio is
ONNX Runtime's ms / kiln's ms: above 1 means kiln is faster.

    python3 scripts/bench_conv_shapes.py [--repeat 3] [--threads 2] [--kiln BIN]
                                         [--cap-isa avx2|none] [--json-out FILE] [CASE ...]

A CASE is N,C,H,W,K,R,S,stride,pad,groups[,dilation][,f] (`f`: bias + relu fused after the
convolution), e.g. 1,32,112,112,32,3,3,1,1,32 for a depthwise layer. --cap-isa avx2 shows every
process an AVX2 + FMA processor, as bench_peers.py does. Install the peers first:
`python3 -m pip install -r scripts/requirements-bench.txt`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_peers as bp  # noqa: E402

DEFAULT_CASES = [
    # depthwise
    "1,32,112,112,32,3,3,1,1,32",
    "8,32,112,112,32,3,3,1,1,32,f",
    "8,64,56,56,64,3,3,1,1,64,f",
    "1,96,112,112,96,3,3,2,1,96",
    "1,144,56,56,144,3,3,2,1,144",
    "8,128,28,28,128,3,3,2,1,128",
    "1,384,14,14,384,3,3,1,1,384",
    "1,960,7,7,960,3,3,1,1,960",
    "8,256,7,7,256,3,3,1,1,256",
    "8,240,28,28,240,5,5,1,2,240",
    "1,672,14,14,672,5,5,2,2,672",
    "1,128,56,56,128,7,7,1,3,128",
    # other filters and strides
    "8,64,56,56,64,3,3,1,2,1,2",
    "8,64,56,56,64,5,5,1,2,1",
    "8,160,9,13,192,1,7,1,0,1",
    "8,160,13,9,192,7,1,1,0,1",
    "1,3,224,224,64,7,7,2,3,1",
    "8,48,27,27,80,3,3,2,0,1",
    "8,512,14,14,512,3,3,2,1,1,f",
    # grouped: 4 channels a group, then ResNeXt-50 32x4d's four stages (4, 8, 16, 32 a group)
    "8,128,28,28,128,3,3,1,1,32,f",
    "8,128,56,56,128,3,3,1,1,32,f",
    "8,256,28,28,256,3,3,1,1,32,f",
    "8,512,14,14,512,3,3,1,1,32,f",
    "8,1024,7,7,1024,3,3,1,1,32,f",
]


def parse(text: str) -> tuple[list[int], bool]:
    """A CASE as [N, C, H, W, K, R, S, stride, pad, groups, dilation] and whether it is fused."""
    parts = text.split(",")
    fused = parts[-1] == "f"
    values = [int(v) for v in (parts[:-1] if fused else parts)]
    if len(values) == 10:
        values.append(1)
    if len(values) != 11:
        sys.exit(f"bench_conv_shapes: {text!r} is not N,C,H,W,K,R,S,stride,pad,groups[,dil][,f]")
    return values, fused


def output_hw(v: list[int]) -> tuple[int, int]:
    _, _, h, w, _, r, s, stride, pad, _, dil = v
    return ((h + 2 * pad - dil * (r - 1) - 1) // stride + 1,
            (w + 2 * pad - dil * (s - 1) - 1) // stride + 1)


def kiln_graph(v: list[int], fused: bool) -> dict:
    n, c, h, w, k, r, s, stride, pad, groups, dil = v
    oh, ow = output_hw(v)

    def tensor(uid, name, dims, virtual=False):
        strides = [1] * len(dims)
        for i in range(len(dims) - 2, -1, -1):
            strides[i] = strides[i + 1] * dims[i + 1]
        t = {"uid": uid, "name": name, "dims": dims, "strides": strides, "data_type": "f32"}
        if virtual:
            t["is_virtual"] = True
        return t

    conv = {"name": "conv", "op": "conv", "direction": "fprop", "x": 1, "w": 2, "y": 3,
            "params": {"pre_padding": [pad, pad], "post_padding": [pad, pad],
                       "stride": [stride, stride], "dilation": [dil, dil]}}
    tensors = [tensor(1, "x", [n, c, h, w]), tensor(2, "w", [k, c // groups, r, s])]
    y = [n, k, oh, ow]
    if not fused:
        return {"name": "conv", "tensors": tensors + [tensor(3, "y", y)], "nodes": [conv]}
    tensors += [tensor(3, "conv_y", y, True), tensor(4, "bias", [1, k, 1, 1]),
                tensor(5, "biased", y, True), tensor(6, "y", y)]
    return {"name": "conv + bias + relu", "tensors": tensors, "nodes": [
        conv,
        {"name": "bias", "op": "pointwise", "mode": "add", "a": 3, "b": 4, "out": 5},
        {"name": "relu", "op": "pointwise", "mode": "relu", "a": 5, "out": 6},
    ]}


def ort_session(v: list[int], fused: bool, threads: int):
    np = bp.need("numpy")
    from onnx import TensorProto, helper

    n, c, h, w, k, r, s, stride, pad, groups, dil = v
    oh, ow = output_hw(v)
    rng = np.random.default_rng(7)
    weight = rng.uniform(-1, 1, (k, c // groups, r, s)).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, weight.shape, weight.ravel())]
    out = "conv" if fused else "y"
    nodes = [helper.make_node("Conv", ["x", "w"], [out], pads=[pad] * 4, kernel_shape=[r, s],
                              strides=[stride] * 2, dilations=[dil] * 2, group=groups)]
    if fused:
        bias = rng.uniform(-1, 1, (1, k, 1, 1)).astype(np.float32)
        inits.append(helper.make_tensor("b", TensorProto.FLOAT, bias.shape, bias.ravel()))
        nodes += [helper.make_node("Add", ["conv", "b"], ["biased"]),
                  helper.make_node("Relu", ["biased"], ["y"])]
    graph = helper.make_graph(
        nodes, "conv_shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, oh, ow])],
        initializer=inits)
    sess = bp.ort_cpu_session(graph, threads)
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    return lambda: sess.run(None, {"x": x})


def kiln_ms(kiln: list[str], graph: Path, runs: int, threads: int) -> tuple[float, str] | None:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    proc = subprocess.run([*kiln, "bench", str(graph), "--runs", str(runs), "--json"],
                          cwd=bp.REPO, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        print(f"bench_conv_shapes: kiln bench {graph.name} failed:\n{proc.stderr[-2000:]}",
              file=sys.stderr)
        return None
    case = json.loads(proc.stdout[proc.stdout.index("["):])[0]
    return case["median_ms"], case.get("isa", "?")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help="N,C,H,W,K,R,S,stride,pad,groups[,dil][,f]")
    ap.add_argument("--runs", type=int, default=200,
                    help="kiln's timed runs per case (median; `kiln bench` stops at about 3 s)")
    ap.add_argument("--peer-runs", type=int, default=50, help="ONNX Runtime's timed runs")
    ap.add_argument("--threads", type=int, default=2, help="threads of both sides")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure both sides this many times, alternately; keep the best")
    ap.add_argument("--kiln", metavar="BIN",
                    help="a kiln binary (default: cargo run --release -p kiln-cli)")
    ap.add_argument("--cap-isa", choices=["avx2", "none"],
                    help="show every process an AVX2 + FMA processor (see bench_peers.py)")
    ap.add_argument("--json-out", type=Path, help="also write the table as JSON here")
    args = ap.parse_args()
    if args.cap_isa == "avx2":
        bp.cap_isa("avx2", required=True)
    bp.need("numpy")
    bp.need("onnx")
    bp.need("onnxruntime")
    kiln = [args.kiln] if args.kiln else ["cargo", "run", "--quiet", "--release", "-p",
                                          "kiln-cli", "--"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for text in args.cases or DEFAULT_CASES:
            v, fused = parse(text)
            graph = Path(tmp) / "conv.json"
            graph.write_text(json.dumps(kiln_graph(v, fused)))
            peer = ort_session(v, fused, args.threads)
            best_kiln, best_peer, isa = None, None, "?"
            for _ in range(max(1, args.repeat)):
                got = kiln_ms(kiln, graph, args.runs, args.threads)
                if got is not None and (best_kiln is None or got[0] < best_kiln):
                    best_kiln, isa = got
                ms = bp.time_ms(peer, args.peer_runs)
                best_peer = ms if best_peer is None else min(best_peer, ms)
            oh, ow = output_hw(v)
            n, c, _, _, k, r, s, _, _, groups, _ = v
            gflop = 2.0 * n * k * oh * ow * (c // groups) * r * s / 1e9
            ratio = best_peer / best_kiln if best_kiln else None
            rows.append({"case": text, "kiln_ms": best_kiln, "isa": isa,
                         "onnxruntime_ms": best_peer, "ratio": ratio, "gflop": gflop})
            kiln_text = f"{best_kiln:9.4f}" if best_kiln else "        -"
            ratio_text = f"{ratio:5.2f}" if ratio else "    -"
            print(f"{text:>32}  kiln {kiln_text} ms ({isa})  onnxruntime {best_peer:9.4f} ms"
                  f"  ratio {ratio_text}", flush=True)
    capped = bp.cap_answered()
    if args.json_out:
        args.json_out.write_text(json.dumps({
            "threads": args.threads, "repeat": args.repeat,
            "capped_at_avx2": capped is not None, "cases": rows}, indent=1) + "\n")
    if capped is not None:
        print(f"(every process saw an AVX2 processor: the cap answered {capped} cpuid calls here)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
