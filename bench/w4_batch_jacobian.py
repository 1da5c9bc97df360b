"""W4: per-example Jacobians (``batch_jacobian``) of an MLP 64-128-32 on a batch of 512."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradkit as gk

from ._common import HAVE_TF, HAVE_TORCH, TorchNp, dev, mlp, mlp_init, peer_notes, pt, rand
from ._harness import FLOOR, Case

TITLE = "batch_jacobian of an MLP 64-128-32, x (512, 64) -> (512, 32)"
TARGETS = {"gradkit eager tape": 1.10}


def contenders(quick: bool = False) -> dict:
    params, x0 = mlp_init([64, 128, 32], seed=40), rand(41, 512, 64)
    gnp = gk.numpy
    out: dict = {}
    jps = [dev(p) for p in params]
    single = jax.jacrev(lambda xi: mlp(jnp, jps, xi[None])[0])
    out[FLOOR] = partial(jax.jit(jax.vmap(single)), dev(x0))

    vs = [gk.Variable(p) for p in params]
    x = dev(x0)

    def eager(check=True):
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = mlp(gnp, vs, x)
        return tape.batch_jacobian(y, x, check_independence=check)

    out["gradkit eager tape"] = eager
    out["gradkit eager tape (no check)"] = lambda: eager(False)
    out["gradkit gk.jit(tape)"] = partial(gk.jit(lambda xx: _jit_tape(vs, xx)), x)
    out["gradkit functional"] = partial(gk.jit(gk.vmap(gk.jacrev(lambda xi: mlp(jnp, vs, xi[None])[0]))), x)
    if HAVE_TF:
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp

        tf_vs, tf_x = [tf.Variable(p) for p in params], tf.constant(x0)

        def tf_eager():
            with tf.GradientTape() as tape:
                tape.watch(tf_x)
                y = mlp(tnp, tf_vs, tf_x)
            return tape.batch_jacobian(y, tf_x)

        out["TF eager"] = tf_eager
        out["TF tf.function"] = tf.function(tf_eager)
    if HAVE_TORCH:
        import torch

        tnp_ = TorchNp()
        pt_ps, pt_x = [pt(p) for p in params], pt(x0)

        def f1(xi):
            return mlp(tnp_, pt_ps, xi[None])[0]

        out["PyTorch eager"] = lambda: torch.autograd.functional.jacobian(
            lambda xx: mlp(tnp_, pt_ps, xx).sum(0), pt_x, vectorize=True
        ).movedim(1, 0)
        out["PyTorch torch.func"] = partial(torch.func.vmap(torch.func.jacrev(f1)), pt_x)
    return out


def _jit_tape(vs, x):
    gnp = gk.numpy
    with gk.GradientTape() as tape:
        tape.watch(x)
        y = mlp(gnp, vs, x)
    # Under gk.jit the values are unknown while tracing: the graph's structure proves the
    # per-example Jacobians exact, so they run, unchecked.
    return tape.batch_jacobian(y, x)


def cases(quick: bool = False) -> list[Case]:
    notes = peer_notes(
        {
            "gradkit eager tape": "default check_independence=True: per-example vmap(jacrev), unchecked: the graph's structure proves that run on one example it computes the batch's rows",
            "gradkit eager tape (no check)": "TensorFlow's whole-batch algorithm (one batch VJP per target element)",
            "gradkit gk.jit(tape)": "per-example vmap(jacrev), unchecked (proven, as eagerly)",
            "PyTorch eager": "autograd.functional.jacobian(sum over batch, vectorize=True)",
        }
    )
    return [Case("W4", "", contenders(quick), TARGETS, notes)]
