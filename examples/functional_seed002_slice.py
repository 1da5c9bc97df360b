"""Seed 002 (slice assignment breaks the tape) with gradkit's functional API.

``x[:2, :2].assign(patch)``, then ``o = mean(x @ x.T)``: TensorFlow returns None for
d o/d patch. gk.grad gives the exact gradient for the patch and for x (zero on the
overwritten block). Checked against a pure-JAX rewrite; exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

X0 = np.array([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]], np.float32)
PATCH0 = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)

x = gk.Variable(X0, name="x")
patch = gk.Variable(PATCH0, name="patch")


def objective():
    x[:2, :2].assign(patch)
    y = jnp.tensordot(x, x.T, axes=1)
    return jnp.mean(y)


def pure_objective(x, patch):
    x = x.at[:2, :2].set(patch)
    return jnp.mean(jnp.tensordot(x, x.T, axes=1))


d_x, d_patch = gk.grad(objective, wrt=[x, patch])()
want_x, want_patch = jax.grad(pure_objective, argnums=(0, 1))(jnp.asarray(X0), jnp.asarray(PATCH0))
print("do/dpatch (TensorFlow: None):\n", np.asarray(d_patch))
print("do/dx (zero on the overwritten block):\n", np.asarray(d_x))

ok = np.allclose(d_patch, want_patch) and np.allclose(d_x, want_x)
ok &= np.allclose(d_patch, [[1.0, 2.0], [1.0, 2.0]])  # the answer's workaround, computed in TensorFlow
ok &= np.array_equal(x.numpy(), X0)  # differentiating assigned nothing
print("[ok]" if ok else "[MISMATCH]", "gradkit equals the pure-JAX rewrite")
sys.exit(0 if ok else 1)
