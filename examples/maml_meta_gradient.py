"""A MAML meta-gradient through an inner ``assign_sub`` SGD step, with gradkit's functional API.

The inner step is the imperative code people write (``w.assign_sub(lr * g)``); gk.grad
differentiates the validation loss after it with respect to w's value on entry, through the
inner gradient (second order), and with respect to the inner learning rate; then the same
with the tasks batched by gk.vmap, each adapting fast weights created inside the mapped
function. Checked against a pure-JAX MAML; exits non-zero on a mismatch.
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

# The same meta-gradient with the tasks batched by gk.vmap: each task adapts its own fast
# weights, a Variable created inside the mapped function from w (local to the call, so its
# assign_sub is per task and never reaches a live Variable).
TRAIN_X, TRAIN_Y = (np.stack([task[0][i] for task in TASKS]) for i in (0, 1))
VAL_X, VAL_Y = (np.stack([task[1][i] for task in TASKS]) for i in (0, 1))


def adapted_val_loss(train_x, train_y, val_x, val_y):
    fast = gk.Variable(w, name="fast_weights")
    g = gk.grad(lambda: mse(fast.value, (train_x, train_y)), wrt=fast)()
    fast.assign_sub(lr * g)
    return mse(fast.value, (val_x, val_y))


def batched_meta_loss():
    return jnp.mean(gk.vmap(adapted_val_loss)(TRAIN_X, TRAIN_Y, VAL_X, VAL_Y))


batched_w, batched_lr = gk.jit(gk.grad(batched_meta_loss, wrt=[w, lr]))()
print("the same, tasks batched by gk.vmap:", np.asarray(batched_w), float(batched_lr))

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
ok &= np.allclose(batched_w, want_w, rtol=1e-5, atol=1e-6) and np.allclose(batched_lr, want_lr, rtol=1e-5, atol=1e-6)
ok &= np.allclose(w.numpy(), w_ref, rtol=1e-4, atol=1e-6)
ok &= np.allclose(meta_after, pure_meta_loss(w_ref, 0.1), rtol=1e-4)
print("[ok]" if ok else "[MISMATCH]", "gradkit equals the pure-JAX MAML")
sys.exit(0 if ok else 1)
