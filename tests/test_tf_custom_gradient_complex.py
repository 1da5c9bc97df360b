"""``tf.custom_gradient`` with complex values: ``grad_fn`` is written in TensorFlow's convention
(the gradient of a real loss L of z = x + iy is dL/dx + i dL/dy, the conjugate of jax's
cotangent), so the ``dy`` it takes and the gradients it returns are in that convention. The
oracle: a hand derivation, gradkit's built-in ops (which follow TensorFlow's convention at the
tape), and real TensorFlow where it is installed. ``gk.custom_gradient`` keeps jax's convention."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

TFS = [pytest.param("gk", id="gradkit"), pytest.param("tf", id="tensorflow")]


def _tf(which):
    return gtf if which == "gk" else pytest.importorskip("tensorflow")


def _square(tf):
    @tf.custom_gradient
    def square(z):
        def grad(dy):
            return dy * 2 * tf.math.conj(z)  # TensorFlow's gradient of z * z

        return z * z, grad

    return square


@pytest.mark.parametrize("which", TFS)
def test_a_custom_gradient_in_tensorflows_convention(which):
    tf = _tf(which)
    z = tf.Variable(1 + 2j, dtype=tf.complex64)
    with tf.GradientTape(persistent=True) as tape:
        custom = tf.math.imag(_square(tf)(z))
        built_in = tf.math.imag(z * z)
    # L = imag((x + iy)^2) = 2xy: dL/dx + i dL/dy = 2y + 2ix = 4 + 2i at z = 1 + 2i
    assert complex(tape.gradient(custom, z)) == pytest.approx(4 + 2j)
    assert complex(tape.gradient(built_in, z)) == pytest.approx(4 + 2j)


@pytest.mark.parametrize("which", TFS)
def test_a_custom_gradient_with_variables_in_tensorflows_convention(which):
    tf = _tf(which)
    z = tf.Variable(1 + 2j, dtype=tf.complex64)
    v = tf.Variable(2 + 1j, dtype=tf.complex64)

    @tf.custom_gradient
    def times_v(z):
        def grad(dy, variables=None):
            return dy * tf.math.conj(v), [dy * tf.math.conj(z)]

        return z * v, grad

    with tf.GradientTape(persistent=True) as tape:
        custom = tf.math.real(times_v(z) * (1 + 2j))
        built_in = tf.math.real(z * v * (1 + 2j))
    got = [complex(g) for g in tape.gradient(custom, [z, v])]
    want = [complex(g) for g in tape.gradient(built_in, [z, v])]
    # L = Re(c z v) with c = 1 + 2i: its gradient for z is conj(c v), for v conj(c z)
    assert got == pytest.approx([np.conj((1 + 2j) * (2 + 1j)), np.conj((1 + 2j) * (1 + 2j))])
    assert got == pytest.approx(want)


@pytest.mark.parametrize("which", TFS)
def test_a_custom_gradient_of_complex_values_inside_a_function(which):
    tf = _tf(which)
    square = _square(tf)

    @tf.function
    def gradient(z):
        with tf.GradientTape() as tape:
            tape.watch(z)
            loss = tf.math.real(square(z) * tf.constant(1j, tf.complex64))
        return tape.gradient(loss, z)

    # L = Re(i z^2) = -2xy: the gradient is -2y - 2ix = -4 - 2i at z = 1 + 2i
    assert complex(gradient(tf.constant(1 + 2j, tf.complex64))) == pytest.approx(-4 - 2j)


def test_the_native_custom_gradient_keeps_jaxs_convention():
    @gk.custom_gradient
    def square(z):
        return z * z, lambda g: g * 2 * z  # jax's cotangent rule for z * z (holomorphic)

    def loss(z):
        return jnp.imag(square(z))

    z = jnp.asarray(1 + 2j, jnp.complex64)
    assert complex(gk.grad(loss)(z)) == pytest.approx(complex(jax.grad(lambda z: jnp.imag(z * z))(z)))
