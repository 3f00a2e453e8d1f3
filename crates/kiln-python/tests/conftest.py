"""Shared fixtures of kiln's Python tests (CPU with NumPy; the GPU part is test_gpu.py)."""

import numpy as np
import pytest

import kiln


@pytest.fixture
def handle():
    return kiln.Handle("cpu")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def workspace_for(g):
    """A workspace array for g's selected plan (None when it needs none)."""
    n = g.get_workspace_size()
    return np.empty(n, np.uint8) if n else None


def poisoned(shape, dtype=np.float32):
    """An output array full of NaN, so that an output left unwritten fails the comparison."""
    return np.full(shape, np.nan, dtype)


def conv2d_ref(x, w, pad, stride=(1, 1), dilation=(1, 1)):
    """Direct NCHW/KCRS convolution (cross-correlation, as cuDNN), in float64."""
    n, c, h, wd = x.shape
    k, c2, r, s = w.shape
    assert c == c2
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = xp[
                :,
                :,
                i * dilation[0] : i * dilation[0] + stride[0] * oh : stride[0],
                j * dilation[1] : j * dilation[1] + stride[1] * ow : stride[1],
            ]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j].astype(np.float64))
    return y
