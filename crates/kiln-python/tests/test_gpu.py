"""The GPU part: PyTorch CUDA tensors on a CUDA handle, used in place (no copy), on torch's
current stream; a saved plan loaded in a new process. Skipped, with the reason, where PyTorch,
a CUDA device or kiln's CUDA provider is missing (the lead runs it on the H200 through
scripts/python-gpu-tests.sh)."""

import os
import subprocess
import sys
import textwrap

import pytest

import kiln

torch = pytest.importorskip("torch", reason="PyTorch is not installed")


def cuda_handle():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to PyTorch")
    try:
        h = kiln.Handle("cuda:0")
    except kiln.Error as e:
        pytest.skip(f"kiln's CUDA provider is not available here: {e}")
    h.set_stream(torch.cuda.current_stream().cuda_stream)
    return h


def workspace(g, device):
    n = g.get_workspace_size()
    return torch.empty(n, dtype=torch.uint8, device=device) if n else None


def test_torch_cpu_tensors_on_the_cpu_handle():
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT)
    a = g.tensor(name="a", dim=[4, 8])
    b = g.tensor(name="b", dim=[8, 3])
    c = g.matmul(a, b).set_output(True)
    g.build(handle=kiln.Handle("cpu"))
    ta, tb = torch.randn(4, 8), torch.randn(8, 3)
    tc = torch.full((4, 3), float("nan"))
    g.execute({a: ta, b: tb, c: tc}, workspace(g, "cpu"))
    torch.testing.assert_close(tc, ta @ tb, rtol=1e-4, atol=1e-5)


def conv_graph(h, dtype=kiln.data_type.FLOAT):
    g = kiln.Graph(io_data_type=dtype, handle=h)
    x = g.tensor(name="x", dim=[4, 32, 16, 16])
    w = g.tensor(name="w", dim=[64, 32, 3, 3])
    b = g.tensor(name="b", dim=[1, 64, 1, 1])
    y = g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1]), b)).set_output(True)
    y.set_name("y")
    g.build([kiln.heur_mode.A])
    return g, x, w, b, y


def test_conv_bias_relu_on_torch_cuda_tensors():
    h = cuda_handle()
    g, x, w, b, y = conv_graph(h)
    assert g.get_engine_name().startswith("KILN_CUDA"), g.get_plan_engines()
    dev = "cuda:0"
    tx = torch.randn(4, 32, 16, 16, device=dev)
    tw = torch.randn(64, 32, 3, 3, device=dev)
    tb = torch.randn(1, 64, 1, 1, device=dev)
    ty = torch.full((4, 64, 16, 16), float("nan"), device=dev)
    ptr = ty.data_ptr()
    g.execute({x: tx, w: tw, b: tb, y: ty}, workspace(g, dev))
    torch.cuda.synchronize()
    assert ty.data_ptr() == ptr  # written in place
    want = torch.relu(torch.nn.functional.conv2d(tx, tw, padding=1) + tb)
    torch.testing.assert_close(ty, want, rtol=2e-3, atol=2e-3)


def test_matmul_on_torch_cuda_tensors():
    h = cuda_handle()
    g = kiln.Graph(io_data_type=kiln.data_type.FLOAT, handle=h)
    a = g.tensor(name="a", dim=[2, 64, 96])
    b = g.tensor(name="b", dim=[2, 96, 48])
    c = g.matmul(a, b).set_output(True)
    g.build()
    ta = torch.randn(2, 64, 96, device="cuda")
    tb = torch.randn(2, 96, 48, device="cuda")
    tc = torch.full((2, 64, 48), float("nan"), device="cuda")
    g.execute({a: ta, b: tb, c: tc}, workspace(g, "cuda"))
    torch.cuda.synchronize()
    torch.testing.assert_close(tc, ta @ tb, rtol=2e-3, atol=2e-3)


def test_runs_on_a_side_stream():
    h = cuda_handle()
    g, x, w, b, y = conv_graph(h)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        h.set_stream(side.cuda_stream)
        tx = torch.randn(4, 32, 16, 16, device="cuda")
        tw = torch.randn(64, 32, 3, 3, device="cuda")
        tb = torch.randn(1, 64, 1, 1, device="cuda")
        ty = torch.full((4, 64, 16, 16), float("nan"), device="cuda")
        g.execute({x: tx, w: tw, b: tb, y: ty}, workspace(g, "cuda"))
        want = torch.relu(torch.nn.functional.conv2d(tx, tw, padding=1) + tb)
    side.synchronize()
    torch.testing.assert_close(ty, want, rtol=2e-3, atol=2e-3)
    h.set_stream(torch.cuda.current_stream().cuda_stream)


def test_device_mismatch_names_the_tensor():
    h = cuda_handle()
    g, x, w, b, y = conv_graph(h)
    tx = torch.randn(4, 32, 16, 16)  # on the host
    tw = torch.randn(64, 32, 3, 3, device="cuda")
    tb = torch.randn(1, 64, 1, 1, device="cuda")
    ty = torch.empty(4, 64, 16, 16, device="cuda")
    with pytest.raises(kiln.BadParamError, match="tensor 'x'.*cpu, but the handle runs on cuda:0"):
        g.execute({x: tx, w: tw, b: tb, y: ty}, workspace(g, "cuda"))
    with pytest.raises(kiln.BadParamError, match="tensor 'x'.*float16"):
        g.execute({x: tx.cuda().half(), w: tw, b: tb, y: ty}, workspace(g, "cuda"))


def test_saved_plan_runs_in_a_new_process(tmp_path):
    h = cuda_handle()
    g, x, w, b, y = conv_graph(h)
    (tmp_path / "cbr.kiln").write_bytes(g.serialize())
    torch.manual_seed(0)
    inputs = {
        "x": torch.randn(4, 32, 16, 16),
        "w": torch.randn(64, 32, 3, 3),
        "b": torch.randn(1, 64, 1, 1),
    }
    torch.save(inputs, tmp_path / "inputs.pt")
    script = textwrap.dedent(
        """
        import sys, torch, kiln
        d = sys.argv[1]
        h = kiln.Handle("cuda:0")
        h.set_stream(torch.cuda.current_stream().cuda_stream)
        g = kiln.Graph.deserialize(open(d + "/cbr.kiln", "rb").read(), handle=h)
        inputs = {k: v.cuda() for k, v in torch.load(d + "/inputs.pt").items()}
        y = torch.full((4, 64, 16, 16), float("nan"), device="cuda")
        pack = {g.tensor_by_name(k): v for k, v in inputs.items()}
        pack[g.tensor_by_name("y")] = y
        n = g.get_workspace_size()
        g.execute(pack, torch.empty(n, dtype=torch.uint8, device="cuda") if n else None)
        torch.cuda.synchronize()
        assert g.serialize() == open(d + "/cbr.kiln", "rb").read()
        torch.save(y.cpu(), d + "/y.pt")
        print(g.get_engine_name())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == g.get_engine_name()
    y_loaded = torch.load(tmp_path / "y.pt")
    want = torch.relu(
        torch.nn.functional.conv2d(inputs["x"], inputs["w"], padding=1) + inputs["b"]
    )
    torch.testing.assert_close(y_loaded, want, rtol=2e-3, atol=2e-3)
