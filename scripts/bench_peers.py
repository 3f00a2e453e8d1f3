#!/usr/bin/env python3
"""Times kiln's CPU engine against its peers on the standard cases and prints the ratios.

Peers: ONNX Runtime's CPU provider (Conv [+ Add + Relu], MatMul, LayerNormalization,
BatchNormalization, MaxPool and AveragePool graphs, opset 17, intra-op threads 2)
for every case, and numpy (matmul through its BLAS) for the matmul cases. kiln's figures come
from `cargo run --release -p kiln-cli -- bench --json`. Each peer case is warmed up, then timed
several times; the median is reported. The ratio is peer_ms / kiln_ms: above 1 means kiln is
faster.

This script installs nothing: `python3 -m pip install -r scripts/requirements-bench.txt` first.

    python3 scripts/bench_peers.py [--runs 15] [--repeat 3] [--json-out FILE] [--skip-kiln]
                                   [--threads 2] [--cap-isa avx2|none]

With --cap-isa avx2 every process of the run (this one with numpy and ONNX Runtime, and kiln's)
sees an AVX2 + FMA processor: `scripts/cpuid-cap.c`, built with the system's C compiler and
preloaded, hides the AVX-512 and AMX feature bits from `cpuid` (Linux's CPUID faulting), so each
side picks its AVX2 kernels by itself, as on an AVX2-only machine. kiln picks its level from
the same probe (the `isa` knob at auto). KILN_CPU_ISA=avx2 (or portable), which forces kiln's
level, turns the cap on by default too, so that the peers run AVX2 beside it; where the cap
cannot work (no C compiler, no `cpuid_fault` in /proc/cpuinfo) the run goes on uncapped and
says so. --cap-isa none measures the peers at the machine's best level instead.

With --repeat R, kiln and the peers are measured R times, alternately, and each keeps its best
median: on a shared machine this keeps a burst of someone else's load from deciding a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# (N, C, H, W, K, R, S, pad, fused bias + relu): the cases of `kiln bench`.
CONV_CASES = [
    (1, 64, 56, 56, 64, 3, 3, 1, False),
    (8, 64, 56, 56, 64, 3, 3, 1, True),
    (8, 256, 14, 14, 256, 3, 3, 1, True),
    (8, 128, 28, 28, 128, 1, 1, 0, True),
]
# (M, N, K)
MATMUL_CASES = [(1024, 1024, 1024), (2048, 2048, 2048)]
# (kiln op, x shape): layernorm over the last dim (ONNX LayerNormalization, axis -1) and
# batchnorm_inference per channel of NCHW (ONNX BatchNormalization, inference mode).
NORM_CASES = [("layernorm", (4096, 1024)), ("batchnorm_inference", (8, 64, 56, 56))]
# (kiln op, x shape): ONNX MaxPool and AveragePool (count_include_pad=0) of NCHW x, 3x3 window,
# stride 2, padding 1.
POOL_CASES = [("maxpool", (8, 64, 112, 112)), ("avgpool", (8, 64, 112, 112))]


def capped() -> bool:
    """Whether this process runs under scripts/cpuid-cap.c."""
    return bool(os.environ.get("KILN_CPUID_CAP")) and "cpuid-cap" in os.environ.get("LD_PRELOAD", "")


def cap_isa(level: str, required: bool) -> None:
    """Re-runs this script with `scripts/cpuid-cap.c` preloaded, capping `cpuid` at `level`;
    returns (and does nothing) in the capped run itself. Where the cap cannot be set up, exits
    when `required`, else returns with a message."""
    if capped():
        return
    why = None
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        flags = ""
    if "cpuid_fault" not in flags.split():
        why = "this processor or kernel has no CPUID faulting (`cpuid_fault` in /proc/cpuinfo)"
    out = REPO / "target" / "cpuid-cap"
    lib = out / "cpuid-cap.so"
    cc = os.environ.get("CC", "cc")
    if why is None:
        out.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib),
                            str(REPO / "scripts" / "cpuid-cap.c")], check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            why = f"the C compiler ({cc}) could not build scripts/cpuid-cap.c: {e}"
    if why is not None:
        if required:
            sys.exit(f"bench_peers: --cap-isa {level}: {why}")
        print(f"bench_peers: the peers are not capped at {level}: {why}", file=sys.stderr)
        return
    env = dict(os.environ, KILN_CPUID_CAP=level, LD_PRELOAD=str(lib))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def cap_answered() -> int | None:
    """How many cpuid instructions of this process the preloaded cap answered (None uncapped)."""
    if not capped():
        return None
    import ctypes
    lib = ctypes.CDLL(os.environ["LD_PRELOAD"])
    lib.kiln_cpuid_cap_answered.restype = ctypes.c_ulong
    return lib.kiln_cpuid_cap_answered()


def need(module: str):
    try:
        return __import__(module)
    except ImportError:
        sys.exit(
            f"bench_peers: the Python package '{module}' is missing; install the peers with\n"
            f"    python3 -m pip install -r {REPO / 'scripts' / 'requirements-bench.txt'}"
        )


def time_ms(fn, runs: int, warmup: int = 2, warmup_s: float = 0.02, budget_s: float = 5.0) -> float:
    """Median wall time of `fn()` in milliseconds, after at least `warmup` calls and `warmup_s`
    seconds of them (what `kiln bench` gives kiln's cases on the CPU)."""
    start = time.perf_counter()
    done = 0
    while done < warmup or time.perf_counter() - start < warmup_s:
        fn()
        done += 1
    times = []
    start = time.perf_counter()
    for i in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
        if i >= 3 and time.perf_counter() - start > budget_s:
            break
    return statistics.median(times)


def conv_flops(case) -> float:
    n, c, h, w, k, r, s, pad, _ = case
    oh, ow = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    return 2.0 * n * k * oh * ow * c * r * s


def ort_cpu_session(graph, threads: int):
    """An ONNX Runtime session of `graph` (opset 17) on its CPU provider: `threads` intra-op
    threads, one inter-op thread, every graph optimization."""
    need("onnx")
    ort = need("onnxruntime")
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, 9)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(
        model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
    )


def ort_conv_session(case, threads: int):
    np = need("numpy")
    onnx = need("onnx")
    need("onnxruntime")
    from onnx import TensorProto, helper

    n, c, h, w, k, r, s, pad, fused = case
    oh, ow = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    rng = np.random.default_rng(7)
    weight = rng.uniform(-1, 1, (k, c, r, s)).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, weight.shape, weight.ravel())]
    conv_out = "conv" if fused else "y"
    nodes = [
        helper.make_node(
            "Conv", ["x", "w"], [conv_out], pads=[pad, pad, pad, pad], kernel_shape=[r, s]
        )
    ]
    if fused:
        bias = rng.uniform(-1, 1, (1, k, 1, 1)).astype(np.float32)
        inits.append(helper.make_tensor("b", TensorProto.FLOAT, bias.shape, bias.ravel()))
        nodes.append(helper.make_node("Add", ["conv", "b"], ["biased"]))
        nodes.append(helper.make_node("Relu", ["biased"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "conv_case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, oh, ow])],
        initializer=inits,
    )
    sess = ort_cpu_session(graph, threads)
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    return lambda: sess.run(None, {"x": x})


def ort_norm_session(case, threads: int):
    np = need("numpy")
    need("onnx")
    need("onnxruntime")
    from onnx import TensorProto, helper

    op, shape = case
    rng = np.random.default_rng(7)
    if op == "layernorm":
        p = rng.uniform(-1, 1, (shape[-1],)).astype(np.float32)
        inits = [helper.make_tensor(n, TensorProto.FLOAT, p.shape, p.ravel()) for n in ("s", "b")]
        node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1,
                                epsilon=1e-5)
    else:
        c = shape[1]
        vals = {"s": rng.uniform(-1, 1, c), "b": rng.uniform(-1, 1, c),
                "m": rng.uniform(-1, 1, c), "v": rng.uniform(0.5, 2, c)}
        inits = [helper.make_tensor(n, TensorProto.FLOAT, (c,), v.astype(np.float32))
                 for n, v in vals.items()]
        node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                epsilon=1e-5)
    graph = helper.make_graph(
        [node], "norm_case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        initializer=inits,
    )
    sess = ort_cpu_session(graph, threads)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    return lambda: sess.run(None, {"x": x})


def ort_pool_session(case, threads: int):
    np = need("numpy")
    need("onnx")
    need("onnxruntime")
    from onnx import TensorProto, helper

    op, shape = case
    n, c, h, w = shape
    out = [n, c, (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1]
    node = helper.make_node("MaxPool" if op == "maxpool" else "AveragePool", ["x"], ["y"],
                            kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "pool_case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
    )
    sess = ort_cpu_session(graph, threads)
    x = np.random.default_rng(7).uniform(-1, 1, shape).astype(np.float32)
    return lambda: sess.run(None, {"x": x})


def ort_matmul_session(case, threads: int):
    np = need("numpy")
    need("onnx")
    ort = need("onnxruntime")
    from onnx import TensorProto, helper

    m, n, k = case
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "matmul_case",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [k, n]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, 9)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(
        model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
    )
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    return lambda: sess.run(None, {"a": a, "b": b})


def numpy_matmul(case):
    np = need("numpy")
    m, n, k = case
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    out = np.empty((m, n), dtype=np.float32)
    return lambda: np.matmul(a, b, out=out)


def run_kiln(runs: int, kiln_bin: str | None = None) -> list[dict] | None:
    """kiln's results from `kiln bench --json`, or None (with a message) when unavailable."""
    if kiln_bin:
        cmd = [kiln_bin, "bench", "--json", "--runs", str(runs)]
    else:
        cmd = ["cargo", "run", "--quiet", "--release", "-p", "kiln-cli", "--", "bench", "--json",
               "--runs", str(runs)]
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        print("bench_peers: cargo is not on PATH; kiln's column is left empty", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print(
            "bench_peers: `kiln bench --json` failed (does this checkout have the bench "
            f"command yet?); kiln's column is left empty.\n{proc.stderr.strip()[-2000:]}",
            file=sys.stderr,
        )
        return None
    try:
        start = proc.stdout.index("[")
        cases = json.loads(proc.stdout[start:])
    except ValueError as e:
        print(f"bench_peers: could not read kiln's JSON ({e}); kiln's column is left empty",
              file=sys.stderr)
        return None
    return cases


def kiln_lookup(kiln: list[dict] | None, op: str, shape: list[int],
                dtype: str = "f32") -> float | None:
    for case in kiln or []:
        if (case.get("op") == op and list(case.get("shape", [])) == shape
                and case.get("dtype", "f32") == dtype):
            return case.get("median_ms")
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="timed runs per case (median)")
    ap.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads")
    ap.add_argument("--json-out", type=Path, help="also write the table as JSON here")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure kiln and the peers this many times, alternately; keep the best")
    ap.add_argument("--skip-kiln", action="store_true", help="time the peers only")
    ap.add_argument("--kiln", metavar="BIN",
                    help="a kiln binary to run (default: cargo run --release -p kiln-cli)")
    ap.add_argument("--cap-isa", choices=["avx2", "none"],
                    help="show every process of the run an AVX2 + FMA processor, or not (see "
                         "above; default: avx2 when KILN_CPU_ISA is avx2 or portable)")
    args = ap.parse_args()
    forced_low = os.environ.get("KILN_CPU_ISA", "").lower() in ("avx2", "portable")
    if args.cap_isa is None and forced_low:
        args.cap_isa = "avx2"
        cap_isa("avx2", required=False)
    elif args.cap_isa == "avx2":
        cap_isa("avx2", required=True)
    if args.cap_isa == "avx2" and not capped():
        args.cap_isa = None

    # Uncapped, a forced kiln level (KILN_CPU_ISA=avx2 or portable) still gets a numpy held to
    # AVX2: OpenBLAS picks its kernels at run time and obeys OPENBLAS_CORETYPE, set before numpy
    # loads. ONNX Runtime (MLAS) has no such switch and keeps the machine's best level.
    if forced_low and not capped():
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
        print(f"bench_peers: KILN_CPU_ISA={os.environ['KILN_CPU_ISA']}: numpy's OpenBLAS runs as "
              f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (AVX2); ONNX Runtime is not "
              "capped and uses the machine's best instruction set", file=sys.stderr)
    need("numpy")
    need("onnx")
    need("onnxruntime")
    # numpy's BLAS gets the same thread count as ONNX Runtime when the caller sets none.
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))

    best: dict[tuple, float] = {}

    def keep(key, ms):
        if ms is not None and (key not in best or ms < best[key]):
            best[key] = ms

    kiln_ran = False
    # The instruction set kiln's plan ran at, per case (`kiln bench` reports it).
    kiln_isa: dict[tuple, str] = {}
    for _ in range(max(1, args.repeat)):
        kiln = None if args.skip_kiln else run_kiln(args.runs, args.kiln)
        kiln_ran = kiln_ran or kiln is not None
        for case in kiln or []:
            if case.get("isa") and case.get("dtype", "f32") == "f32":
                kiln_isa[(case.get("op"), str(list(case.get("shape", []))))] = case["isa"]
        for case in CONV_CASES:
            shape = list(case[:8])
            keep(("kiln", "conv_fprop", str(shape)), kiln_lookup(kiln, "conv_fprop", shape))
            keep(("onnxruntime", "conv_fprop", str(shape)),
                 time_ms(ort_conv_session(case, args.threads), args.runs))
        for case in MATMUL_CASES:
            shape = list(case)
            keep(("kiln", "matmul", str(shape)), kiln_lookup(kiln, "matmul", shape))
            keep(("onnxruntime", "matmul", str(shape)),
                 time_ms(ort_matmul_session(case, args.threads), args.runs))
            keep(("numpy", "matmul", str(shape)), time_ms(numpy_matmul(case), args.runs))
        for case in NORM_CASES:
            op, shape = case[0], list(case[1])
            keep(("kiln", op, str(shape)), kiln_lookup(kiln, op, shape))
            keep(("onnxruntime", op, str(shape)),
                 time_ms(ort_norm_session(case, args.threads), args.runs))
        for case in POOL_CASES:
            op, shape = case[0], list(case[1])
            keep(("kiln", op, str(shape)), kiln_lookup(kiln, op, shape))
            keep(("onnxruntime", op, str(shape)),
                 time_ms(ort_pool_session(case, args.threads), args.runs))

    rows = []
    for case in CONV_CASES:
        shape = list(case[:8])
        rows.append(("conv_fprop", shape, case[8], "onnxruntime",
                     best[("onnxruntime", "conv_fprop", str(shape))],
                     best.get(("kiln", "conv_fprop", str(shape))), conv_flops(case)))
    for case in MATMUL_CASES:
        shape = list(case)
        flops = 2.0 * case[0] * case[1] * case[2]
        for peer in ("onnxruntime", "numpy"):
            rows.append(("matmul", shape, False, peer, best[(peer, "matmul", str(shape))],
                         best.get(("kiln", "matmul", str(shape))), flops))
    for op, shape in NORM_CASES + POOL_CASES:
        shape = list(shape)
        # No flops: the GF/s columns read 0; memory-bound, compare the times.
        rows.append((op, shape, False, "onnxruntime", best[("onnxruntime", op, str(shape))],
                     best.get(("kiln", op, str(shape))), 0.0))
    if not kiln_ran and not args.skip_kiln:
        print("bench_peers: no kiln figures (see above); the table shows the peers only",
              file=sys.stderr)

    header = f"{'op':11} {'shape':32} {'fused':5} {'peer':12} {'peer ms':>9} {'GF/s':>7} " \
             f"{'kiln ms':>9} {'GF/s':>7} {'peer/kiln':>9} kiln isa"
    print(header)
    print("-" * len(header))
    out = []
    for op, shape, fused, peer, p_ms, k_ms, flops in rows:
        ratio = p_ms / k_ms if k_ms else None
        k_txt = f"{k_ms:9.2f} {flops / k_ms / 1e6:7.1f}" if k_ms else f"{'-':>9} {'-':>7}"
        r_txt = f"{ratio:9.2f}" if ratio else f"{'-':>9}"
        print(f"{op:11} {str(shape):32} {str(fused):5} {peer:12} {p_ms:9.2f} "
              f"{flops / p_ms / 1e6:7.1f} {k_txt} {r_txt} {kiln_isa.get((op, str(shape)), '-')}")
        out.append({
            "cap_isa": args.cap_isa,
            "op": op, "shape": shape, "dtype": "f32", "fused": fused, "peer": peer,
            "peer_ms": p_ms, "peer_gflops": flops / p_ms / 1e6,
            "kiln_ms": k_ms, "kiln_gflops": flops / k_ms / 1e6 if k_ms else None,
            "ratio_peer_over_kiln": ratio,
            "kiln_isa": kiln_isa.get((op, str(shape))),
        })
    answered = cap_answered()
    if answered is not None:
        print(f"cpuid capped at {args.cap_isa}: {answered} cpuid instructions of the peers' "
              "process answered by scripts/cpuid-cap.c (kiln's column names the level it picked)")
        if answered == 0:
            print("bench_peers: the cap answered no cpuid of the peers: their figures are not "
                  "capped", file=sys.stderr)
            return 1
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
