#!/usr/bin/env python3
"""PyTorch peers of the CUDA provider's benchmarks (cuDNN / cuBLAS), printed as JSON lines in
the same shape as the kiln bench (engines/kiln-engine-cuda/benches/h200.rs)."""
import json
import sys
import time
import torch

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

torch.backends.cudnn.benchmark = True
print(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name()}), flush=True)
# Convolution gradient peers (cuDNN through aten.convolution_backward, channels_last, bf16): the
# data gradient alone, then the weight gradient alone; names and FLOPs as the kiln bench's.
for (nb, c, hw, k, r, stride) in [(32, 64, 56, 64, 3, 1), (32, 128, 28, 128, 3, 1), (32, 256, 28, 256, 3, 1), (32, 128, 56, 128, 3, 1), (32, 256, 14, 256, 3, 1), (32, 128, 56, 128, 3, 2), (32, 128, 28, 128, 1, 1)]:
    pad = r // 2
    out = (hw + 2 * pad - r) // stride + 1
    xi = torch.randn(nb, c, hw, hw, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, r, r, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    dy = torch.randn(nb, k, out, out, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    flops = 2.0 * nb * k * out * out * c * r * r
    for what, mask in [("conv_dgrad", [True, False, False]), ("conv_wgrad", [False, True, False])]:
        f = lambda: torch.ops.aten.convolution_backward(dy, xi, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, mask)
        emit(f"{what} bf16 N{nb} C{c} H{hw} K{k} R{r} s{stride}", timed(f), flops=flops)
    del xi, w, dy
if "--conv-grad-only" in sys.argv:
    sys.exit(0)
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
# Attention peers: PyTorch's FlashAttention-2 and cuDNN backends, B,S,H,D storage (the layout of
# kiln's bench), same FLOP counts.
from torch.nn.attention import SDPBackend, sdpa_kernel
for (s, d) in [(1024, 64), (1024, 128), (4096, 64), (4096, 128), (16384, 128)]:
    for causal in [False, True]:
        q, k, v = (torch.randn(4, s, 16, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_() for _ in range(3))
        flops = 4.0 * 4 * 16 * s * s * d * (0.5 if causal else 1.0)
        for backend, label in [(SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.CUDNN_ATTENTION, "cudnn")]:
            try:
                with sdpa_kernel(backend):
                    fwd = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    emit(f"sdpa fwd bf16 B4 H16 S{s} D{d} causal={str(causal).lower()} torch-{label}", timed(fwd), flops=flops)
                    if s <= 4096:
                        o = fwd()
                        do = torch.randn_like(o)
                        bwd = lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
                        emit(f"sdpa bwd bf16 B4 H16 S{s} D{d} causal={str(causal).lower()} torch-{label}", timed(bwd), flops=2.5 * flops)
            except RuntimeError as e:
                print(json.dumps({"case": f"sdpa S{s} D{d} torch-{label}", "error": str(e)[:200]}), flush=True)
        del q, k, v
