"""A Variable whose read a tape records, converted by plain jax (``jnp.asarray(v)``), raises the
clear recording error instead of losing its gradient; a Variable's slice with too many or
non-integer indices is refused where it is taken; ``t.at[...]`` updates that do not fit are
[gradkit] errors. Oracles: jax.grad for what works, NumPy's refusals for what does not."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

gnp = gk.numpy


@pytest.mark.parametrize("convert", [jnp.asarray, jnp.array])
def test_jax_converting_a_recorded_variable_raises(convert):
    v = gk.Variable(jnp.array([1.0, -2.0, 3.0]))
    with gk.GradientTape() as tape:
        with pytest.raises(gk.GradkitError, match=r"^\[gradkit\] a jax.numpy function received a tensor"):
            convert(v)
        y = gnp.sum(gnp.asarray(v) ** 2)  # gradkit's own conversion records
    np.testing.assert_allclose(tape.gradient(y, v), jax.grad(lambda x: jnp.sum(x**2))(jnp.array([1.0, -2.0, 3.0])))


def test_jax_converting_a_variable_outside_a_tape_is_its_value():
    v = gk.Variable(jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(jnp.asarray(v), [1.0, 2.0])


@pytest.mark.parametrize(
    "index, error, words",
    [
        ((0, 0, 0), IndexError, "too many indices"),
        (1.5, TypeError, "is a float"),
        ((slice(None),) * 3, IndexError, "too many"),
    ],
)
def test_a_slice_with_indices_numpy_refuses_is_refused_when_taken(index, error, words):
    np_error = IndexError if error is IndexError else (IndexError, TypeError)
    with pytest.raises(np_error):
        np.ones((2, 3))[index]  # NumPy refuses it too
    v = gk.Variable(jnp.ones((2, 3)))
    with pytest.raises(error, match=r"^\[gradkit\] .*" + words):
        v[index]
    np.testing.assert_array_equal(v.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize("method", ["set", "add"])
def test_an_update_that_does_not_fit_is_a_gradkit_error(method):
    t = gk.Tensor(jnp.ones((2, 3)))
    with pytest.raises((TypeError, ValueError), match=r"^\[gradkit\] t.at\[...\]." + method):
        getattr(t.at[0], method)(jnp.ones(4))
    with gk.GradientTape() as tape:
        tape.watch(t)
        with pytest.raises((TypeError, ValueError), match=r"^\[gradkit\] t.at\[...\]." + method):
            getattr(t.at[0], method)(jnp.ones(4))
