"""gk.jit with Variables passed as arguments together with Variables created on the first call.
Oracles: jax.jit of a pure rewrite over the explicit values, and values derived by hand."""

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import assert_close

import gradkit as gk


class _Lazy:
    """A layer whose Variable is created on its first call, from the Variable ``source`` it is given."""

    def __init__(self):
        self.s = None

    def __call__(self, source, x):
        if self.s is None:
            self.s = gk.Variable(source * 2.0, name="s")
        source.assign(source * x)
        return jnp.sum(self.s.value * source.value)


def test_an_initial_value_read_from_a_variable_argument_is_lifted_as_from_a_closed_over_one():
    # s starts from v's value at the call (init_scope), then v is scaled by x in each call.
    @jax.jit
    def pure(s, v, x):
        v = v * x
        return jnp.sum(s * v), v

    v0 = jnp.array([1.0, -2.0])
    s_ref, v_ref = v0 * 2.0, v0
    passed, layer = gk.Variable(v0, name="v"), _Lazy()
    closed, closed_layer = gk.Variable(v0, name="c"), _Lazy()
    f = gk.jit(layer)
    g = gk.jit(lambda x: closed_layer(closed, x))
    for x in (3.0, 0.5):
        out, v_ref = pure(s_ref, v_ref, x)
        assert_close((f(passed, x), g(x)), (out, out))
    assert_close((passed.value, closed.value), (v_ref, v_ref))
    assert_close((layer.s.value, closed_layer.s.value), (s_ref, s_ref))
    assert f.trace_count == g.trace_count == 2  # the discovery trace, then one with s as an input


def test_the_lifted_initial_value_carries_no_gradient_to_the_argument():
    # y = sum(s * v * x) with s a Variable of its own: dy/dv = s * x, dy/ds = v * x.
    layer = _Lazy()
    v = gk.Variable(np.array([1.0, 2.0], np.float32), name="v")
    f = gk.jit(lambda v: layer(v, 1.0))
    with gk.GradientTape(persistent=True) as tape:
        y = f(v)
    s = np.array([2.0, 4.0], np.float32)
    np.testing.assert_allclose(np.asarray(y), np.sum(s * np.array([1.0, 2.0])))
    np.testing.assert_allclose(np.asarray(tape.gradient(y, v)), s)
    np.testing.assert_allclose(np.asarray(tape.gradient(y, layer.s)), [1.0, 2.0])
