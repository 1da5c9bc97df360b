"""A MAML meta-gradient through an inner ``assign_sub`` SGD step, with gradkit's functional API.

The inner step is the imperative code people write (``w.assign_sub(lr * g)``); gk.grad
differentiates the validation loss after it with respect to w's value on entry, through the
inner gradient (second order), and with respect to the inner learning rate. Checked against
a pure-JAX MAML; exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

rng = np.random.default_rng(0)
# Two tiny linear-regression tasks, each with a train and a validation split.
TASKS = []
for slope in (1.5, -0.5):
    xs = rng.normal(size=(8, 2)).astype(np.float32)
    ys = (xs @ np.array([slope, 1.0], np.float32)).astype(np.float32)
    TASKS.append(((xs[:4], ys[:4]), (xs[4:], ys[4:])))


def mse(w, data):
    xs, ys = data
    return jnp.mean((xs @ w - ys) ** 2)


w = gk.Variable(np.zeros(2, np.float32), name="w")
lr = gk.Variable(0.1, name="inner_lr")


def meta_loss():
    w_entry = w.value
    total = 0.0
    for train, val in TASKS:
        w.assign(w_entry)  # every task adapts from the same starting point
        g = gk.grad(lambda data=train: mse(w.value, data), wrt=w)()
        w.assign_sub(lr * g)
        total = total + mse(w.value, val)
    w.assign(w_entry)  # leave w as it was found: only the outer step below updates it
    return total / len(TASKS)


def pure_meta_loss(w, lr):
    total = 0.0
    for train, val in TASKS:
        adapted = w - lr * jax.grad(mse)(w, train)
        total = total + mse(adapted, val)
    return total / len(TASKS)


meta_grad, lr_grad = gk.grad(meta_loss, wrt=[w, lr])()
want_w, want_lr = jax.grad(pure_meta_loss, argnums=(0, 1))(jnp.zeros(2), 0.1)
print("meta-gradient d meta/d w:", np.asarray(meta_grad))
print("d meta/d inner_lr:       ", float(lr_grad))

# A few meta-training steps: gk.jit over the outer update, which assigns w.
meta_lr = 0.2


@gk.jit
def meta_step():
    g = gk.grad(meta_loss, wrt=w)()
    w.assign_sub(meta_lr * g)
    return meta_loss()


w_ref = jnp.zeros(2)
for _ in range(5):
    meta_after = meta_step()
    w_ref = w_ref - meta_lr * jax.grad(pure_meta_loss)(w_ref, 0.1)
print("meta loss after 5 outer steps:", float(meta_after))

ok = np.allclose(meta_grad, want_w, rtol=1e-5, atol=1e-6) and np.allclose(lr_grad, want_lr, rtol=1e-5, atol=1e-6)
ok &= np.allclose(w.numpy(), w_ref, rtol=1e-4, atol=1e-6)
ok &= np.allclose(meta_after, pure_meta_loss(w_ref, 0.1), rtol=1e-4)
print("[ok]" if ok else "[MISMATCH]", "gradkit equals the pure-JAX MAML")
sys.exit(0 if ok else 1)
