"""W6: a meta-gradient through 10 unrolled SGD steps: d(validation loss after training) / d(learning rate).

The gradkit rows are imperative, the way TensorFlow users write a training loop: each inner
step takes a gradient on an inner tape and applies it with ``w.assign_sub(lr * g)``. In
TensorFlow that program returns ``None`` for the meta-gradient (``assign_sub`` cuts the
tape), so the TensorFlow and PyTorch rows time the functional rewrite (``w = w - lr * g``).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradkit as gk

from ._common import HAVE_TF, HAVE_TORCH, TorchNp, dev, peer_notes, pt, rand
from ._harness import FLOOR, Case

TITLE = "meta-gradient through 10 unrolled SGD steps (d val-loss / d lr)"
TARGETS = {"gradkit eager tape": 1.5}
STEPS = 10


def loss(xp, w, x, y):
    return xp.mean((xp.tanh(x @ w) - y) ** 2)


def contenders(quick: bool = False) -> dict:
    w0, lr0 = rand(60, 32, 8, scale=32**-0.5), 0.1
    xtr, ytr, xva, yva = rand(61, 128, 32), rand(62, 128, 8), rand(63, 128, 32), rand(64, 128, 8)
    gnp = gk.numpy
    jxtr, jytr, jxva, jyva = (dev(a) for a in (xtr, ytr, xva, yva))
    out: dict = {}

    def meta_jax(lr, w):
        for _ in range(STEPS):
            w = w - lr * jax.grad(lambda ww: loss(jnp, ww, jxtr, jytr))(w)
        return loss(jnp, w, jxva, jyva)

    w0_device = dev(w0)  # both sides start every call from the same device array
    out[FLOOR] = partial(jax.jit(jax.value_and_grad(meta_jax)), jnp.float32(lr0), w0_device)

    w, lr = gk.Variable(w0), gk.Variable(jnp.float32(lr0))

    def eager():
        w.assign(w0_device)  # every call starts from the same weights
        with gk.GradientTape() as outer:
            for _ in range(STEPS):
                with gk.GradientTape() as inner:
                    ell = loss(gnp, w, jxtr, jytr)
                w.assign_sub(lr * inner.gradient(ell, w))
            meta = loss(gnp, w, jxva, jyva)
        return meta, outer.gradient(meta, lr)

    def meta_imperative():
        w.assign(w0_device)
        for _ in range(STEPS):
            w.assign_sub(lr * gk.grad(lambda: loss(jnp, w.read_value(), jxtr, jytr), wrt=w)())
        return loss(jnp, w.read_value(), jxva, jyva)

    out["gradkit eager tape"] = eager
    out["gradkit gk.jit(tape)"] = gk.jit(eager)
    out["gradkit functional"] = gk.jit(gk.value_and_grad(meta_imperative, wrt=lr))
    out["TF eager (assign_sub)"] = None
    if HAVE_TF:
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp

        tf_lr = tf.Variable(lr0)
        tf_w0, tf_x, tf_y, tf_xv, tf_yv = (tf.constant(a) for a in (w0, xtr, ytr, xva, yva))

        def tf_eager():
            with tf.GradientTape() as o:
                ww = tf_w0
                for _ in range(STEPS):
                    with tf.GradientTape() as i:
                        i.watch(ww)
                        ell = loss(tnp, ww, tf_x, tf_y)
                    ww = ww - tf_lr * i.gradient(ell, ww)
                meta = loss(tnp, ww, tf_xv, tf_yv)
            return meta, o.gradient(meta, tf_lr)

        out["TF eager"] = tf_eager
        out["TF tf.function"] = tf.function(tf_eager)
    if HAVE_TORCH:
        import torch

        tnp_ = TorchNp()
        pt_w0, pt_x, pt_y, pt_xv, pt_yv = (pt(a) for a in (w0, xtr, ytr, xva, yva))

        def meta_torch(lr):
            ww = pt_w0.clone().requires_grad_(True)
            for _ in range(STEPS):
                (g,) = torch.autograd.grad(loss(tnp_, ww, pt_x, pt_y), ww, create_graph=True)
                ww = ww - lr * g
            return loss(tnp_, ww, pt_xv, pt_yv)

        def torch_eager():
            lr = pt(lr0, requires_grad=True)
            meta = meta_torch(lr)
            (g,) = torch.autograd.grad(meta, lr)
            return meta.detach(), g

        def meta_func(lr):
            ww = pt_w0
            for _ in range(STEPS):
                ww = ww - lr * torch.func.grad(lambda v: loss(tnp_, v, pt_x, pt_y))(ww)
            return loss(tnp_, ww, pt_xv, pt_yv)

        vg = torch.func.grad_and_value(meta_func)
        out["PyTorch eager"] = torch_eager
        out["PyTorch torch.func"] = lambda: vg(pt(lr0))[::-1]
    return out


def cases(quick: bool = False) -> list[Case]:
    notes = peer_notes(
        {
            "TF eager (assign_sub)": "meta-gradient is None: TF's tape does not differentiate through assign_sub",
            "TF eager": "functional rewrite (w = w - lr * g); the assign_sub version returns None",
            "TF tf.function": "functional rewrite, as TF eager",
            "PyTorch eager": "functional rewrite, create_graph=True",
        }
    )
    return [Case("W6", "", contenders(quick), TARGETS, notes)]
