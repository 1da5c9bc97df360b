"""Ops whose complex inputs or edge values gradkit.tf once got wrong: ``sign`` of a complex
tensor (z / |z|, which varies with z), ``squared_difference`` of complex tensors (conj(d) d,
real-valued), ``angle``/``imag`` of a real tensor (TensorFlow's constants, no gradient), the
determinant of 0x0 matrices, ``digamma``'s derivative at infinity, and Keras' dtype for Python
numbers where JAX's 64-bit types are on. Oracles: finite differences in complex128 (with
TensorFlow's convention for complex gradients, dL/dRe + i dL/dIm), NumPy and hand derivations."""

import numpy as np
import pytest
from _x64_subprocess import run_script

import gradkit.tf as gtf

Z = np.array([1.0 + 2.0j, -0.5 + 0.3j], np.complex64)
W = np.array([0.7 - 0.2j, 1.1 + 0.4j])


def _complex_fd(f, z, eps=1e-7):
    z = z.astype(np.complex128)
    out = np.zeros_like(z)
    for i in range(z.size):
        e = np.zeros_like(z)
        e[i] = eps
        out[i] = (f(z + e) - f(z - e)) / (2 * eps) + 1j * (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
    return out


def _tape_gradient(fn, x):
    x = gtf.constant(x)
    with gtf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return y, tape.gradient(y, x)


def test_sign_of_a_complex_tensor_has_the_gradient_of_z_over_abs_z():
    _, grad = _tape_gradient(lambda x: gtf.math.real(gtf.reduce_sum(gtf.math.sign(x) * W.astype(np.complex64))), Z)
    expected = _complex_fd(lambda z: np.real(np.sum(z / np.abs(z) * W)), Z)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gtf.math.sign(Z).numpy(), Z / np.abs(Z), rtol=1e-6)
    assert gtf.math.sign(np.array([0j], np.complex64)).numpy().tolist() == [0j]


def test_squared_difference_of_complex_tensors_is_conj_d_times_d():
    y0 = np.array([0.5 - 1.0j, 2.0 + 0.5j], np.complex64)
    value, grad = _tape_gradient(
        lambda x: gtf.math.real(gtf.reduce_sum(gtf.math.squared_difference(x, y0) * W.astype(np.complex64))), Z
    )
    d = Z - y0
    np.testing.assert_allclose(gtf.math.squared_difference(Z, y0).numpy(), np.abs(d) ** 2, rtol=1e-6)
    # L = sum |d|^2 Re(w): dL/dRe(x) + i dL/dIm(x) = 2 Re(w) d (a hand derivation).
    np.testing.assert_allclose(grad.numpy(), 2 * W.real * d, rtol=1e-5)


def test_angle_and_imag_of_a_real_tensor_are_tensorflows_constants():
    x = np.array([1.0, -2.0, -0.0, np.nan], np.float32)
    for op, expected in ((gtf.math.angle, [0.0, np.pi, 0.0, 0.0]), (gtf.math.imag, [0.0, 0.0, 0.0, 0.0])):
        value, grad = _tape_gradient(op, x)
        np.testing.assert_allclose(value.numpy(), np.float32(expected))
        assert grad is None


def test_det_of_zero_by_zero_matrices_is_one_with_an_empty_gradient():
    value, grad = _tape_gradient(lambda x: gtf.reduce_sum(gtf.linalg.det(x)), np.zeros((2, 0, 0), np.float32))
    assert float(value) == 2.0 and tuple(grad.shape) == (2, 0, 0)


def test_digamma_derivative_vanishes_at_infinity():
    _, grad = _tape_gradient(lambda x: gtf.reduce_sum(gtf.math.digamma(x)), np.array([np.inf, 1e30, 2.0], np.float32))
    # trigamma(x) ~ 1/x for large x; trigamma(2) = pi^2/6 - 1.
    np.testing.assert_allclose(grad.numpy(), [0.0, 1e-30, np.pi**2 / 6 - 1], rtol=1e-5, atol=1e-29)


_KERAS_X64 = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
import gradkit.tf as tf

ops = tf.keras.ops
print(json.dumps([str(ops.arange(1, 3, 0.5).dtype), str(ops.linspace(0.0, 1.0, 3).dtype), str(ops.arange(3).dtype),
                  str(ops.add(np.float64(1.0), 1.5).dtype)]))
"""


def test_keras_python_numbers_stay_floatx_and_int32_with_64_bit_types():
    # Keras' result_type: a Python float alone is floatx, an int int32; a float64 array stays float64.
    assert run_script(_KERAS_X64, []) == ["float32", "float32", "int32", "float64"]


@pytest.mark.parametrize("op", ["sign", "angle", "imag"])
def test_against_tensorflow(op):
    tf_real = pytest.importorskip("tensorflow")
    for x in (Z, np.array([1.0, -2.0, -0.0], np.float32)):
        np.testing.assert_allclose(getattr(gtf.math, op)(x).numpy(), getattr(tf_real.math, op)(x).numpy(), rtol=1e-6)
