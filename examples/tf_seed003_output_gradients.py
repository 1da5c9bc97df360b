"""Seed 003: what ``output_gradients`` computes (without gpflow), with gradkit.tf.

``tape.gradient(z, x, output_gradients=dL_dz)`` is the vector-Jacobian product
``sum_i dL_dz[i] * dz[i]/dx`` = ``J^T v``, the chain rule dL/dx; not ``(dz/dx) * dL/dz``
with dz/dx the (summed) gradient. Checked against pure JAX; exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

failures = []


def check(what, got, want, expect=True):
    ok = np.allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6) == expect
    print(f"[{'ok' if ok else 'MISMATCH'}] {what}")
    if not ok:
        failures.append(what)


x = tf.Variable([1.0, 2.0, 3.0])
W = tf.constant([[1.0, 0.5, -1.0], [2.0, 0.0, 1.0]])
with tf.GradientTape(persistent=True) as tape:
    z = tf.math.tanh(tf.linalg.matmul(W, tf.reshape(x, [3, 1])))[:, 0]  # z = f(x), shape (2,)
    L = tf.reduce_sum(z**2)
dL_dz = tape.gradient(L, z)
dz_dx = tape.gradient(z, x)  # the gradient of sum(z): J^T 1
vjp = tape.gradient(z, x, output_gradients=dL_dz)  # J^T dL_dz
jac = tape.jacobian(z, x)  # J, shape (2, 3)
dL_dx = tape.gradient(L, x)

print("dz/dx (summed):", dz_dx.numpy())
print("output_gradients result:", vjp.numpy())
print("J^T v:", tf.linalg.matmul(tf.transpose(jac), tf.reshape(dL_dz, [2, 1]))[:, 0].numpy())


def f(x):
    return jnp.tanh(jnp.array([[1.0, 0.5, -1.0], [2.0, 0.0, 1.0]]) @ x)


x0 = jnp.array([1.0, 2.0, 3.0])
z0, pullback = jax.vjp(f, x0)
v = 2 * z0
check("dL/dz = 2z", dL_dz, v)
check("output_gradients == jax.vjp(f, x)(dL/dz)", vjp, pullback(v)[0])
check("output_gradients == J^T dL/dz", vjp, jax.jacrev(f)(x0).T @ v)
check("output_gradients == dL/dx (the chain rule)", vjp, dL_dx)
check("jacobian == jax.jacrev", jac, jax.jacrev(f)(x0))
check("without output_gradients: J^T 1", dz_dx, pullback(jnp.ones(2))[0])
check("the question's guess dz/dx * dL/dz is NOT it", vjp, dz_dx.numpy() * np.sum(v), expect=False)

sys.exit(1 if failures else 0)
