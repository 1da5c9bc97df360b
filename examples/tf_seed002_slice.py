"""Seed 002 (slice assignment breaks tf.GradientTape), ported to gradkit.tf by changing the import.

In TensorFlow ``g.gradient(o, patch)`` is None; in gradkit the slice assignment is a pure
state-threading step, so d o/d patch is exact and d o/d x is zero on the overwritten block.
Checked against pure JAX; exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

failures = []


def check(what, got, want):
    ok = got is not None and np.allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    print(f"[{'ok' if ok else 'MISMATCH'}] {what}: {None if got is None else np.asarray(got).tolist()}")
    if not ok:
        failures.append(what)


# --- the TensorFlow program (only the import differs) ---------------------------------------
x = tf.Variable([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]])
patch = tf.Variable([[0.0, 1.0], [2.0, 3.0]])
with tf.GradientTape() as g:
    g.watch(patch)
    x[:2, :2].assign(patch)
    y = tf.tensordot(x, tf.transpose(x), axes=1)
    o = tf.reduce_mean(y)
do_dpatch = g.gradient(o, patch)
print("do_dpatch:", do_dpatch)  # TensorFlow: None

x = tf.Variable([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]])
patch = tf.Variable([[0.0, 1.0], [2.0, 3.0]])
with tf.GradientTape() as g:
    g.watch(patch)
    x[:2, :2].assign(patch)
    y = tf.tensordot(x, tf.transpose(x), axes=1)
    o = tf.reduce_mean(y)
do_dx = g.gradient(o, x)
print("do_dx:", do_dx)  # TensorFlow: [[1, 2, 52], [1, 2, 52]]

# The answer's workaround (padding instead of assignment): works in both.
x = tf.Variable([[0.0, 0.0, 4.0], [0.0, 0.0, 100.0]])
patch = tf.Variable([[0.0, 1.0], [2.0, 3.0]])
with tf.GradientTape() as g:
    g.watch(patch)
    padding = tf.constant([[0, 0], [0, 1]])
    padde_patch = tf.pad(patch, padding, mode="CONSTANT", constant_values=0)
    revised_x = x + padde_patch
    y = tf.tensordot(revised_x, tf.transpose(revised_x), axes=1)
    o = tf.reduce_mean(y)
do_dpatch_pad = g.gradient(o, patch)
print("do_dpatch (pad):", do_dpatch_pad)

# TensorFlow parity mode: the assignment cuts the path, as in TensorFlow.
x = tf.Variable([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]])
patch = tf.Variable([[0.0, 1.0], [2.0, 3.0]])
with tf.GradientTape(persistent=True, track_assignments=False) as g:
    g.watch(patch)
    x[:2, :2].assign(patch)
    y = tf.tensordot(x, tf.transpose(x), axes=1)
    o = tf.reduce_mean(y)
parity_patch, parity_x = g.gradient(o, patch), g.gradient(o, x)


# --- independent pure-JAX checks --------------------------------------------------------------
def o_of(x0, p):
    x1 = x0.at[:2, :2].set(p)
    return jnp.mean(jnp.tensordot(x1, x1.T, axes=1))


X0 = jnp.array([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]])
P = jnp.array([[0.0, 1.0], [2.0, 3.0]])
gx, gp = jax.grad(o_of, argnums=(0, 1))(X0, P)
check("do/dpatch (exact; TensorFlow None)", do_dpatch, gp)
check("do/dpatch == [[1,2],[1,2]]", do_dpatch, [[1.0, 2.0], [1.0, 2.0]])
check("do/dx (zero on the overwritten block)", do_dx, gx)
check("pad workaround", do_dpatch_pad, [[1.0, 2.0], [1.0, 2.0]])
check("parity: do/dx as TensorFlow prints", parity_x, [[1.0, 2.0, 52.0], [1.0, 2.0, 52.0]])
ok = parity_patch is None
print(f"[{'ok' if ok else 'MISMATCH'}] parity: do/dpatch is None (TensorFlow's answer)")
if not ok:
    failures.append("parity None")

sys.exit(1 if failures else 0)
