"""tf.linalg edges where gradkit.tf once parted from TensorFlow 2.21: complex ``eigh`` reads the
real part of the diagonal alone (so its gradient there is real), complex ``logdet`` is real,
``matrix_rank`` is int32, and ``tf.norm`` with a general ``ord`` and no axis is the p-norm of all
the elements, ``tf.norm`` refuses the orders and axes TensorFlow refuses, and its Euclidean
norm of a complex tensor stays complex. Oracles: finite differences of gradkit's own forward (in
complex128, needing 64-bit types: a subprocess), NumPy, and hand derivations."""

import numpy as np
import pytest
from _x64_subprocess import run_script

import gradkit.tf as gtf

_EIGH_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
import gradkit.tf as tf

rs = np.random.RandomState(0)
a = rs.uniform(-1, 1, (3, 3)) + 1j * rs.uniform(-1, 1, (3, 3))
A = a @ a.conj().T + 3 * np.eye(3)
W = np.array([[1.0, 0.5, 0.2], [0.3, 1.2, 0.7], [0.9, 0.4, 1.1]])

def loss(x):  # |V| does not depend on each eigenvector's phase
    return tf.reduce_sum(tf.abs(tf.linalg.eigh(x)[1]) * W) + tf.reduce_sum(tf.linalg.eigh(x)[0] * [1.0, -2.0, 0.5])

x = tf.constant(A)
with tf.GradientTape() as tape:
    tape.watch(x)
    value = loss(x)
grad = tape.gradient(value, x).numpy()
eps, fd = 1e-6, np.zeros_like(A)
for i in range(3):
    for j in range(3):
        for u in (1, 1j):
            plus, minus = A.copy(), A.copy()
            plus[i, j] += eps * u
            minus[i, j] -= eps * u
            fd[i, j] += u * (float(loss(tf.constant(plus))) - float(loss(tf.constant(minus)))) / (2 * eps)
print(json.dumps({"error": float(np.abs(grad - fd).max()), "diagonal_imag": float(np.abs(np.diag(grad).imag).max())}))
"""


def test_complex_eigh_gradient_matches_finite_differences():
    out = run_script(_EIGH_SCRIPT, [])
    assert out["error"] < 1e-7 and out["diagonal_imag"] == 0.0, out


def test_complex_logdet_is_real():
    a = np.array([[2.0, 1.0 - 1.0j], [1.0 + 1.0j, 3.0]], np.complex64)
    out = gtf.linalg.logdet(gtf.constant(a))
    assert out.dtype == np.float32
    np.testing.assert_allclose(float(out), np.log(np.linalg.det(a).real), rtol=1e-6)  # det = 6 - 2 = 4


def test_matrix_rank_is_int32():
    out = gtf.linalg.matrix_rank(gtf.constant([[1.0, 2.0], [2.0, 4.0]]))
    assert out.dtype == np.int32 and int(out) == 1


@pytest.mark.parametrize("ord,shape", [(3, (2, 3)), (0.5, (1, 2, 3)), (1.5, (4,))])
def test_norm_with_a_general_order_and_no_axis_is_over_all_elements(ord, shape):
    x = np.arange(1, 1 + np.prod(shape), dtype=np.float32).reshape(shape) * np.float32(0.7)
    v = gtf.Variable(x)
    with gtf.GradientTape() as tape:
        out = gtf.norm(v, ord=ord)
    flat = x.reshape(-1).astype(np.float64)
    p_norm = np.sum(np.abs(flat) ** ord) ** (1 / ord)
    np.testing.assert_allclose(float(out), p_norm, rtol=1e-5)
    # d||x||_p / dx = sign(x) |x|^(p-1) / ||x||_p^(p-1)
    np.testing.assert_allclose(tape.gradient(out, v).numpy(), (np.abs(x) ** (ord - 1) / p_norm ** (ord - 1)), rtol=1e-4)
    assert gtf.norm(x, ord=ord, keepdims=True).shape == (1,) * len(shape)


NORM_REFUSED = [
    {"ord": "fro"},
    {"ord": "fro", "axis": 1},
    {"ord": "nuc", "axis": (0, 1)},
    {"ord": 0},
    {"ord": -1},
    {"ord": -np.inf},
    {"axis": (0,)},
    {"axis": (1, 1)},
    {"ord": 3, "axis": (0, 1)},
]


@pytest.mark.parametrize("kwargs", NORM_REFUSED, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
def test_norm_refuses_what_tensorflow_refuses(kwargs):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.norm got"):
        gtf.norm(x, **kwargs)
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf_real.norm(x, **kwargs)


def test_norm_refuses_integers_and_takes_the_valid_neighbours():
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.norm takes a tensor of dtype"):
        gtf.norm(gtf.constant([3, 4]))
    x = np.array([[3.0, 0.0, -4.0], [1.0, 2.0, 2.0]], np.float32)
    np.testing.assert_allclose(float(gtf.norm(x, ord="fro", axis=(0, 1))), np.sqrt(34.0), rtol=1e-6)
    np.testing.assert_allclose(float(gtf.norm(x, ord=np.inf, axis=(0, 1))), 7.0)  # the largest row sum
    np.testing.assert_allclose(gtf.norm(x, ord=1, axis=1).numpy(), [7.0, 5.0])


@pytest.mark.parametrize(
    ("ord", "axis", "complex_result"),
    [
        ("euclidean", None, True),
        (2, 1, True),
        ("fro", (0, 1), True),
        (1, None, False),
        (3, None, False),
        (2, (0, 1), False),
    ],
)
def test_complex_norm_keeps_tensorflows_dtype(ord, axis, complex_result):
    # TensorFlow's Euclidean and Frobenius norms are sqrt(sum(x * conj(x))), complex with a zero
    # imaginary part; the orders that go through abs or singular values are real.
    a = np.array([[3 + 4j, 1j], [2, 1 - 1j]], np.complex64)
    out = gtf.norm(gtf.constant(a), ord=ord, axis=axis)
    assert out.dtype == (np.complex64 if complex_result else np.float32)
    if axis is None and ord not in ("euclidean", "fro"):
        expected = np.sum(np.abs(a) ** ord) ** (1 / ord)  # TensorFlow's p-norm of all elements
    else:
        expected = np.linalg.norm(a, ord=None if ord in ("euclidean", "fro") else ord, axis=axis)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_complex_euclidean_norm_gradient_is_x_over_norm():
    # For a real f of z = u + iv TensorFlow returns df/du + i df/dv; for f = ||z|| that is
    # z / ||z|| (a hand derivation: d sqrt(sum u^2 + v^2) = (u du + v dv) / ||z||).
    a = np.array([[3 + 4j, 1j], [2, 1 - 1j]], np.complex64)
    x = gtf.Variable(a)
    with gtf.GradientTape() as tape:
        y = gtf.math.real(gtf.norm(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), a / np.linalg.norm(a), rtol=1e-6)
