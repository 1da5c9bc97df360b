"""W2: forward and gradient through a chain of 200 small elementwise ops (dispatch-bound)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradkit as gk

from ._common import HAVE_TF, HAVE_TORCH, TorchNp, chain, dev, peer_notes, pt, rand
from ._harness import FLOOR, Case

TITLE = "chain of 200 elementwise ops on a (64,) vector: forward + gradient"
TARGETS = {"gradkit eager tape": 30.0}
N_OPS = 200
SHAPE = (64,)


def chain_contenders(n: int, with_grad: bool, shape=SHAPE) -> dict:
    """Contenders for ``chain`` of ``n`` ops: its value, or its value and gradient."""
    x0 = rand(7, *shape)
    gnp = gk.numpy
    out: dict = {}

    def f(x):
        return chain(jnp, x, n)

    out[FLOOR] = partial(jax.jit(jax.value_and_grad(f) if with_grad else f), dev(x0))

    v = gk.Variable(x0)

    def eager():
        with gk.GradientTape() as tape:
            y = chain(gnp, v, n)
        return (y, tape.gradient(y, v)) if with_grad else y

    out["gradkit eager tape"] = eager
    out["gradkit gk.jit(tape)"] = gk.jit(eager)
    if with_grad:
        out["gradkit functional"] = gk.jit(gk.value_and_grad(lambda: chain(jnp, v, n), wrt=v))
    else:
        out["gradkit functional"] = gk.jit(lambda: chain(jnp, v, n))

    if HAVE_TF:
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp

        tf_v = tf.Variable(x0)

        def tf_eager():
            with tf.GradientTape() as tape:
                y = chain(tnp, tf_v, n)
            return (y, tape.gradient(y, tf_v)) if with_grad else y

        out["TF eager"] = tf_eager
        out["TF tf.function"] = tf.function(tf_eager)
    if HAVE_TORCH:
        import torch

        tnp_ = TorchNp()
        pt_x = pt(x0)

        def torch_eager():
            if not with_grad:
                with torch.no_grad():
                    return chain(tnp_, pt_x, n)
            x = pt_x.clone().requires_grad_(True)
            y = chain(tnp_, x, n)
            (g,) = torch.autograd.grad(y, x)
            return y.detach(), g

        tf_ = torch.func.grad_and_value(lambda x: chain(tnp_, x, n))

        def torch_func():
            if not with_grad:
                return chain(tnp_, pt_x, n)
            g, y = tf_(pt_x)
            return y, g

        out["PyTorch eager"] = torch_eager
        out["PyTorch torch.func"] = torch_func
    return out


def contenders(quick: bool = False) -> dict:
    return chain_contenders(N_OPS, True)


def cases(quick: bool = False) -> list[Case]:
    notes = peer_notes({"PyTorch torch.func": "torch.func.grad_and_value, not compiled (no torch.compile)"})
    return [Case("W2", "", contenders(quick), TARGETS, notes)]
