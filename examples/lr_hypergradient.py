"""The learning-rate hypergradient through K = 10 unrolled SGD steps, with gradkit.

The training loop is ordinary imperative code (``w.assign_sub(lr * g)``). Differentiating
the final loss with respect to ``lr`` gives the exact hypergradient, which then drives a few
steps of learning-rate tuning. Checked against a pure-JAX unrolled loop; exits non-zero on
a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

K = 10
rng = np.random.default_rng(1)
XS = rng.normal(size=(16, 3)).astype(np.float32)
YS = (XS @ np.array([1.0, -2.0, 0.5], np.float32) + 0.1 * rng.normal(size=16)).astype(np.float32)
W0 = np.zeros(3, np.float32)


def mse(w):
    return jnp.mean((XS @ w - YS) ** 2)


w = gk.Variable(W0, name="w")
lr = gk.Variable(0.05, name="lr")


def train_then_loss():
    for _ in range(K):
        g = gk.grad(lambda: mse(w.value), wrt=w)()
        w.assign_sub(lr * g)
    return mse(w.value)


def pure_train_then_loss(lr):
    wv = jnp.asarray(W0)
    for _ in range(K):
        wv = wv - lr * jax.grad(mse)(wv)
    return mse(wv)


hyper = gk.jit(gk.value_and_grad(train_then_loss, wrt=lr))
loss, d_lr = hyper()
want_loss, want_d_lr = jax.value_and_grad(pure_train_then_loss)(0.05)
print(f"loss after {K} steps at lr=0.05: {float(loss):.6f}, d loss/d lr = {float(d_lr):.6f}")
ok = np.allclose([loss, d_lr], [want_loss, want_d_lr], rtol=1e-5)

# Tune the learning rate by gradient descent on the hypergradient.
lr_ref = 0.05
for step in range(5):
    loss, d_lr = gk.value_and_grad(train_then_loss, wrt=lr)()
    lr.assign_sub(0.01 * d_lr)
    lr_ref = lr_ref - 0.01 * jax.grad(pure_train_then_loss)(lr_ref)
    print(f"  tuning step {step}: loss {float(loss):.6f} -> lr {float(lr.value):.5f}")
ok &= np.allclose(lr.value, lr_ref, rtol=1e-4)
ok &= np.array_equal(w.numpy(), W0)  # only lr was ever assigned outside a transform

print("[ok]" if ok else "[MISMATCH]", "gradkit equals the pure-JAX unrolled loop")
sys.exit(0 if ok else 1)
