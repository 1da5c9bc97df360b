"""Seed 000 (gradient through tf.Variable.assign), ported to gradkit.tf by changing the import.

TensorFlow returns None for every gradient through ``c.assign(...)``; gradkit's tape is
exact. The answer's ``output_gradients`` workarounds are run in TensorFlow parity mode
(``track_assignments=False``, where they are needed and give TensorFlow's numbers) and
compared with gradkit's direct answer. Checked against pure JAX; exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

failures = []


def check(what, got, want, rtol=1e-5):
    ok = got is not None and np.allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-6)
    print(f"[{'ok' if ok else 'MISMATCH'}] {what}: {None if got is None else np.asarray(got).tolist()}")
    if not ok:
        failures.append(what)


# === Scenario 1: c.assign(a + b) ============================================================
a = tf.Variable(1.0, name="a")
b = tf.Variable(2.0, name="b")
c = tf.Variable(3.0, name="c")

with tf.GradientTape() as tape:
    c.assign(a + b)
    loss = tf.reduce_mean(c**2)

print(tape.gradient(loss, b))  # TensorFlow prints None
g1 = tape.gradient  # noqa: F841  (the tape is used up)

a2, b2, c2 = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
with tf.GradientTape(watch_accessed_variables=False) as tape2:
    tape2.watch([b2, c2])
    c2.assign(a2 + b2)
    loss2 = tf.reduce_mean(c2**2)
g_watch = tape2.gradient(loss2, b2)
print(g_watch)  # TensorFlow: also None

with tf.GradientTape() as tape3:
    c3 = a + b
    loss3 = tf.reduce_mean(c3**2)
g_tensor = tape3.gradient(loss3, b)
print(g_tensor)  # works in both

jax_db = jax.grad(lambda a, b: jnp.mean((a + b) ** 2), argnums=1)(1.0, 2.0)
a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
with tf.GradientTape() as tape:
    c.assign(a + b)
    loss = tf.reduce_mean(c**2)
check("scenario 1: dloss/db through c.assign (TensorFlow: None)", tape.gradient(loss, b), jax_db)
check("scenario 1: watch_accessed_variables=False + watch([b, c])", g_watch, jax_db)
check("scenario 1: c = a + b (a tensor)", g_tensor, jax_db)

# Answer's workaround (parity mode reproduces TensorFlow's 20.0); gradkit gives it directly.
a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
with tf.GradientTape(persistent=True, track_assignments=False) as tape:
    c_ = a + 2 * b
    c.assign(c_)
    loss = tf.reduce_mean(c**2)
workaround = tape.gradient(loss, c, output_gradients=tape.gradient(c_, b))
a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
with tf.GradientTape() as tape:
    c_ = a + 2 * b
    c.assign(c_)
    loss = tf.reduce_mean(c**2)
direct = tape.gradient(loss, b)
jax_20 = jax.grad(lambda b: jnp.mean((1.0 + 2 * b) ** 2))(2.0)
check("answer: output_gradients workaround (parity mode) == 20", workaround, 20.0)
check("answer: gradkit direct dloss/db", direct, jax_20)


# === Scenario 2 (extension): lists of Variables, c = (1-x) a + x b ===========================
def extension(x0, track=True):
    a = [tf.Variable(1.0, name="a"), tf.Variable(4.0, name="aa")]
    b = [tf.Variable(2.0, name="b"), tf.Variable(9.0, name="bb")]
    c = [tf.Variable(3.0, name="c"), tf.Variable(0.0, name="cc")]
    x = tf.Variable(x0)
    with tf.GradientTape(persistent=True, track_assignments=track) as tape:
        c_ = tf.nest.map_structure(lambda _a, _b: (1 - x) * _a + x * _b, a, b)
        tf.nest.map_structure(lambda x, y: x.assign(y), c, c_)
        loss = tf.norm(c)  # scalar
    return tape, loss, a, b, c, c_, x


def jax_ext_loss(x, a=(1.0, 4.0), b=(2.0, 9.0)):
    return jnp.linalg.norm(jnp.stack([(1 - x) * ai + x * bi for ai, bi in zip(a, b)]))


tape, loss, a, b, c, c_, x = extension(0.01)
check(
    "extension: dloss/dx through the assignments (TensorFlow: None)",
    tape.gradient(loss, x),
    jax.grad(jax_ext_loss)(0.01),
)
check("extension: == the question's 'what I'd like' 5.0933886", tape.gradient(loss, x), 5.0933886)

tape, loss, a, b, c, c_, x = extension(0.01, track=False)
print(tape.gradient(loss, c, output_gradients=tape.gradient(c_, b)))  # TF: [0.0024197185, 0.009702832]
check(
    "extension parity: gradient(loss, c, output_gradients=gradient(c_, b))",
    tape.gradient(loss, c, output_gradients=tape.gradient(c_, b)),
    [0.0024197185, 0.009702832],
)
check(
    "extension parity: gradient(loss, c, output_gradients=gradient(c_, x))",
    tape.gradient(loss, c, output_gradients=tape.gradient(c_, x)),
    [1.4518311, 5.8216996],
)
tape, loss, a, b, c, c_, x = extension(0.0, track=False)
answer = tape.gradient(loss, c[0], output_gradients=tape.gradient(c_[0], x)) + tape.gradient(
    loss, c[1], output_gradients=tape.gradient(c_[1], x)
)
check("extension answer (parity, x=0): 5.0932484", answer, jax.grad(jax_ext_loss)(0.0))


# === Scenario 3: Variables of several shapes ===================================================
def sophisticated(track):
    a = [tf.Variable([1.0, 2.0], name="a"), tf.Variable([5.0], name="aa"), tf.Variable(7.0, name="aaa")]
    b = [tf.Variable([3.0, 4.0], name="b"), tf.Variable([6.0], name="bb"), tf.Variable(8.0, name="aaa")]
    c = [tf.Variable([1.0, 1.0], name="c"), tf.Variable([1.0], name="cc"), tf.Variable(1.0, name="ccc")]
    x = tf.Variable(0.5, name="x")
    with tf.GradientTape(persistent=True, track_assignments=track) as tape:
        c_ = tf.nest.map_structure(lambda _a, _b: (1 - x) * _a + x * _b, a, b)
        tf.nest.map_structure(lambda x, y: x.assign(y), c, c_)
        loss = tf.norm(tf.nest.map_structure(lambda e: tf.norm(e), c))
        loss_without_assign = tf.norm(tf.nest.map_structure(lambda e: tf.norm(e), c_))
    return tape, loss, loss_without_assign, c, c_, x


def jax_soph(x):
    a = [jnp.array([1.0, 2.0]), jnp.array([5.0]), jnp.array(7.0)]
    b = [jnp.array([3.0, 4.0]), jnp.array([6.0]), jnp.array(8.0)]
    return jnp.linalg.norm(jnp.stack([jnp.linalg.norm((1 - x) * ai + x * bi) for ai, bi in zip(a, b)]))


tape, loss, lwa, c, c_, x = sophisticated(True)
check("sophisticated: loss == loss_without_assign == 9.974969", [loss, lwa], [jax_soph(0.5)] * 2)
check("sophisticated: dloss/dx through the assignments (exact)", tape.gradient(loss, x), jax.grad(jax_soph)(0.5))
check("sophisticated: == gradient(loss_without_assign, x)", tape.gradient(loss, x), tape.gradient(lwa, x))

# The answer's Jacobian workaround, in parity mode, with random values (draws differ from TF's).
tf.keras.utils.set_random_seed(0)
vals = [[tf.random.normal(shape=s) for s in ([2], [1], [])] for _ in range(3)]
x0 = tf.random.normal(shape=[])
for track in (False, True):
    a = [tf.Variable(v) for v in vals[0]]
    b = [tf.Variable(v) for v in vals[1]]
    c = [tf.Variable(v) for v in vals[2]]
    x = tf.Variable(x0, name="x")
    with tf.GradientTape(persistent=True, track_assignments=track) as tape:
        c_ = tf.nest.map_structure(lambda _a, _b: (1 - x) * _a + x * _b, a, b)  # noqa: B023
        tf.nest.map_structure(lambda x, y: x.assign(y), c, c_)
        loss = tf.norm(tf.nest.map_structure(lambda e: tf.norm(e), c))
        loss_without_assign = tf.norm(tf.nest.map_structure(lambda e: tf.norm(e), c_))
    if not track:
        jac_answer = tf.reduce_sum(
            [tf.reduce_sum(tape.jacobian(c_[i], x) * tape.gradient(loss, c[i])) for i in range(3)]
        )
        want = tape.gradient(loss_without_assign, x)
        check(
            "sophisticated answer: Jacobian workaround (parity) == gradient(loss_without_assign, x)", jac_answer, want
        )
    else:
        check("sophisticated (random): gradkit's direct dloss/dx == the workaround", tape.gradient(loss, x), want)

sys.exit(1 if failures else 0)
