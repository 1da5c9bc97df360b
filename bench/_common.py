"""What the workloads share: data, TensorFlow/PyTorch availability, one MLP for every framework."""

from __future__ import annotations

import importlib.util
import os

import jax
import jax.numpy as jnp
import numpy as np

# GRADKIT_BENCH_PEERS=0 leaves TensorFlow and PyTorch out (the memory children of gradkit rows).
_PEERS = os.environ.get("GRADKIT_BENCH_PEERS", "1") != "0"
HAVE_TF = _PEERS and importlib.util.find_spec("tensorflow") is not None
HAVE_TORCH = _PEERS and importlib.util.find_spec("torch") is not None

TF_NAMES = ("TF eager", "TF tf.function")
TORCH_NAMES = ("PyTorch eager", "PyTorch torch.func")


def on_gpu() -> bool:
    """True when JAX computes on a GPU: the peers are then put there too."""
    return jax.default_backend() == "gpu"


def dev(a):
    """Data for the JAX and gradkit contenders, resident on JAX's default device.

    On a GPU a NumPy array would be copied to the device at every call (or embedded in one
    program and not the other); every contender gets its data on the device, as a user keeps it.
    """
    return jnp.asarray(a)


def pt(a, **kwargs):
    """A PyTorch tensor of ``a`` on the device JAX uses (CUDA when JAX is on a GPU and PyTorch sees one).

    On a GPU, float32 matrix products use TensorFloat-32 (``set_float32_matmul_precision("high")``),
    which is what JAX and TensorFlow do by default there; PyTorch alone defaults to full float32.
    """
    import torch

    device = "cuda" if on_gpu() and torch.cuda.is_available() else "cpu"
    if device == "cuda":
        torch.set_float32_matmul_precision("high")
    return torch.tensor(a, device=device, **kwargs)


def rand(seed: int, *shape, scale: float = 1.0) -> np.ndarray:
    """Reproducible float32 data, the same for every framework."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def mlp_init(sizes, seed=0) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] for layer widths ``sizes`` (biases (1, n): no implicit rank promotion)."""
    params = []
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        params += [rand(seed + 2 * i, m, n, scale=1 / np.sqrt(m)), rand(seed + 2 * i + 1, 1, n, scale=0.1)]
    return params


def mlp(xp, params, x):
    """ReLU MLP; ``xp`` is jnp, gk.numpy, tf.experimental.numpy or ``TorchNp``."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = xp.maximum(h @ params[i] + params[i + 1], 0.0)
    return h @ params[-2] + params[-1]


def xent(xp, logits, onehot):
    """Mean softmax cross-entropy (no max-shift: the logits here stay small)."""
    logp = logits - xp.log(xp.sum(xp.exp(logits), axis=-1, keepdims=True))
    return -xp.mean(xp.sum(onehot * logp, axis=-1))


def onehot(seed: int, n: int, k: int) -> np.ndarray:
    return np.eye(k, dtype=np.float32)[np.random.default_rng(seed).integers(0, k, n)]


class TorchNp:
    """The few numpy-style functions ``mlp``/``xent`` need, on torch tensors."""

    def __init__(self):
        import torch

        self.t = torch

    def maximum(self, a, b):
        return self.t.clamp_min(a, b)

    def log(self, a):
        return self.t.log(a)

    def exp(self, a):
        return self.t.exp(a)

    def sin(self, a):
        return self.t.sin(a)

    def cos(self, a):
        return self.t.cos(a)

    def tanh(self, a):
        return self.t.tanh(a)

    def reshape(self, a, shape):
        return self.t.reshape(a, shape)

    def sum(self, a, axis=None, keepdims=False):
        return self.t.sum(a) if axis is None else self.t.sum(a, dim=axis, keepdim=keepdims)

    def mean(self, a, axis=None):
        return self.t.mean(a) if axis is None else self.t.mean(a, dim=axis)


def peer_notes(notes: dict | None = None) -> dict:
    """Notes for TF/PyTorch rows that are not installed."""
    notes = dict(notes or {})
    for name in TF_NAMES:
        if not HAVE_TF:
            notes[name] = "not installed"
    for name in TORCH_NAMES:
        if not HAVE_TORCH:
            notes[name] = "not installed"
    return notes


def chain(xp, x, n: int):
    """``n`` small elementwise ops (sin, scale, shift, tanh in turn), summed to a scalar."""
    for i in range(n):
        k = i % 4
        if k == 0:
            x = xp.sin(x)
        elif k == 1:
            x = x * 1.01
        elif k == 2:
            x = x + 0.1
        else:
            x = xp.tanh(x)
    return xp.sum(x)
