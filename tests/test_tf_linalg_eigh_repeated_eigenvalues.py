"""``tf.linalg.eigh`` where eigenvalues repeat (an identity-initialised covariance, a matrix
square root of a diagonal matrix): TensorFlow's gradient broadens ``1 / (e_j - e_i)`` to 0 for
equal eigenvalues and stays finite; so does gradkit's. Oracles: hand derivations of TensorFlow's
rule, finite differences at distinct eigenvalues (64-bit, a subprocess), and TensorFlow itself."""

import numpy as np
import pytest
from _x64_subprocess import run_script

import gradkit.tf as gtf

W = np.arange(9, dtype=np.float32).reshape(3, 3) / 9.0
DIAGONAL = np.diag([1.0, 1.0, 2.0]).astype(np.float32)


def _reconstruction_gradient(tf, a):
    x = tf.constant(a)
    with tf.GradientTape() as tape:
        tape.watch(x)
        e, v = tf.linalg.eigh(x)
        loss = tf.reduce_sum(tf.matmul(v * e[None, :], v, adjoint_b=True) * W)
    return np.asarray(tape.gradient(loss, x))


def _expected_reconstruction_gradient():
    # The rule's G = V (diag(dL/de) + F o (V^T dL/dV)) V^T with V = I, F_ij = 1/(e_j - e_i)
    # (0 where e_i == e_j); the lower triangle of G + G^T, its diagonal halved. Off the
    # repeated block it is the exact d sum(W o A)/dA_ij = W_ij + W_ji; inside it, 0.
    expected = np.tril(W + W.T)
    np.fill_diagonal(expected, np.diag(W))
    expected[1, 0] = 0.0  # e_0 == e_1: TensorFlow's broadened reciprocal gives 0 here
    return expected


def test_eigenvector_gradient_is_finite_and_follows_tensorflows_rule():
    np.testing.assert_allclose(_reconstruction_gradient(gtf, DIAGONAL), _expected_reconstruction_gradient(), atol=1e-6)


def test_inside_tf_function_too():
    @gtf.function
    def gradient(a):
        with gtf.GradientTape() as tape:
            tape.watch(a)
            e, v = gtf.linalg.eigh(a)
            loss = gtf.reduce_sum(gtf.matmul(v * e[None, :], v, adjoint_b=True) * W)
        return tape.gradient(loss, a)

    np.testing.assert_allclose(gradient(gtf.constant(DIAGONAL)).numpy(), _expected_reconstruction_gradient(), atol=1e-6)


def test_second_derivative_of_eigenvalues_at_the_identity():
    # L = sum(c * e^2): dL/dA = V diag(2 c e) V^T = diag(2c) at A = I; s = |dL/dA|^2 has
    # ds/de_i = 8 c_i^2 e_i, and the eigenvector path carries F = 0 in the repeated block.
    c = np.array([1.0, 2.0, 3.0], np.float32)
    x = gtf.constant(np.eye(3, dtype=np.float32))
    with gtf.GradientTape() as outer:
        outer.watch(x)
        with gtf.GradientTape() as inner:
            inner.watch(x)
            loss = gtf.reduce_sum(gtf.linalg.eigvalsh(x) ** 2 * c)
        g = inner.gradient(loss, x)
        s = gtf.reduce_sum(g * g)
    np.testing.assert_allclose(g.numpy(), np.diag(2 * c), atol=1e-6)
    np.testing.assert_allclose(outer.gradient(s, x).numpy(), np.diag(8 * c**2), atol=1e-5)


_FINITE_DIFFERENCES = """
import json
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads
import gradkit.tf as tf

rs = np.random.RandomState(0)
a = rs.randn(3, 3)
a = a @ a.T + np.diag([1.0, 2.0, 3.0])
W = jnp.arange(9.0).reshape(3, 3)

def loss(x):  # |V| does not depend on each eigenvector's sign
    e, v = tf.linalg.eigh(x)
    return jnp.sum(jnp.abs(jnp.asarray(v)) * W) + jnp.sum(jnp.asarray(e) * jnp.array([1.0, -2.0, 0.5]))

check_grads(loss, (jnp.asarray(a),), order=2, modes=("fwd", "rev"))
print(json.dumps({"ok": True}))
"""


def test_distinct_eigenvalues_match_finite_differences_in_both_modes_to_second_order():
    assert run_script(_FINITE_DIFFERENCES, [])["ok"]


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(
        _reconstruction_gradient(gtf, DIAGONAL), _reconstruction_gradient(tf, DIAGONAL), atol=1e-6
    )
    sqrt_weights = []
    for lib in (tf, gtf):
        x = lib.constant(DIAGONAL)
        with lib.GradientTape() as tape:
            tape.watch(x)
            e, v = lib.linalg.eigh(x)
            loss = lib.reduce_sum(lib.matmul(v * lib.sqrt(e)[None, :], v, adjoint_b=True) * W)
        sqrt_weights.append(np.asarray(tape.gradient(loss, x)))
    np.testing.assert_allclose(sqrt_weights[1], sqrt_weights[0], rtol=1e-5, atol=1e-6)
