"""``gradkit.tf.Variable`` (and Keras' variables, its subclasses) as ``gk.Variable`` is: a boolean
mask of the wrong shape is refused before it is read as indices (NumPy's rule; the Variable is
left unchanged), and ``jax.numpy`` functions, ``gk.grad`` and ``gk.jit`` take it as a value.
Oracles: NumPy's IndexError, and the same program on plain JAX arrays."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf
from gradkit import GradkitError


@pytest.mark.parametrize(
    "shape, index",
    [
        ((3,), np.array([True, False])),
        ((3,), np.array([True, False, True, True])),
        ((2, 3, 4), (slice(None), np.array([True, True]))),
        ((2, 3, 4), (Ellipsis, np.array([True, False]))),
    ],
)
def test_a_mask_of_the_wrong_shape_is_refused_as_numpy_refuses_it(shape, index):
    start = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    with pytest.raises(IndexError):
        start[index]
    v = gtf.Variable(start)
    with pytest.raises(GradkitError, match="boolean mask of shape"):
        v[index]
    s = gtf.Variable(2.0)
    with pytest.raises(GradkitError, match="boolean mask of shape"):
        with gtf.GradientTape():
            v[index].assign(v[index] * s)
    np.testing.assert_array_equal(v.numpy(), start)


def test_a_mask_of_the_right_shape_reads_and_writes_as_numpy():
    start = np.array([1.0, 2.0, 3.0], np.float32)
    mask = np.array([True, False, True])
    v, s = gtf.Variable(start), gtf.Variable(2.0)
    with gtf.GradientTape() as tape:
        v[mask].assign(v[mask] * s)
        loss = gtf.reduce_sum(v)
    want = start.copy()
    want[mask] *= 2
    np.testing.assert_array_equal(v.numpy(), want)
    assert float(tape.gradient(loss, s)) == float(start[mask].sum())


def test_jax_numpy_takes_a_tf_variable_and_a_keras_variable():
    b = gtf.Variable(5.0)
    assert float(jnp.sin(b)) == pytest.approx(float(jnp.sin(5.0)))
    assert float(gk.grad(lambda: jnp.sin(b), wrt=b)()) == pytest.approx(float(jnp.cos(5.0)))
    assert float(gk.jit(lambda: jnp.sin(b) * 2)()) == pytest.approx(2 * float(jnp.sin(5.0)))
    layer = gtf.keras.layers.Dense(2, kernel_initializer="ones")
    layer.build((None, 3))
    np.testing.assert_array_equal(jnp.sum(layer.kernel), 6.0)
    leaves = jax.tree_util.tree_leaves({"w": layer.kernel, "b": b})
    assert [np.shape(x) for x in leaves] == [(), (3, 2)]
