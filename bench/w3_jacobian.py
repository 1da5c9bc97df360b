"""W3: full Jacobian of ``relu(x @ W + b)`` with respect to W.

Large: x (64, 256), W (256, 256): the Jacobian is (64, 256, 256, 256), 2**30 float32 elements (4 GiB),
so this case is bound by writing memory. Small: x (8, 32), W (32, 32): bound by overhead.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradkit as gk

from ._common import HAVE_TF, HAVE_TORCH, dev, peer_notes, pt, rand
from ._harness import FLOOR, Case

TITLE = "Jacobian of relu(x @ W + b) w.r.t. W"
TARGETS = {"gradkit eager tape": 1.10}
SHAPES = {"large x(64,256) W(256,256)": (64, 256, 256), "small x(8,32) W(32,32)": (8, 32, 32)}


def jacobian_contenders(n: int, d: int, k: int) -> dict:
    x, w0, b0 = rand(30, n, d), rand(31, d, k, scale=d**-0.5), rand(32, 1, k, scale=0.1)
    gnp = gk.numpy
    jx = dev(x)
    out: dict = {}

    def f(w, b):
        return jnp.maximum(jx @ w + b, 0.0)

    out[FLOOR] = partial(jax.jit(jax.jacrev(f)), dev(w0), dev(b0))

    w, b = gk.Variable(w0), gk.Variable(b0)

    def eager():
        with gk.GradientTape() as tape:
            y = gnp.maximum(jx @ w + b, 0.0)
        return tape.jacobian(y, w)

    out["gradkit eager tape"] = eager
    out["gradkit gk.jit(tape)"] = gk.jit(eager)
    out["gradkit functional"] = gk.jit(gk.jacrev(lambda: f(w, b), wrt=w))
    if HAVE_TF:
        import tensorflow as tf

        tf_w, tf_b, tf_x = tf.Variable(w0), tf.Variable(b0), tf.constant(x)

        def tf_eager():
            with tf.GradientTape() as tape:
                y = tf.nn.relu(tf_x @ tf_w + tf_b)
            return tape.jacobian(y, tf_w)

        out["TF eager"] = tf_eager
        out["TF tf.function"] = tf.function(tf_eager)
    if HAVE_TORCH:
        import torch

        pt_w, pt_b, pt_x = pt(w0), pt(b0), pt(x)

        def tf_(w):
            return torch.relu(pt_x @ w + pt_b)

        out["PyTorch eager"] = lambda: torch.autograd.functional.jacobian(tf_, pt_w, vectorize=True)
        out["PyTorch torch.func"] = partial(torch.func.jacrev(tf_), pt_w)
    return out


def contenders(quick: bool = False) -> dict:
    return jacobian_contenders(*SHAPES["large x(64,256) W(256,256)"])


def cases(quick: bool = False) -> list[Case]:
    # --quick leaves out the large case: each call writes 4 GiB, too slow for a one-minute pass.
    shapes = {k: v for k, v in SHAPES.items() if not (quick and k.startswith("large"))}
    return [Case("W3", name, jacobian_contenders(*s), TARGETS, peer_notes()) for name, s in shapes.items()]
