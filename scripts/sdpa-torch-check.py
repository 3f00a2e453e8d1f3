#!/usr/bin/env python3
"""Checks kiln's attention on the GPU against torch.nn.functional.scaled_dot_product_attention.

For each case it writes an sdpa (or sdpa_backward) graph in B,S,H,D layout, random inputs as
`kiln run --inputs` files (logical row-major, the tensor's data type), runs
`kiln run GRAPH --device cuda:0 --inputs IN --outputs OUT --json` (the CUDA provider builds the
plan with NVRTC), and compares every output with PyTorch: the forward with
F.scaled_dot_product_attention (GQA by repeating k and v per group, causal masks as boolean
masks), the backward with autograd through the same call, stats with torch.logsumexp of the
masked scores in f32. Prints one JSON line per output; exit
status 0 only when every output is within tolerance.

    python3 scripts/sdpa-torch-check.py [path/to/kiln] [work dir]

Run by scripts/gpu-cli-check.sh on the GPU machine (.gpu/kiln, results in $OUT).
"""
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

KILN = sys.argv[1] if len(sys.argv) > 1 else ".gpu/kiln"
WORK = sys.argv[2] if len(sys.argv) > 2 else "/tmp/kiln-sdpa-torch"
TOL = {"f16": 1e-2, "bf16": 3e-2}
TORCH_TYPE = {"f16": torch.float16, "bf16": torch.bfloat16}

# (name, dtype, batch, heads_q, heads_kv, seq_q, seq_kv, head dim, mask, backward)
CASES = [
    ("fwd f16 gqa causal", "f16", 2, 8, 2, 1000, 1000, 64, "top_left", False),
    ("fwd bf16 d128", "bf16", 2, 4, 4, 777, 1025, 128, None, False),
    ("fwd f16 d256 mqa bottom-right", "f16", 1, 4, 1, 300, 513, 256, "bottom_right", False),
    ("bwd bf16 gqa causal", "bf16", 2, 8, 2, 512, 512, 64, "top_left", True),
    ("bwd f16 d128 bottom-right", "f16", 1, 4, 2, 257, 400, 128, "bottom_right", True),
]


def bshd(uid, name, b, h, s, d, dt):
    return {"uid": uid, "name": name, "dims": [b, h, s, d], "strides": [s * h * d, d, h * d, 1],
            "data_type": dt}


def packed(uid, name, dims, dt):
    strides, run = [], 1
    for d in reversed(dims):
        strides.insert(0, run)
        run *= d
    return {"uid": uid, "name": name, "dims": dims, "strides": strides, "data_type": dt}


def attributes(scale, mask):
    a = {"attn_scale": {"float": scale}}
    if mask:
        a["diagonal_alignment"] = {"str": mask}
        a["diagonal_band_right_bound"] = {"int": 0}
    return a


def torch_mask(mask, sq, skv):
    """The boolean mask (True keeps) of kiln's causal masks, written from their definition."""
    if mask is None:
        return None
    shift = 0 if mask == "top_left" else skv - sq
    i = torch.arange(sq, device="cuda").view(-1, 1)
    j = torch.arange(skv, device="cuda").view(1, -1)
    return j <= i + shift


def write(path, t):
    t.detach().contiguous().cpu().view(torch.uint8).numpy().tofile(path)


def read(path, dt, shape):
    return torch.from_file(path, size=math.prod(shape), dtype=TORCH_TYPE[dt]).view(shape).float()


def run_case(name, dt, b, hq, hkv, sq, skv, d, mask, backward):
    folder = os.path.join(WORK, name.replace(" ", "_"))
    inputs, outputs = os.path.join(folder, "in"), os.path.join(folder, "out")
    os.makedirs(inputs, exist_ok=True)
    os.makedirs(outputs, exist_ok=True)
    torch.manual_seed(hash(name) % (1 << 31))
    ty, scale = TORCH_TYPE[dt], 1.0 / math.sqrt(d)
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=ty, requires_grad=backward)
    k = torch.randn(b, hkv, skv, d, device="cuda", dtype=ty, requires_grad=backward)
    v = torch.randn(b, hkv, skv, d, device="cuda", dtype=ty, requires_grad=backward)
    m = torch_mask(mask, sq, skv)
    # GQA as its definition: query head h reads key/value head h // (hq // hkv); autograd sums
    # dk and dv over each group through repeat_interleave.
    group = hq // hkv
    kx, vx = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    o = F.scaled_dot_product_attention(q, kx, vx, attn_mask=m, scale=scale)
    tensors = [bshd(1, "q", b, hq, sq, d, dt), bshd(2, "k", b, hkv, skv, d, dt),
               bshd(3, "v", b, hkv, skv, d, dt)]
    for n, t in [("q", q), ("k", k), ("v", v)]:
        write(os.path.join(inputs, n + ".bin"), t)
    want = {}
    if not backward:
        tensors.append(bshd(4, "o", b, hq, sq, d, dt))
        node = {"name": "attention", "op": "sdpa", "inputs": {"q": 1, "k": 2, "v": 3},
                "outputs": {"o": 4}, "attributes": attributes(scale, mask)}
        want["o"] = o.float()
    else:
        d_o = torch.randn_like(o)
        o.backward(d_o)
        # stats: the log-sum-exp of each row of masked scores, in f32.
        s = scale * q.float() @ kx.float().transpose(-1, -2)
        if m is not None:
            s = s.masked_fill(~m, float("-inf"))
        stats = torch.logsumexp(s, dim=-1, keepdim=True)
        tensors += [bshd(4, "o", b, hq, sq, d, dt), bshd(5, "do", b, hq, sq, d, dt),
                    packed(6, "stats", [b, hq, sq, 1], "f32"), bshd(7, "dq", b, hq, sq, d, dt),
                    bshd(8, "dk", b, hkv, skv, d, dt), bshd(9, "dv", b, hkv, skv, d, dt)]
        write(os.path.join(inputs, "o.bin"), o)
        write(os.path.join(inputs, "do.bin"), d_o)
        write(os.path.join(inputs, "stats.bin"), stats)
        node = {"name": "attention_backward", "op": "sdpa_backward",
                "inputs": {"q": 1, "k": 2, "v": 3, "o": 4, "do": 5, "stats": 6},
                "outputs": {"dq": 7, "dk": 8, "dv": 9}, "attributes": attributes(scale, mask)}
        want = {"dq": q.grad.float(), "dk": k.grad.float(), "dv": v.grad.float()}
    graph = {"name": name, "tensors": tensors, "nodes": [node]}
    graph_path = os.path.join(folder, "graph.json")
    with open(graph_path, "w") as f:
        json.dump(graph, f)
    r = subprocess.run([KILN, "run", graph_path, "--device", "cuda:0", "--inputs", inputs,
                        "--outputs", outputs, "--json"], capture_output=True, text=True)
    ok = True
    report = {"case": name, "kiln_rc": r.returncode}
    if r.returncode != 0:
        report["stderr"] = r.stderr[-2000:]
        print(json.dumps(report), flush=True)
        return False
    try:
        report["engine"] = json.loads(r.stdout).get("engine")
    except ValueError:
        pass
    for n, ref in want.items():
        got = read(os.path.join(outputs, n + ".bin"), dt, list(ref.shape)).cuda()
        err = (got - ref).abs().max().item()
        scale_ref = ref.abs().max().item()
        rel = err / max(scale_ref, 1e-6)
        passed = rel <= TOL[dt] and not math.isnan(err)
        ok &= passed
        print(json.dumps({**report, "output": n, "max_abs_err": err, "max_abs_ref": scale_ref,
                          "rel_err": rel, "tolerance": TOL[dt], "ok": passed}), flush=True)
    return ok


def main():
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}),
          flush=True)
    results = [run_case(*c) for c in CASES]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
