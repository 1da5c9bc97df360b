"""``gk.numpy.shape`` / ``ndim`` / ``size`` of a recorded tensor are Python ints, as jax.numpy's
(so ``gnp.zeros(gnp.shape(x))`` works under a tape), and a tensor has jax.Array's ``<<``, ``>>``,
``divmod`` and ``round``. Oracle: jax.numpy on the same array."""

import jax.numpy as jnp
import numpy as np

import gradkit as gk

gnp = gk.numpy


def test_structure_functions_give_python_ints_under_a_tape():
    v = gk.Variable(np.ones((3, 4), np.float32))
    a = jnp.ones((3, 4))
    with gk.GradientTape() as tape:
        x = v.read_value() * 2.0
        assert gnp.shape(x) == jnp.shape(a) and gnp.ndim(x) == jnp.ndim(a) and gnp.size(x) == jnp.size(a)
        assert gnp.size(x, 1) == jnp.size(a, 1)
        y = gnp.sum(gnp.zeros(gnp.shape(x)) + x) + gnp.sum(gnp.reshape(x, (gnp.size(x),)))
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, v)), np.full((3, 4), 4.0))  # d(2x + 2x)/dx


def test_shift_divmod_and_round_match_jax():
    i, f = jnp.array([1, 2, 3], jnp.int32), jnp.array([1.5, -2.0, 2.5])
    ti, tf = gk.Tensor(i), gk.Tensor(f)
    for got, want in [
        (ti << 1, i << 1),
        (ti >> 1, i >> 1),
        (1 << ti, 1 << i),
        (round(tf), round(f)),
        (round(tf, 1), round(f, 1)),
    ]:
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    for got, want in zip(divmod(tf, 2.0), divmod(f, 2.0)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_an_update_at_a_concrete_mask_is_recorded():
    x0 = np.float32([[0.0, 1.0, 2.0, 3.0]] * 2)
    mask = x0 > 1.5
    v = gk.Variable(x0)
    with gk.GradientTape() as tape:
        y = v.read_value().at[mask].set(0.0)
        loss = gnp.sum(y * y)
    np.testing.assert_array_equal(np.asarray(y), jnp.asarray(x0).at[mask].set(0.0))
    np.testing.assert_array_equal(np.asarray(tape.gradient(loss, v)), np.where(mask, 0.0, 2 * x0))


def test_a_value_dependent_shape_under_a_tape_names_the_way_out():
    v = gk.Variable(np.float32([0.0, 1.0, 2.0]))
    with gk.GradientTape():
        try:
            gnp.nonzero(v.read_value())
        except TypeError as error:
            assert str(error).startswith("[gradkit] gk.numpy.nonzero needs a value known") and "size=" in str(error)
        else:
            raise AssertionError("gnp.nonzero of a recorded tensor did not raise")
        (found,) = gnp.nonzero(v.read_value(), size=2)
        assert np.asarray(found).tolist() == [1, 2]


def test_a_filled_get_out_of_range_under_a_tape():
    x0 = np.float32([0.0, 1.0, 2.0])
    v = gk.Variable(x0)
    with gk.GradientTape() as tape:
        y = v.read_value().at[jnp.array([1, 9])].get(mode="fill", fill_value=-1.0)
        loss = gnp.sum(y * 3.0)
    np.testing.assert_array_equal(
        np.asarray(y), jnp.asarray(x0).at[jnp.array([1, 9])].get(mode="fill", fill_value=-1.0)
    )
    np.testing.assert_array_equal(np.asarray(tape.gradient(loss, v)), [0.0, 3.0, 0.0])
