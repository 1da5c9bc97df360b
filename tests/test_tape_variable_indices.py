"""A Variable used inside an index is read when the index is used, on every path: as a slice
bound (``x[k:]``, ``x[:k].assign(...)``) and as an index (``x[k]``, ``x[k].assign(...)``),
eagerly, under a tape (whose compiled programs are cached per graph structure, so a bound must
not be baked into one) and, for ``x[k]``, inside ``tf.function``. Oracles: jax.grad of the
pure-JAX rewrite with the same number, and NumPy. Also: the coordinates of a constant's True
entries (one-argument ``tf.where``) are known inside ``tf.function``, as a constant is."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

gnp = gk.numpy
X0 = np.array([1.0, 2.0, 3.0], np.float32)


def _oracle(kv):
    return jax.value_and_grad(lambda x: jnp.sum(x[kv:] ** 2))(jnp.asarray(X0))


@pytest.mark.parametrize("api", ["gk", "tf"])
def test_a_variable_slice_bound_follows_the_variable_under_a_tape(api):
    if api == "gk":
        k, x = gk.Variable(1), gk.Variable(jnp.asarray(X0))
        tape_class, total = gk.GradientTape, gnp.sum
    else:
        k, x = gtf.Variable(1), gtf.Variable(X0)
        tape_class, total = gtf.GradientTape, gtf.reduce_sum
    for kv in (1, 2, 0, 2):
        k.assign(kv)
        with tape_class() as tape:
            y = total(x[k:] ** 2)
        value, grad = _oracle(kv)
        np.testing.assert_allclose(float(y), value)
        np.testing.assert_allclose(np.asarray(tape.gradient(y, x)), grad)


def test_a_variable_slice_bound_in_an_assignment_follows_the_variable():
    k = gtf.Variable(1)
    for kv in (1, 2, 0):
        k.assign(kv)
        x = gtf.Variable(X0)
        with gtf.GradientTape():
            x[:k].assign(x[:k] * 2.0)
        expected = X0.copy()
        expected[:kv] *= 2.0
        np.testing.assert_array_equal(x.numpy(), expected)


@pytest.mark.parametrize("taped", [False, True])
def test_a_variable_as_an_index_of_an_assignment(taped):
    for make in (gk.Variable, gtf.Variable):
        k, x = make(1), make(jnp.asarray(X0))
        if taped:
            with gtf.GradientTape():
                x[k].assign(5.0)
        else:
            x[k].assign(5.0)
        np.testing.assert_array_equal(np.asarray(x.numpy()), [1.0, 5.0, 3.0])


def test_a_variable_index_inside_tf_function_follows_the_variable():
    k, x = gtf.Variable(1), gtf.Variable(X0)

    @gtf.function
    def step():
        with gtf.GradientTape() as tape:
            y = x[k] * 2.0
        return y, tape.gradient(y, x)

    for kv in (1, 2, 0):
        k.assign(kv)
        y, grad = step()
        assert float(y) == 2.0 * X0[kv]
        np.testing.assert_array_equal(grad.numpy(), 2.0 * (np.arange(3) == kv))


def test_a_variable_slice_bound_inside_tf_function_is_refused_clearly():
    k, x = gtf.Variable(1), gtf.Variable(X0)
    with pytest.raises(
        TypeError, match=r"\[gradkit\] the slice bound .* \(a Variable\) is read inside a compiled function"
    ):
        gtf.function(lambda: gtf.reduce_sum(x[k:]))()


def test_one_argument_where_of_a_constant_inside_tf_function():
    @gtf.function
    def f(x):
        return gtf.gather(x, gtf.where(gtf.constant([True, False, True]))[:, 0])

    assert f(gtf.constant([1.0, 2.0, 3.0])).numpy().tolist() == [1.0, 3.0]  # the True positions, 0 and 2
