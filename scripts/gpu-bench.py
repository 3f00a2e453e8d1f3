#!/usr/bin/env python3
"""PyTorch peers of the CUDA provider's benchmarks (cuDNN / cuBLAS), printed as JSON lines in
the same shape as the kiln bench (engines/kiln-engine-cuda/benches/h200.rs)."""
import json
import sys
import time
import torch

# --sdpa-only: the attention forward peers alone (short GPU calls while tuning kiln's kernels).
SDPA_ONLY = "--sdpa-only" in sys.argv
# --gemm-only: the matmul and convolution fprop peers alone (the Hopper GEMM's cases).
GEMM_ONLY = "--gemm-only" in sys.argv

def timed(fn, iters=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / iters

def emit(case, ms, flops=0.0, nbytes=0.0):
    print(json.dumps({"case": case, "ms": round(ms, 5), "tflops": round(flops / ms / 1e9, 2), "tbps": round(nbytes / ms / 1e9, 3)}), flush=True)

def copy_peer(case, nbytes):
    """A device copy moving `nbytes` (read + written), as "<case> torch-copy": the bandwidth a
    memory-bound kernel of that size can reach (launch and ramp included), beside the large
    copy's ceiling."""
    n = max(1, int(nbytes // 4))
    a = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    emit(f"{case} torch-copy", timed(lambda: b.copy_(a)), nbytes=4.0 * n)
    del a, b

def norm_peers():
    """Peers of kiln's normalization cases (benches/h200.rs norm_benches): eager PyTorch,
    torch.compile of the same function, and a device-to-device copy for the bandwidth ceiling.
    Case names are kiln's without the engine, plus " torch-eager" / " torch-compile"."""
    import torch.nn.functional as F
    n = 1 << 29
    a = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    emit("copy d2d bf16 2^29", timed(lambda: b.copy_(a)), nbytes=4.0 * n)
    del a, b
    nb, c, hw = 32, 256, 56
    x = torch.randn(nb, c, hw, hw, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w, bias = torch.randn(c, device="cuda"), torch.randn(c, device="cuda")
    rm, rv = torch.randn(c, device="cuda"), torch.rand(c, device="cuda") + 0.5
    elems = x.numel()
    with torch.no_grad():
        for training, what in [(False, "inference"), (True, "training")]:
            case = f"batchnorm {what} bf16 NHWC N{nb} C{c} H{hw} W{hw}"
            f = lambda: F.batch_norm(x, rm, rv, w, bias, training=training, momentum=0.1, eps=1e-5)
            emit(case + " torch-eager", timed(f), nbytes=4.0 * elems)
            copy_peer(case, 4.0 * elems)
            try:
                fc = torch.compile(lambda x: F.batch_norm(x, rm, rv, w, bias, training=training, momentum=0.1, eps=1e-5), dynamic=False)
                emit(case + " torch-compile", timed(lambda: fc(x)), nbytes=4.0 * elems)
            except Exception as e:
                print(json.dumps({"case": case + " torch-compile", "error": str(e)[:200]}), flush=True)
    del x
    if "--batchnorm" in sys.argv:
        return
    compiled = {(16384, 4096), (65536, 1024)}
    for (rows, hidden) in [(4096, 1024), (16384, 4096), (65536, 1024), (8192, 8192)]:
        x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn_like(x)
        w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
        fwd = {
            "layernorm": lambda x, w, bias: F.layer_norm(x, (hidden,), w, bias, 1e-5),
            "rmsnorm": lambda x, w, bias: F.rms_norm(x, (hidden,), w, 1e-5),
        }
        elems = rows * hidden
        for op, f in fwd.items():
            case = f"{op} fwd bf16 R{rows} H{hidden}"
            with torch.no_grad():
                emit(case + " torch-eager", timed(lambda: f(x, w, bias)), nbytes=4.0 * elems)
                copy_peer(case, 4.0 * elems)
                if (rows, hidden) in compiled:
                    try:
                        fc = torch.compile(f, dynamic=False)
                        emit(case + " torch-compile", timed(lambda: fc(x, w, bias)), nbytes=4.0 * elems)
                    except Exception as e:
                        print(json.dumps({"case": case + " torch-compile", "error": str(e)[:200]}), flush=True)
            xg, wg, bg = (t.detach().clone().requires_grad_() for t in (x, w, bias))
            y = f(xg, wg, bg)
            inputs = (xg, wg, bg) if op == "layernorm" else (xg, wg)
            emit(f"{op} bwd bf16 R{rows} H{hidden} torch-eager",
                 timed(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True)), nbytes=6.0 * elems)
            copy_peer(f"{op} bwd bf16 R{rows} H{hidden}", 6.0 * elems)
            del xg, wg, bg, y
        del x, dy, w, bias

def pooling_peers():
    """Peers of kiln's pooling cases (benches/h200.rs pooling_benches): bf16 channels_last
    x [32, 64, 112, 112], window 3, stride 2, padding 1; max pooling with its indices and its
    backward through autograd, average (padding excluded) backward. Bytes as kiln counts them."""
    import torch.nn.functional as F
    x = torch.randn(32, 64, 112, 112, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    nx, ny = x.numel(), x.numel() / 4
    name = "bf16 NHWC N32 C64 H112 3x3 s2 torch-eager"
    with torch.no_grad():
        emit(f"maxpool fwd {name}", timed(lambda: F.max_pool2d(x, 3, 2, 1, return_indices=True)), nbytes=2.0 * nx + 3.0 * ny)
    base = "bf16 NHWC N32 C64 H112 3x3 s2"
    copy_peer(f"maxpool fwd {base}", 2.0 * nx + 3.0 * ny)
    copy_peer(f"avgpool bwd {base}", 2.0 * (nx + ny))
    copy_peer(f"maxpool bwd index {base}", 2.0 * nx + 3.0 * ny)
    # The average backward's own traffic (a quarter read, all of dx written): each dy value
    # copied to its 2x2 block of dx (a nearest 2x upsample), the floor of that byte pattern.
    small = torch.randn(32, 56, 56, 64, device="cuda", dtype=torch.bfloat16)
    big = torch.empty(32, 56, 2, 56, 2, 64, device="cuda", dtype=torch.bfloat16)
    spread = small.view(32, 56, 1, 56, 1, 64).expand(32, 56, 2, 56, 2, 64)
    emit(f"avgpool bwd {base} torch-upsample", timed(lambda: big.copy_(spread)), nbytes=2.0 * (nx + ny))
    del small, big, spread
    xg = x.detach().clone().requires_grad_()
    y = F.avg_pool2d(xg, 3, 2, 1, count_include_pad=False)
    dy = torch.randn_like(y)
    emit(f"avgpool bwd {name}", timed(lambda: torch.autograd.grad(y, xg, dy, retain_graph=True)), nbytes=2.0 * (nx + ny))
    y = F.max_pool2d(xg, 3, 2, 1)
    emit(f"maxpool bwd index {name}", timed(lambda: torch.autograd.grad(y, xg, dy, retain_graph=True)), nbytes=2.0 * nx + 3.0 * ny)
    del x, xg, y, dy

torch.backends.cudnn.benchmark = True
print(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name()}), flush=True)
def sdpa_backward_peers():
    """Peers of kiln's attention backward cases (benches/h200.rs attention_backward_cases):
    PyTorch's flash and cuDNN backends through autograd (the backward alone, the forward's graph
    kept), bf16, B,S,H,D storage; GQA (32 over 8 heads); a ragged batch as a nested (jagged)
    tensor. Case names are kiln's with " torch-flash" / " torch-cudnn" for the engine."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import os
    only = [tuple(int(x) for x in c.split(":")) for c in os.environ.get("KILN_BENCH_SDPA_CASES", "").split(",") if ":" in c]
    backends = [(SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.CUDNN_ATTENTION, "cudnn")]
    def run(case, make, flops, **kw):
        for backend, label in backends:
            try:
                q, k, v = make()
                with sdpa_kernel(backend):
                    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
                    do = torch.randn_like(o)
                    bwd = lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
                    emit(f"{case} torch-{label}", timed(bwd), flops=flops)
                del q, k, v, o, do
            except Exception as e:
                print(json.dumps({"case": f"{case} torch-{label}", "error": str(e)[:200]}), flush=True)
    bshd = lambda b, s, h, d: torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_()
    for (s, d) in [(1024, 64), (1024, 128), (4096, 64), (4096, 128), (16384, 64), (16384, 128)]:
        if only and (s, d) not in only:
            continue
        for causal in [False, True]:
            flops = 2.5 * 4.0 * 4 * 16 * s * s * d * (0.5 if causal else 1.0)
            run(f"sdpa bwd bf16 B4 H16 S{s} D{d} causal={str(causal).lower()}", lambda: tuple(bshd(4, s, 16, d) for _ in range(3)), flops, is_causal=causal)
    for causal in [False, True]:
        flops = 2.5 * 4.0 * 4 * 32 * 4096 * 4096 * 128 * (0.5 if causal else 1.0)
        run(f"sdpa bwd bf16 B4 Hq32 Hkv8 S4096 D128 causal={str(causal).lower()}", lambda: (bshd(4, 4096, 32, 128), bshd(4, 4096, 8, 128), bshd(4, 4096, 8, 128)), flops, is_causal=causal, enable_gqa=True)
    ragged_peers(backward=True)

def ragged_peers(backward):
    """Peers of kiln's ragged attention (one plan over seq_len tensors, lengths 4096, 3072,
    2048, 1024, H16 D128, bf16): the variable-length kernels PyTorch's nested tensors reach,
    called directly on packed tokens and cumulative lengths, so that no nested-tensor layout
    work is timed. flash: aten._flash_attention_forward / _backward (FlashAttention-2 varlen);
    cudnn: one dense cuDNN call per sequence (its graph cached); cudnn-varlen:
    aten._cudnn_attention_forward / _backward with cum_seq (cuDNN's ragged offsets, a graph
    built per call).
    A peer that this PyTorch cannot call prints its error and the op's schema."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    lens = [4096, 3072, 2048, 1024]
    total, top = sum(lens), max(lens)
    offs = [0] + [sum(lens[: i + 1]) for i in range(len(lens))]
    cum = torch.tensor(offs, device="cuda", dtype=torch.int32)
    q, k, v = (torch.randn(total, 16, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    do = torch.randn_like(q)
    aten = torch.ops.aten
    for causal in [False, True]:
        flops = sum(4.0 * 16 * l * l * 128 * (0.5 if causal else 1.0) for l in lens) * (2.5 if backward else 1.0)
        case = f"sdpa {'bwd' if backward else 'fwd'} bf16 ragged 4096,3072,2048,1024 H16 D128 causal={str(causal).lower()}"
        def flash():
            fwd = lambda: aten._flash_attention_forward(q, k, v, cum, cum, top, top, 0.0, causal, False)
            if not backward:
                return fwd
            o, lse, rng, unused, _ = fwd()
            return lambda: aten._flash_attention_backward(do, q, k, v, o, lse, cum, cum, top, top, 0.0, causal, rng, unused)
        def cudnn_varlen():
            fwd = lambda: aten._cudnn_attention_forward(q, k, v, None, cum, cum, top, top, backward, 0.0, causal, False)
            if not backward:
                return fwd
            o, lse, _, _, _, _, seed, offset, _ = fwd()
            return lambda: aten._cudnn_attention_backward(do, q, k, v, o, lse, seed, offset, None, cum, cum, top, top, 0.0, causal)
        def cudnn_each():
            # One dense cuDNN call per sequence (B1), its graph cached: the cuDNN kernels' own
            # time for this batch. The varlen op above builds a cuDNN graph per call (~50 ms on
            # the H200, 2026-12-01), which says nothing of its kernels.
            views = [tuple(t[offs[i]:offs[i + 1]].unsqueeze(0).transpose(1, 2).detach().requires_grad_(backward) for t in (q, k, v)) for i in range(len(lens))]
            sdpa = torch.nn.functional.scaled_dot_product_attention
            if not backward:
                return lambda: [sdpa(*t, is_causal=causal) for t in views]
            outs = [sdpa(*t, is_causal=causal) for t in views]
            grads = [torch.randn_like(o) for o in outs]
            return lambda: [torch.autograd.grad(o, t, g, retain_graph=True) for o, t, g in zip(outs, views, grads)]
        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                fn = cudnn_each()
            def run():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return fn()
            return run
        for label, make, op in [("flash", flash, "_flash_attention"), ("cudnn", cudnn, "_cudnn_attention"), ("cudnn-varlen", cudnn_varlen, "_cudnn_attention")]:
            try:
                emit(f"{case} torch-{label}", timed(make()), flops=flops)
            except Exception as e:
                schema = [str(getattr(aten, op + part).default._schema) for part in ("_forward", "_backward") if hasattr(aten, op + part)]
                print(json.dumps({"case": f"{case} torch-{label}", "error": str(e)[:300], "schema": schema}), flush=True)
    del q, k, v, do

if "--sdpa-bwd-only" in sys.argv:
    sdpa_backward_peers()
    sys.exit(0)
if "--norms" in sys.argv:
    norm_peers()
    sys.exit(0)
if "--pooling" in sys.argv:
    pooling_peers()
    sys.exit(0)
if not SDPA_ONLY and not GEMM_ONLY:
    # Convolution gradient peers (cuDNN through aten.convolution_backward, channels_last, f16 and
    # bf16): the data gradient alone, then the weight gradient alone; names and FLOPs as the kiln
    # bench's.
    for dt, name in [(torch.bfloat16, "bf16"), (torch.float16, "f16")]:
        for (nb, c, hw, k, r, stride) in [(32, 64, 56, 64, 3, 1), (32, 256, 14, 256, 3, 1), (32, 128, 28, 128, 1, 1), (32, 128, 56, 128, 3, 2), (64, 512, 7, 512, 3, 1)]:
            pad = r // 2
            out = (hw + 2 * pad - r) // stride + 1
            xi = torch.randn(nb, c, hw, hw, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
            w = torch.randn(k, c, r, r, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
            dy = torch.randn(nb, k, out, out, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
            flops = 2.0 * nb * k * out * out * c * r * r
            for what, mask in [("conv_dgrad", [True, False, False]), ("conv_wgrad", [False, True, False])]:
                f = lambda: torch.ops.aten.convolution_backward(dy, xi, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, mask)
                emit(f"{what} {name} N{nb} C{c} H{hw} K{k} R{r} s{stride}", timed(f), flops=flops)
            del xi, w, dy
if "--conv-grad-only" in sys.argv:
    sys.exit(0)
if not SDPA_ONLY:
    if not GEMM_ONLY:
        n = 1 << 28
        x, z = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        y = torch.empty_like(x)
        emit("pointwise Add 2^28 f32", timed(lambda: torch.add(x, z, out=y)), nbytes=12.0 * n)
        emit("pointwise Relu 2^28 f32", timed(lambda: torch.relu(x, out=y) if False else torch.clamp_min(x, 0, out=y)), nbytes=8.0 * n)
        del x, z, y
    for dt, name in [(torch.float16, "f16"), (torch.bfloat16, "bf16")]:
        for (nb, c, hw, k, r, stride) in [(32, 64, 56, 64, 3, 1), (32, 256, 14, 256, 3, 1), (32, 128, 28, 128, 1, 1), (32, 128, 56, 128, 3, 2), (64, 512, 7, 512, 3, 1)]:
            pad = r // 2
            xi = torch.randn(nb, c, hw, hw, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
            w = torch.randn(k, c, r, r, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
            b = torch.randn(k, device="cuda", dtype=dt)
            out = (hw + 2 * pad - r) // stride + 1
            flops = 2.0 * nb * k * out * out * c * r * r
            for fused in [False, True]:
                if fused:
                    f = lambda: torch.relu(torch.nn.functional.conv2d(xi, w, b, stride=stride, padding=pad))
                else:
                    f = lambda: torch.nn.functional.conv2d(xi, w, None, stride=stride, padding=pad)
                emit(f"conv {name} N{nb} C{c} H{hw} K{k} R{r} s{stride} bias_relu={str(fused).lower()}", timed(f), flops=flops)
            del xi, w, b
    for dt, name in [(torch.bfloat16, "bf16"), (torch.float16, "f16")]:
        for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 1024, 4096), (16384, 4096, 1024)]:
            a = torch.randn(m, k, device="cuda", dtype=dt)
            bm = torch.randn(k, n, device="cuda", dtype=dt)
            emit(f"matmul {name} {m}x{n}x{k}", timed(lambda: torch.matmul(a, bm)), flops=2.0 * m * n * k)
            del a, bm
    s = 8192
    a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    bm = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(s, device="cuda", dtype=torch.bfloat16)
    emit(f"matmul bf16 {s}x{s}x{s} + bias + gelu", timed(lambda: torch.nn.functional.gelu(torch.addmm(bias, a, bm))), flops=2.0 * s ** 3)
if GEMM_ONLY:
    sys.exit(0)
# Attention peers: PyTorch's FlashAttention-2 and cuDNN backends, B,S,H,D storage (the layout of
# kiln's bench), same FLOP counts.
from torch.nn.attention import SDPBackend, sdpa_kernel
# KILN_BENCH_SDPA_CASES=S:D,S:D,... limits the cases (as in kiln's bench).
import os
ONLY = [tuple(int(x) for x in c.split(":")) for c in os.environ.get("KILN_BENCH_SDPA_CASES", "").split(",") if ":" in c]
for (s, d) in [(1024, 64), (1024, 128), (4096, 64), (4096, 128), (16384, 64), (16384, 128)]:
    if ONLY and (s, d) not in ONLY:
        continue
    for causal in [False, True]:
        q, k, v = (torch.randn(4, s, 16, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_() for _ in range(3))
        flops = 4.0 * 4 * 16 * s * s * d * (0.5 if causal else 1.0)
        for backend, label in [(SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.CUDNN_ATTENTION, "cudnn")]:
            try:
                with sdpa_kernel(backend):
                    fwd = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    emit(f"sdpa fwd bf16 B4 H16 S{s} D{d} causal={str(causal).lower()} torch-{label}", timed(fwd), flops=flops)
                    if s <= 4096 and not SDPA_ONLY:
                        o = fwd()
                        do = torch.randn_like(o)
                        bwd = lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
                        emit(f"sdpa bwd bf16 B4 H16 S{s} D{d} causal={str(causal).lower()} torch-{label}", timed(bwd), flops=2.5 * flops)
            except RuntimeError as e:
                print(json.dumps({"case": f"sdpa S{s} D{d} torch-{label}", "error": str(e)[:200]}), flush=True)
        del q, k, v
# GQA: 32 query heads over 8 key/value heads, causal.
q = torch.randn(4, 4096, 32, 128, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
k, v = (torch.randn(4, 4096, 8, 128, device="cuda", dtype=torch.bfloat16).transpose(1, 2) for _ in range(2))
flops = 4.0 * 4 * 32 * 4096 * 4096 * 128 * 0.5
for backend, label in [(SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.CUDNN_ATTENTION, "cudnn")]:
    try:
        with sdpa_kernel(backend):
            fwd = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            emit(f"sdpa fwd bf16 B4 Hq32 Hkv8 S4096 D128 causal=true torch-{label}", timed(fwd), flops=flops)
    except RuntimeError as e:
        print(json.dumps({"case": f"sdpa gqa torch-{label}", "error": str(e)[:200]}), flush=True)
# A ragged batch (kiln: seq_len tensors), H16 D128: PyTorch's variable-length kernels.
ragged_peers(backward=False)
if not SDPA_ONLY:
    norm_peers()
    pooling_peers()
