"""gk.jit with Variables passed as arguments together with Variables created on the first call.
Oracles: jax.jit of a pure rewrite over the explicit values, and values derived by hand."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk
from gradkit._errors import GradkitTypeError


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


class _Built:
    """A layer whose Variable w is created on its first call; it also reads the Variable c."""

    def __init__(self, c, init):
        self.c, self.init, self.w = c, init, None

    def __call__(self, x):
        if self.w is None:
            self.w = gk.Variable(self.init(), name="w")
        return jnp.sum(self.w * x * self.c)


@pytest.mark.parametrize("transform", [gk.grad, gk.jacfwd], ids=["grad", "jacfwd"])
def test_a_layer_built_on_a_first_call_made_under_gk_grad_of_a_variable_it_reads(transform):
    # jax hands the trace the Variable the transform differentiates as a value closed over; the
    # initial value does not read it. y = sum(w * x * c), w = 3: dy/dc = 3 x.
    c = gk.Variable(jnp.array([1.0, 2.0]), name="c")
    x = jnp.array([1.0, -2.0])
    layer = _Built(c, lambda: jnp.ones(2) * 3.0)
    f = gk.jit(layer)
    assert_close(transform(f, wrt=[c])(x), [3.0 * x])
    assert_close(layer.w.value, jnp.full(2, 3.0))
    assert_close(f(x), jnp.sum(3.0 * x * c.value))


@pytest.mark.parametrize("passed", [False, True], ids=["closed_over", "argument"])
def test_an_initial_value_reading_a_variable_gk_grad_differentiates_is_a_clear_error(passed):
    c = gk.Variable(jnp.array([1.0, 2.0]), name="c")
    layer = _Built(c, lambda: layer.c * 2.0)
    if passed:
        f = gk.jit(lambda v, x: (setattr(layer, "c", v), layer(x))[1])

        def call(x):
            return f(c, x)
    else:
        call = gk.jit(layer)
    with pytest.raises(GradkitTypeError, match=r"^\[gradkit\] Variable 'w' .* reads a Variable that a transform"):
        gk.grad(call, wrt=[c])(jnp.ones(2))
    assert_close(c.value, jnp.array([1.0, 2.0]))


_OP = st.tuples(
    st.sampled_from(["arg", "closed", "lazy"]),
    st.sampled_from(["assign", "assign_add", "assign_sub"]),
    st.sampled_from(["arg", "closed", "lazy", "x"]),
    st.floats(-2, 2, allow_nan=False, width=32),
)


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(_OP, min_size=1, max_size=6), alias=st.booleans())
def test_assignments_to_argument_closed_over_and_lazily_created_variables(ops, alias):
    # alias: the argument is the closed-over Variable itself, so both names reach one Variable.
    closed = gk.Variable(jnp.array([0.5, -1.0]), name="closed")
    arg = closed if alias else gk.Variable(jnp.array([2.0, 3.0]), name="arg")
    made = {}

    def body(arg, x):
        if not made:
            made["lazy"] = gk.Variable(jnp.zeros_like(closed.value) + 1.0, name="lazy")
        vs = {"arg": arg, "closed": closed, "lazy": made["lazy"]}
        for target, kind, source, c in ops:
            getattr(vs[target], kind)((x * jnp.ones(2) if source == "x" else vs[source].value) * c)
        return sum(jnp.sum(v.value) for v in vs.values())

    def name(n):
        return "closed" if alias and n == "arg" else n

    @jax.jit
    def pure(vals, x):
        vals = dict(vals)
        for target, kind, source, c in ops:
            t, s = name(target), name(source)
            value = (x * jnp.ones(2) if s == "x" else vals[s]) * c
            vals[t] = {"assign": value, "assign_add": vals[t] + value, "assign_sub": vals[t] - value}[kind]
        total = sum(jnp.sum(vals[name(n)]) for n in ("arg", "closed", "lazy"))
        return total, vals

    f = gk.jit(body)
    vals = {"closed": closed.value, "lazy": jnp.ones(2), **({} if alias else {"arg": arg.value})}
    for x in (0.1, 0.4, 0.7):
        expected, vals = pure(vals, jnp.float32(x))
        assert_close(f(arg, jnp.float32(x)), expected, rtol=1e-4, atol=1e-4)
        got = {"closed": closed.value, "lazy": made["lazy"].value, **({} if alias else {"arg": arg.value})}
        assert_close(got, vals, rtol=1e-4, atol=1e-4)
    assert f.trace_count == 2  # the discovery trace, then one with the lazily created Variable
