"""Host overhead of kiln's Python ``Graph.execute`` against a bare C API call.

Both run the same 4-tensor graph (y = a * b + c, f32 [16]) on the same CPU engine; the
difference of their per-call times is what the Python layer adds (the variant pack dict, one
DLPack export and check per array, the GIL released around the call). Needs a release build of
both: ``cargo build --release -p kiln-capi`` and ``KILN_PY_PROFILE=release
scripts/python-tests.sh`` (or ``pip install ./crates/kiln-python``). Run from the repository
root: ``target/py-venv/bin/python crates/kiln-python/benches/execute_overhead.py [--json]``.
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import kiln

ROOT = pathlib.Path(__file__).resolve().parents[3]
N = 16


def c_call(iterations):
    lib = ROOT / "target" / "release"
    if not (lib / "libkiln_capi.so").exists():
        sys.exit("build the C library first: cargo build --release -p kiln-capi")
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "execute_overhead")
        cc = os.environ.get("CC", "cc")
        subprocess.run(
            [cc, "-O2", "-I", str(ROOT / "include"), str(pathlib.Path(__file__).with_suffix(".c")),
             "-L", str(lib), "-lkiln_capi", f"-Wl,-rpath,{lib}", "-o", exe],
            check=True,
        )
        out = subprocess.run([exe, str(iterations)], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)["c_us_per_call"]


def python_call(iterations):
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT, handle=kiln.Handle("cpu"))
    a = g.tensor(name="a", dim=[N])
    b = g.tensor(name="b", dim=[N])
    c = g.tensor(name="c", dim=[N])
    y = g.add(g.mul(a, b), c).set_output(True)
    g.build([kiln.heur_mode.A])
    arrays = [np.arange(N, dtype=np.float32), np.full(N, 2, np.float32), np.ones(N, np.float32)]
    out = np.empty(N, np.float32)
    pack = {a: arrays[0], b: arrays[1], c: arrays[2], y: out}
    for _ in range(iterations // 10):
        g.execute(pack)
    t0 = time.perf_counter()
    for _ in range(iterations):
        g.execute(pack)
    t1 = time.perf_counter()
    assert out[3] == 7.0
    return (t1 - t0) / iterations * 1e6, g.get_engine_name()


def main():
    iterations = 100000
    c_runs, py_runs = [], []
    engine = None
    for _ in range(5):
        c_runs.append(c_call(iterations))
        t, engine = python_call(iterations)
        py_runs.append(t)
    c_us, py_us = statistics.median(c_runs), statistics.median(py_runs)
    report = {
        "engine": engine,
        "tensors": 4,
        "iterations": iterations,
        "c_api_us_per_call": round(c_us, 3),
        "python_us_per_call": round(py_us, 3),
        "python_overhead_us": round(py_us - c_us, 3),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    if "--json" in sys.argv:
        print(json.dumps(report))
    else:
        for k, v in report.items():
            print(f"{k:>20}: {v}")


if __name__ == "__main__":
    main()
