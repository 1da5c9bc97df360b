"""W5: the 4096 x 4096 Hessian of an MLP loss (4096 parameters in one vector), and a Hessian-vector product.

The parameters are one Variable ``theta`` of 4096 entries, sliced into an MLP 60-64-3
(60*64 + 64 + 64*3 = 4096; ``--quick`` uses 12 inputs: 1024 parameters); the loss is a mean squared error on a batch of 256. The tape
rows use nested tapes (an inner gradient, then an outer jacobian or gradient), as TensorFlow code does.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradkit as gk

from ._common import HAVE_TF, HAVE_TORCH, TorchNp, dev, peer_notes, pt, rand
from ._harness import FLOOR, Case

TITLE = "Hessian (4096 x 4096) of an MLP loss, and a Hessian-vector product"
TARGETS = {"gradkit eager tape": 1.10}


def sizes(quick: bool) -> tuple[int, int]:
    """(input width, parameter count): 60 -> 4096 parameters; --quick: 12 -> 1024."""
    d = 12 if quick else 60
    return d, d * 64 + 64 + 64 * 3


def loss(xp, theta, x, y):
    d = x.shape[1]
    w1 = xp.reshape(theta[: d * 64], (d, 64))
    b1 = xp.reshape(theta[d * 64 : d * 64 + 64], (1, 64))
    w2 = xp.reshape(theta[d * 64 + 64 :], (64, 3))
    h = xp.tanh(x @ w1 + b1)
    return xp.mean((h @ w2 - y) ** 2)


def hessian_contenders(hvp: bool, quick: bool = False) -> dict:
    d, n = sizes(quick)
    theta0, x, y, v0 = rand(50, n, scale=0.1), rand(51, 256, d), rand(52, 256, 3), rand(53, n)
    gnp = gk.numpy
    out: dict = {}
    jx, jy = dev(x), dev(y)
    f = lambda t: loss(jnp, t, jx, jy)  # noqa: E731
    jt, jv = dev(theta0), dev(v0)
    if hvp:
        out[FLOOR] = partial(jax.jit(lambda t, v: jax.jvp(jax.grad(f), (t,), (v,))[1]), jt, jv)
    else:
        out[FLOOR] = partial(jax.jit(jax.hessian(f)), jt)

    theta = gk.Variable(theta0)

    def eager():
        with gk.GradientTape() as outer:
            with gk.GradientTape() as inner:
                ell = loss(gnp, theta, jx, jy)
            g = inner.gradient(ell, theta)
        if hvp:
            return outer.gradient(g, theta, output_gradients=jv)
        return outer.jacobian(g, theta)

    out["gradkit eager tape"] = eager
    out["gradkit gk.jit(tape)"] = gk.jit(eager)
    if hvp:
        grad_fn = gk.grad(lambda: f(theta.read_value()), wrt=theta)
        out["gradkit functional"] = gk.jit(lambda: gk.jvp(grad_fn, (), (), wrt=theta, wrt_tangents=jv)[1])
    else:
        out["gradkit functional"] = gk.jit(gk.hessian(lambda: f(theta.read_value()), wrt=theta))
    if HAVE_TF:
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp

        tf_theta, tf_x, tf_y, tf_v = tf.Variable(theta0), tf.constant(x), tf.constant(y), tf.constant(v0)

        def tf_eager():
            with tf.GradientTape() as o:
                with tf.GradientTape() as i:
                    ell = loss(tnp, tf_theta, tf_x, tf_y)
                g = i.gradient(ell, tf_theta)
            return o.gradient(g, tf_theta, output_gradients=tf_v) if hvp else o.jacobian(g, tf_theta)

        out["TF eager"] = tf_eager
        out["TF tf.function"] = tf.function(tf_eager)
    if HAVE_TORCH:
        import torch

        pt_theta, pt_x, pt_y, pt_v = (pt(a) for a in (theta0, x, y, v0))
        pf = lambda t: loss(TorchNp(), t, pt_x, pt_y)  # noqa: E731
        if hvp:
            out["PyTorch eager"] = lambda: torch.autograd.functional.hvp(pf, pt_theta, pt_v)[1]
            out["PyTorch torch.func"] = lambda: torch.func.jvp(torch.func.grad(pf), (pt_theta,), (pt_v,))[1]
        else:
            out["PyTorch eager"] = lambda: torch.autograd.functional.hessian(pf, pt_theta, vectorize=True)
            out["PyTorch torch.func"] = partial(torch.func.hessian(pf), pt_theta)
    return out


def contenders(quick: bool = False) -> dict:
    return hessian_contenders(False, quick)


def cases(quick: bool = False) -> list[Case]:
    notes = peer_notes({"gradkit eager tape": "nested tapes (inner gradient, outer jacobian or gradient)"})
    n = sizes(quick)[1]
    return [
        Case("W5", f"Hessian {n}x{n}", hessian_contenders(False, quick), TARGETS, notes),
        Case("W5", f"Hessian-vector product ({n})", hessian_contenders(True, quick), TARGETS, notes),
    ]
