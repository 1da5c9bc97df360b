"""W1: loss and gradient of an MLP 784-512-512-10 on a batch of 256 (a training step's work)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradkit as gk

from ._common import HAVE_TF, HAVE_TORCH, TorchNp, dev, mlp, mlp_init, onehot, peer_notes, pt, rand, xent
from ._harness import FLOOR, Case

TITLE = "MLP 784-512-512-10, batch 256: loss + gradient"
TARGETS = {"gradkit gk.jit(tape)": 1.05, "gradkit eager tape": 1.10}


def data():
    return mlp_init([784, 512, 512, 10]), rand(100, 256, 784), onehot(101, 256, 10)


def contenders(quick: bool = False, data=data) -> dict:
    params, x, y = data()
    jx, jy = dev(x), dev(y)
    gnp = gk.numpy
    out: dict = {}

    def loss_jax(ps, x, y):
        return xent(jnp, mlp(jnp, ps, x), y)

    out[FLOOR] = partial(jax.jit(jax.value_and_grad(loss_jax)), [dev(p) for p in params], jx, jy)

    vs = [gk.Variable(p) for p in params]

    def eager():
        with gk.GradientTape() as tape:
            loss = xent(gnp, mlp(gnp, vs, jx), jy)
        return loss, tape.gradient(loss, vs)

    out["gradkit eager tape"] = eager
    out["gradkit gk.jit(tape)"] = gk.jit(eager)
    out["gradkit functional"] = gk.jit(gk.value_and_grad(lambda: loss_jax(vs, jx, jy), wrt=vs))

    if HAVE_TF:
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp

        tf_vs = [tf.Variable(p) for p in params]
        tf_x, tf_y = tf.constant(x), tf.constant(y)

        def tf_step():
            with tf.GradientTape() as tape:
                loss = xent(tnp, mlp(tnp, tf_vs, tf_x), tf_y)
            return loss, tape.gradient(loss, tf_vs)

        out["TF eager"] = tf_step
        out["TF tf.function"] = tf.function(tf_step, jit_compile=False)
    if HAVE_TORCH:
        import torch

        tnp_ = TorchNp()
        pt_ps = {str(i): pt(p) for i, p in enumerate(params)}
        pt_x, pt_y = pt(x), pt(y)
        leaf = [p.clone().requires_grad_(True) for p in pt_ps.values()]

        def torch_eager():
            for p in leaf:
                p.grad = None
            loss = xent(tnp_, mlp(tnp_, leaf, pt_x), pt_y)
            loss.backward()
            return loss.detach(), [p.grad for p in leaf]

        def loss_t(ps):
            return xent(tnp_, mlp(tnp_, [ps[str(i)] for i in range(len(ps))], pt_x), pt_y)

        vg = torch.func.grad_and_value(loss_t)

        def torch_func():
            g, v = vg(pt_ps)
            return v, [g[str(i)] for i in range(len(g))]

        out["PyTorch eager"] = torch_eager
        out["PyTorch torch.func"] = torch_func
    return out


def cases(quick: bool = False) -> list[Case]:
    return [Case("W1", "", contenders(quick), TARGETS, peer_notes())]
