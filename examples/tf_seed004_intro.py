"""Seed 004 (TensorFlow's intro to gradients), ported to gradkit.tf by changing the import.

Every number is checked against an independent pure-JAX computation; exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

failures = []


def check(what, got, want, rtol=1e-5, atol=1e-6):
    ok = np.allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
    print(f"[{'ok' if ok else 'MISMATCH'}] {what}")
    if not ok:
        failures.append(what)
        print("   got ", np.asarray(got), "\n   want", np.asarray(want))


# --- the TensorFlow program (only the import differs) ---------------------------------------
def comp_gradient_dy_dx(x, persistent=False):
    k = np.array(range(20)).reshape(int(x.shape[-1]), int(20 / x.shape[-1]))
    with tf.GradientTape() as tape:  # recording ops.
        y = (x**2) @ k
    # dy = 2x * dx
    dy_dx = tape.gradient(y, x)
    return y, dy_dx


x1 = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
y1, g1 = comp_gradient_dy_dx(x1)
print("y=%r\ndydx=%r\n" % (y1, g1))  # noqa: UP031
x2 = tf.Variable([[1.0, 2.0, 3, 4], [3.0, 4.0, 5, 6]])
y2, g2 = comp_gradient_dy_dx(x2)
print("y=%r\ndydx=%r\n" % (y2, g2))  # noqa: UP031


def linear_model_gradients_DcDw_DcDb(w, x, b):  # noqa: N802
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        cost = tf.reduce_mean(y**2)
        # here cost is a reduced scalar value.
        [dc_dw, dc_db] = tape.gradient(cost, [w, b])  #
        return [cost, dc_dw, dc_db]


w = tf.Variable(tf.random.normal((3, 2)), name="w")
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
x = [[1.0, 2.0, 3.0]]

cost, dc_dw, dc_db = linear_model_gradients_DcDw_DcDb(w, x, b)
print("LMG:\n  COST:%r\n  DcDw:%r\n  DcDb:%r\n" % (cost.numpy(), dc_dw.numpy(), dc_db.numpy()))  # noqa: UP031

layer = tf.keras.layers.Dense(2, activation="relu")
x = tf.constant([[1.0, 2.0, 3.0]])
with tf.GradientTape() as tape:
    # Forward pass
    y = layer(x)
    loss = tf.reduce_mean(y**2)
# Calculate gradients with respect to every trainable variable
grad = tape.gradient(loss, layer.trainable_variables)

for var, g in zip(layer.trainable_variables, grad):
    print(f"{var.name}, shape: {g.shape}")


# --- independent pure-JAX checks --------------------------------------------------------------
def jax_dy_dx(x):
    k = jnp.arange(20.0).reshape(x.shape[-1], 20 // x.shape[-1])
    return jax.grad(lambda x: jnp.sum((x**2) @ k))(x)


check("dy/dx 2x2", g1, jax_dy_dx(jnp.array(x1.numpy())))
# The seed's comment "[[2, 4], [6, 8]]" forgets k; TensorFlow itself prints [[90, 580], [270, 1160]].
check("dy/dx 2x2 value", g1, [[90.0, 580.0], [270.0, 1160.0]])
check("dy/dx 2x4", g2, jax_dy_dx(jnp.array(x2.numpy())))
check("dy/dx 2x4 value", g2, [[20.0, 140.0, 360.0, 680.0], [60.0, 280.0, 600.0, 1020.0]])
W, B, X = jnp.array(w.numpy()), jnp.array(b.numpy()), jnp.array([[1.0, 2.0, 3.0]])
jcost = lambda w, b: jnp.mean((X @ w + b) ** 2)  # noqa: E731
check("linear cost", cost, jcost(W, B))
jg = jax.grad(jcost, argnums=(0, 1))(W, B)
check("dc/dw", dc_dw, jg[0])
check("dc/db", dc_db, jg[1])
K, Bl = jnp.array(layer.kernel.numpy()), jnp.array(layer.bias.numpy())
jl = jax.grad(lambda k, b: jnp.mean(jax.nn.relu(X @ k + b) ** 2), argnums=(0, 1))(K, Bl)
check("dense dloss/dkernel", grad[0], jl[0])
check("dense dloss/dbias", grad[1], jl[1])
check("names", [v.name for v in layer.trainable_variables] == ["dense/kernel:0", "dense/bias:0"], True)

sys.exit(1 if failures else 0)
