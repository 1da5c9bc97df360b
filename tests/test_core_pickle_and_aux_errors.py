"""A Variable a tape left with a pending value pickles (and deep-copies) with that value, as
does a State holding it; a function returning ``(loss, aux)`` to ``gk.grad`` without
``has_aux=True`` gets a ``[gradkit]`` error naming it. Oracles: the pure-JAX rewrite."""

import copy
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

gnp = gk.numpy


def _pending():
    w = gk.Variable(jnp.array([1.0, 2.0]), name="w")
    with gk.GradientTape():
        w.assign(gnp.sin(w) * 2 + 1)  # recorded: the live value stays pending until read
    return w


def test_a_pending_variable_pickles_with_its_value():
    expected = np.sin([1.0, 2.0]) * 2 + 1  # the pure rewrite
    restored = pickle.loads(pickle.dumps(_pending()))
    assert restored.name == "w"
    np.testing.assert_allclose(restored.value, expected, rtol=1e-6)
    np.testing.assert_allclose(copy.deepcopy(_pending()).value, expected, rtol=1e-6)


def test_a_state_of_a_pending_variable_pickles():
    w = _pending()
    state = gk.State({w: jnp.zeros(2)})
    restored = pickle.loads(pickle.dumps(state))
    (value,) = jax.tree_util.tree_leaves(restored)
    np.testing.assert_array_equal(value, [0.0, 0.0])
    np.testing.assert_allclose(w.value, np.sin([1.0, 2.0]) * 2 + 1, rtol=1e-6)  # the original is untouched


def test_a_tf_variable_pickles_after_a_recorded_assignment():
    import gradkit.tf as tf

    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape():
        v.assign(v * 2.0 + 1.0)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).numpy(), [3.0, 5.0])


@pytest.mark.parametrize("transform", [gk.grad, gk.value_and_grad])
def test_a_tuple_output_without_has_aux_gets_a_clear_error(transform):
    w = gk.Variable(jnp.array([1.0, 2.0]))
    before = np.asarray(w.value)
    with pytest.raises(TypeError, match=r"\[gradkit\].*returned a tuple of 2.*has_aux=True"):
        transform(lambda: (jnp.sum(w**2), {"n": 1.0}), wrt=w)()
    np.testing.assert_array_equal(w.value, before)
    # With has_aux it is jax.grad's answer for the pure rewrite.
    g, aux = gk.grad(lambda: (jnp.sum(w**2), {"n": 1.0}), wrt=w, has_aux=True)()
    np.testing.assert_allclose(g, jax.grad(lambda v: jnp.sum(v**2))(jnp.array([1.0, 2.0])))
    assert aux == {"n": 1.0}


def test_a_variable_has_the_array_methods_of_its_value():
    w0 = jnp.array([[1.0, -2.0], [3.0, 0.5]])
    w = gk.Variable(w0)
    for name, args in [("max", ()), ("min", (0,)), ("clip", (0.0, 1.0)), ("transpose", ()), ("argmax", ())]:
        np.testing.assert_array_equal(getattr(w, name)(*args), getattr(w0, name)(*args))
    np.testing.assert_array_equal(w.real, w0.real)

    def pure(v):
        return jnp.sum(v.clip(-1.0, 1.0) * v.transpose()) + v.max()

    np.testing.assert_allclose(gk.grad(lambda: pure(w), wrt=w)(), jax.grad(pure)(w0), rtol=1e-6)
    with gk.GradientTape() as tape:
        loss = gnp.sum(w.clip(-1.0, 1.0) * w.transpose()) + w.max()
    np.testing.assert_allclose(tape.gradient(loss, w), jax.grad(pure)(w0), rtol=1e-6)


@pytest.mark.parametrize(
    "name, call",
    [
        ("gk.grad", lambda: gk.grad(3.0)),
        ("gk.jit", lambda: gk.jit(3.0)),
        ("gk.value_and_grad", lambda: gk.value_and_grad(jnp.ones(2))),
        ("gk.jacrev", lambda: gk.jacrev(None)),
        ("gk.jacfwd", lambda: gk.jacfwd(2)),
        ("gk.hessian", lambda: gk.hessian(1.0)),
        ("gk.vmap", lambda: gk.vmap(1.0)),
        ("gk.jvp", lambda: gk.jvp(1.0, (1.0,), (1.0,))),
        ("gk.vjp", lambda: gk.vjp(1.0, 1.0)),
    ],
)
def test_a_transform_of_something_not_callable_is_refused_at_once(name, call):
    with pytest.raises(TypeError, match=rf"\[gradkit\] {name} takes the function to transform"):
        call()


def test_jvp_primals_must_be_a_tuple():
    with pytest.raises(TypeError, match=r"\[gradkit\] gk.jvp takes primals as a tuple"):
        gk.jvp(jnp.sin, 1.0, 1.0)
    out, tangent = gk.jvp(jnp.sin, (1.0,), (1.0,))
    np.testing.assert_allclose([out, tangent], [np.sin(1.0), np.cos(1.0)], rtol=1e-6)
