"""A ``custom_gradient`` whose ``grad_fn`` returns None for an input or a Variable: TensorFlow
gives None for it (or only the other paths' gradient, or zeros when asked for zeros); checked
against real TensorFlow. The functional API's ``jax.grad`` gives zeros there, JAX's convention."""

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from _oracles import count_compiles  # noqa: E402
from test_tf_parity import run_both  # noqa: E402

import gradkit as gk  # noqa: E402


def _mul_no_grad_for_y(tf):
    @tf.custom_gradient
    def f(x, y):
        def grad(dy):
            return dy * 2.0, None

        return x * y, grad

    return f


@pytest.mark.parametrize("mode", ["none", "zero"])
def test_an_input_grad_fn_returns_none_for_has_no_gradient(mode):
    def program(tf):
        f = _mul_no_grad_for_y(tf)
        x, y = tf.Variable(3.0), tf.Variable(4.0)
        with tf.GradientTape(persistent=True) as t:
            z = f(x, y)
            w = f(x, y) + y * 5.0  # another path reaches y: its gradient is that path's alone
        return t.gradient(z, [x, y], unconnected_gradients=mode), t.gradient(w, [x, y])

    run_both(program)


def test_a_variable_grad_fn_returns_none_for_has_no_gradient():
    def program(tf):
        v = tf.Variable(2.0)

        @tf.custom_gradient
        def f(x):
            def grad(dy, variables=None):
                return dy * v, [None]

            return x * v, grad

        x = tf.Variable(3.0)
        with tf.GradientTape() as t:
            z = f(x) * 2.0
        return t.gradient(z, [x, v])

    run_both(program)


def test_a_custom_gradient_with_a_none_input_still_compiles_once():
    """The cut is part of the graph's structure: a loop of same-shaped steps compiles once.
    Oracle: the hand derivation dz/dx = 1.5 * 2 (grad_fn's rule), with a new y each step."""
    import gradkit.tf as gtf

    f = _mul_no_grad_for_y(gtf)
    x = gtf.Variable(3.0)

    def step(value):
        y = gtf.Variable(value)
        with gtf.GradientTape() as t:
            z = f(x, y) * 1.5
        dx, dy = t.gradient(z, [x, y])
        assert dy is None
        np.testing.assert_allclose(np.asarray(dx), 3.0)

    step(0.0)
    step(1.0)
    assert count_compiles(lambda: [step(float(v)) for v in range(2, 6)]) == 0


def test_jax_grad_gives_zeros_for_an_input_grad_fn_returns_none():
    """JAX's convention: jax.grad of a custom_gradient whose grad_fn returns None for b is 0 for b."""
    f = gk.custom_gradient(lambda a, b: (a * b, lambda dy: (dy * 2.0, None)))
    da, db = jax.grad(lambda a, b: f(a, b), argnums=(0, 1))(3.0, 4.0)
    assert float(da) == 2.0 and float(db) == 0.0
