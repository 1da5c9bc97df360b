"""Variables read inside functions jax compiles once and reuses (a ``jax.jit`` helper, a lax body
defined outside the transformed function), called within gradkit's transforms.

jax keeps such a function's program with the values it closed over when first traced. gradkit
refuses (``gk.jit``) or warns (the other transforms) where that would freeze a Variable's value,
and computes exactly where the body is traced afresh; the oracle is the pure-JAX rewrite that
passes the Variable's value in as an argument.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

CACHED = r"^\[gradkit\] step reads Variable 'v' inside a function that jax compiles once and reuses"


def _pure(x, v):
    return jax.lax.fori_loop(0, 2, lambda i, c: jnp.sin(c * v), x)


def _check_against_pure(step, v):
    """``step`` sees each new value of ``v``, and its gradient with respect to ``v`` is exact."""
    x = jnp.array(0.7)
    for value in (2.0, 5.0):
        v.assign(value)
        np.testing.assert_allclose(step(x), _pure(x, value), rtol=1e-6)
        (grad,) = gk.grad(step, wrt=[v])(x)
        np.testing.assert_allclose(grad, jax.grad(_pure, 1)(x, value), rtol=1e-6)


def test_jit_refuses_a_jax_jit_helper_that_reads_a_variable():
    v = gk.Variable(jnp.array(2.0), name="v")

    @jax.jit
    def helper(x):
        return x * v.value

    @gk.jit
    def step(x):
        out = helper(x)
        v.assign(out)  # refused before it runs: the Variable keeps its value
        return out

    with pytest.raises(gk.GradkitError, match=CACHED):
        step(jnp.array(1.0))
    np.testing.assert_array_equal(v.value, 2.0)


def test_jit_refuses_a_loop_body_defined_outside_that_reads_a_variable():
    v = gk.Variable(jnp.array(2.0), name="v")

    def body(i, c):
        return jnp.sin(c * v.value)

    @gk.jit
    def step(x):
        return jax.lax.fori_loop(0, 2, body, x)

    with pytest.raises(gk.GradkitError, match=CACHED):
        step(jnp.array(1.0))


def test_jit_helper_taking_the_value_as_an_argument_sees_assignments_and_gradients():
    v = gk.Variable(jnp.array(2.0), name="v")

    @jax.jit
    def helper(x, w):
        return _pure(x, w)

    @gk.jit
    def step(x):
        return helper(x, v.value)

    _check_against_pure(step, v)


def test_bodies_defined_inside_the_function_are_traced_afresh():
    v = gk.Variable(jnp.array(2.0), name="v")

    @gk.jit
    def step(x):
        return jax.lax.fori_loop(0, 2, lambda i, c: jnp.sin(c * v.value), x)

    _check_against_pure(step, v)


def test_grad_warns_of_a_variable_outside_wrt_read_inside_a_jax_jit_helper():
    v = gk.Variable(jnp.array(2.0), name="v")

    @jax.jit
    def helper(x):
        return jnp.sin(x * v.value)

    with pytest.warns(gk.GradkitWarning, match="Variable 'v' was read inside jax.jit"):
        gk.grad(helper)(jnp.array(1.0))


def test_transforms_of_a_gk_jit_function_do_not_warn_and_see_assignments():
    w = gk.Variable(jnp.array([0.5, -0.2]), name="w")
    u = gk.Variable(jnp.array(1.5), name="u")
    f = gk.jit(lambda x: jnp.sum(jax.lax.fori_loop(0, 2, lambda i, c: jnp.sin(c * w.value), x)) * u)

    def pure(x, w, u):
        return jnp.sum(_pure(x, w)) * u

    x = jnp.array([0.3, 0.8])
    for value in ([0.5, -0.2], [2.0, 3.0]):
        w.assign(jnp.array(value))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            (grad,) = gk.grad(f, wrt=[u])(x)
            per_example = gk.vmap(f)(jnp.stack([x, 2 * x]))
        np.testing.assert_allclose(grad, jax.grad(pure, 2)(x, w.value, u.value), rtol=1e-6)
        np.testing.assert_allclose(
            per_example, jax.vmap(pure, (0, None, None))(jnp.stack([x, 2 * x]), w.value, u.value)
        )


def test_jit_keeps_refusing_after_the_first_call():
    """jax keeps the constant in its cache, so a later call would compute with the first value:
    every call is refused, and the Variable keeps its value each time."""
    v = gk.Variable(jnp.array(2.0), name="v")

    def body(i, c):
        return jnp.sin(c * v.value)

    @gk.jit
    def step(x):
        return jax.lax.fori_loop(0, 2, body, x)

    for value in (2.0, 4.0, 5.0):
        v.assign(value)
        with pytest.raises(gk.GradkitError, match=CACHED):
            step(jnp.array(1.0))
        np.testing.assert_array_equal(v.value, value)


KEPT = r"^\[gradkit\] jax met a value traced by an earlier call. Variable 'v' was read inside a jax trace"


@pytest.mark.parametrize("wrap", ["fori_body", "jax_jit_helper", "checkpoint"])
def test_grad_names_the_variable_a_cached_function_kept_a_tracer_of(wrap):
    """Under gk.grad the first call is exact (the pure-JAX rewrite's gradient); a second call meets
    the tracer jax's cache kept from the first: gradkit's error names the Variable and the fix, and
    is still jax's UnexpectedTracerError."""
    v = gk.Variable(jnp.array(1.5), name="v")
    if wrap == "fori_body":

        def body(i, c):
            return jnp.sin(c * v.value)

        def loss(x):
            return jax.lax.fori_loop(0, 2, body, x)
    else:
        inner = (jax.jit if wrap == "jax_jit_helper" else jax.checkpoint)(lambda c: jnp.sin(c * v.value))

        def loss(x):
            return inner(inner(x))

    x = jnp.array(0.7)
    (grad,) = gk.grad(loss, wrt=[v])(x)
    np.testing.assert_allclose(grad, jax.grad(_pure, 1)(x, 1.5), rtol=1e-6)
    with pytest.raises(jax.errors.UnexpectedTracerError, match=KEPT) as caught:
        gk.grad(loss, wrt=[v])(x)
    assert isinstance(caught.value, gk.GradkitError)
    np.testing.assert_array_equal(v.value, 1.5)
