"""Seed 000 (gradient through tf.Variable.assign) with gradkit's functional API.

TensorFlow 2 returns None for d loss/d b after ``c.assign(a + b)``. Here the same imperative
code is differentiated two ways: ``gk.grad(..., wrt=...)`` directly, and
``gk.functionalize`` + ``jax.value_and_grad`` over a State. Every number is checked against
a hand-written pure-JAX rewrite; the script exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

failures = []


def check(what, got, want):
    ok = jax.tree.all(jax.tree.map(lambda g, w: np.allclose(g, w, rtol=1e-5, atol=1e-6), got, want))
    print(f"[{'ok' if ok else 'MISMATCH'}] {what}: {jax.tree.map(lambda g: np.asarray(g).tolist(), got)}")
    if not ok:
        failures.append(what)


def combine(a, b, c, x):
    """The seed's update: c_i <- (1 - x) a_i + x b_i (in place, on Variables)."""
    for ai, bi, ci in zip(a, b, c):
        ci.assign((1 - x) * ai + x * bi)


# === Scenario 1: c.assign(a + b); loss = mean(c**2) ===========================================
a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="c")


def loss():
    c.assign(a + b)
    return jnp.mean(c**2)


grads = gk.grad(loss, wrt=[a, b])()
want = jax.grad(lambda a, b: jnp.mean((a + b) ** 2), argnums=(0, 1))(1.0, 2.0)
check("scalar: [dloss/da, dloss/db] (TensorFlow: None for both)", grads, list(want))

value, state_grads = jax.value_and_grad(lambda s: gk.functionalize(loss)(s)[0])(gk.State.of([a, b, c]))
check(
    "scalar via functionalize: loss, [d/da, d/db, d/dc]",
    (value, [state_grads[v] for v in (a, b, c)]),
    (9.0, [6.0, 6.0, 0.0]),
)

# === Scenario 2 (the extension): lists of Variables, loss = norm(c) ============================
a = [gk.Variable(1.0, name="a"), gk.Variable(4.0, name="aa")]
b = [gk.Variable(2.0, name="b"), gk.Variable(9.0, name="bb")]
c = [gk.Variable(3.0, name="c"), gk.Variable(0.0, name="cc")]
x = gk.Variable(0.01, name="x")


def list_loss():
    combine(a, b, c, x)
    return jnp.linalg.norm(jnp.stack([ci.value for ci in c]))


def pure_list_loss(a, b, x):
    return jnp.linalg.norm(jnp.stack([(1 - x) * ai + x * bi for ai, bi in zip(a, b)]))


grads = gk.grad(list_loss, wrt={"b": b, "x": x})()
want_b, want_x = jax.grad(pure_list_loss, argnums=(1, 2))([1.0, 4.0], [2.0, 9.0], 0.01)
check("list: dloss/dx (the seed wants 5.0933886)", grads["x"], want_x)
check("list: dloss/db", grads["b"], want_b)

# === Scenario 3: nested shapes, loss = norm of the norms =======================================
a = [gk.Variable([1.0, 2.0], name="a"), gk.Variable([5.0], name="aa"), gk.Variable(7.0, name="aaa")]
b = [gk.Variable([3.0, 4.0], name="b"), gk.Variable([6.0], name="bb"), gk.Variable(8.0, name="bbb")]
c = [gk.Variable([1.0, 1.0], name="c"), gk.Variable([1.0], name="cc"), gk.Variable(1.0, name="ccc")]
x = gk.Variable(0.5, name="x")


def nested_loss():
    combine(a, b, c, x)
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(ci.value) for ci in c]))


def pure_nested_loss(a, b, x):
    c = [(1 - x) * ai + x * bi for ai, bi in zip(a, b)]
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm(ci) for ci in c]))


a0 = [jnp.array([1.0, 2.0]), jnp.array([5.0]), jnp.array(7.0)]
b0 = [jnp.array([3.0, 4.0]), jnp.array([6.0]), jnp.array(8.0)]
pure = gk.functionalize(nested_loss)
value, state_grads = jax.jit(jax.value_and_grad(lambda s: pure(s)[0]))(gk.State.of([a, b, c, x]))
want_value, (want_a, want_x) = jax.value_and_grad(pure_nested_loss, argnums=(0, 2))(a0, b0, 0.5)
check("nested: loss (the seed prints 9.974969)", value, want_value)
check("nested: dloss/dx (the seed wants 2.3057709)", state_grads[x], want_x)
check("nested: dloss/da", [state_grads[v] for v in a], want_a)
check("nested: the live Variables are unchanged", [v.value for v in c], [[1.0, 1.0], [1.0], 1.0])

sys.exit(1 if failures else 0)
