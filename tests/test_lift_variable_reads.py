"""``gk.lift(fn)`` records ``fn`` as one compiled op: a Variable ``fn`` reads from a closure would
be a constant of that op, so the first call refuses it (the Variables are left unchanged); a
Variable passed as an argument is read at each call and differentiated. Oracle: the same
arithmetic written out, and ``jax.grad`` of it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
from gradkit import GradkitError

gnp = gk.numpy


def test_a_variable_read_from_a_closure_is_refused():
    c = gk.Variable(2.0)
    v = gk.Variable(jnp.array([1.0, 2.0]))
    closing = gk.lift(lambda x: x * c)
    with pytest.raises(GradkitError, match=r"gk.lift\(<lambda>\).*Pass the Variable in as an argument"):
        with gk.GradientTape():
            gnp.sum(closing(v))
    assert float(c.value) == 2.0 and v.value.tolist() == [1.0, 2.0]


def test_a_variable_passed_in_is_read_at_each_call_and_differentiated():
    c = gk.Variable(2.0)
    v = gk.Variable(jnp.array([1.0, 2.0]))
    scaled = gk.lift(lambda x, w: jnp.tanh(x * w))
    for value in (2.0, 5.0, 0.5):
        c.assign(value)
        with gk.GradientTape() as tape:
            y = gnp.sum(scaled(v, c))
        grad_v, grad_c = tape.gradient(y, [v, c])
        want = jax.grad(lambda x, w: jnp.sum(jnp.tanh(x * w)), argnums=(0, 1))(v.value, c.value)
        assert float(y) == pytest.approx(float(jnp.sum(jnp.tanh(v.value * value))), rel=1e-6)
        np.testing.assert_allclose(grad_v.numpy(), want[0], rtol=1e-6)
        np.testing.assert_allclose(float(grad_c), float(want[1]), rtol=1e-6)
