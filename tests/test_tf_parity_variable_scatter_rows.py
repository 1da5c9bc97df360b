"""A Variable's row scatters (``scatter_div``/``mul``/``max``/``min``/``update``/``add``) and their
``tf.compat.v1`` forms, against real TensorFlow (skipped without it), by hand and jax.grad:
integer division toward zero, updates of the wrong shape and zero divisors refused with
TensorFlow's InvalidArgumentError (the Variable left as it was), and the exact gradient through
``scatter_div`` where TensorFlow's tape gives None."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

try:
    import tensorflow as tf_real
except ImportError:  # the by-hand and jax.grad oracles still run
    tf_real = None


def _integer_division(tf):
    v = tf.Variable(np.array([[7, -7], [5, -5]], np.int32))
    v.scatter_div(tf.IndexedSlices(tf.constant([[2, 2], [-2, 3], [2, 2]]), tf.constant([0, 1, 0])))
    return v.numpy().tolist()


def test_integer_scatter_div_rounds_toward_zero():
    # By hand, C's division: 7/2/2 = 1, -7/2/2 = -1, 5/-2 = -2, -5/3 = -1.
    assert _integer_division(gtf) == [[1, -1], [-2, -1]]
    if tf_real is not None:
        assert _integer_division(tf_real) == _integer_division(gtf)


def _compat_v1_program(tf):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    steps = [
        lambda: tf.compat.v1.scatter_mul(v, [0, 0], [[2.0, 3.0], [2.0, 1.0]]),
        lambda: tf.compat.v1.scatter_div(v, [1], [[3.0, 8.0]]),
        lambda: tf.compat.v1.scatter_max(v, [2, 0], [[4.0, 9.0], [5.0, 0.0]]),
        lambda: tf.compat.v1.scatter_min(v, [2], [[1.0, 7.0]]),
        lambda: tf.compat.v1.batch_scatter_update(v, [[1], [0], [1]], [[-1.0], [-2.0], [-3.0]]),
    ]
    return [np.asarray(step()).tolist() for step in steps]


def test_compat_v1_row_scatters():
    assert _compat_v1_program(gtf) == [
        [[4.0, 6.0], [3.0, 4.0], [5.0, 6.0]],
        [[4.0, 6.0], [1.0, 0.5], [5.0, 6.0]],
        [[5.0, 6.0], [1.0, 0.5], [5.0, 9.0]],
        [[5.0, 6.0], [1.0, 0.5], [1.0, 7.0]],
        [[5.0, -1.0], [-2.0, 0.5], [1.0, -3.0]],
    ]
    if tf_real is not None:
        assert _compat_v1_program(gtf) == _compat_v1_program(tf_real)


BAD_UPDATES = [
    ("scatter_update", [1.0, 1.0]),  # a row per index needs shape (2, 2)
    ("scatter_add", [[1.0, 1.0]]),
    ("scatter_mul", np.ones(5, np.float32)),
    ("scatter_div", [[0.0, 2.0], [1.0, 1.0]]),  # a zero divisor
    ("scatter_max", [[[1.0, 1.0]], [[1.0, 1.0]]]),
]


@pytest.mark.parametrize("method, updates", BAD_UPDATES, ids=[m for m, _ in BAD_UPDATES])
def test_refused_updates_leave_the_variable_alone(method, updates):
    modules = [gtf] if tf_real is None else [gtf, tf_real]
    for tf in modules:
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) + 1.0)
        with pytest.raises(tf.errors.InvalidArgumentError) as caught:
            getattr(v, method)(tf.IndexedSlices(tf.constant(updates), tf.constant([0, 1])))
        np.testing.assert_array_equal(v.numpy(), np.arange(6).reshape(3, 2) + 1.0)
        if tf is gtf:
            assert str(caught.value).startswith("[gradkit] Variable." + method)


def test_scalar_updates_broadcast_as_in_tensorflow():
    v = gtf.Variable(np.ones((3, 2), np.float32))
    v.scatter_mul(gtf.IndexedSlices(gtf.constant(5.0), gtf.constant([0, 2])))
    np.testing.assert_array_equal(v.numpy(), [[5.0, 5.0], [1.0, 1.0], [5.0, 5.0]])


def test_gradient_through_scatter_div_is_exact():
    x0 = np.array([[2.0, 3.0]], np.float32)
    v = gtf.Variable(np.ones((3, 2), np.float32))
    x = gtf.constant(x0)
    with gtf.GradientTape() as tape:
        tape.watch(x)
        v.scatter_div(gtf.IndexedSlices(gtf.concat([x, x], 0), gtf.constant([1, 1])))  # row 1 divided twice
        loss = gtf.reduce_sum(v * v)

    def pure(x):
        w = jnp.ones((3, 2)).at[1].set(1.0 / (x[0] * x[0]))
        return jnp.sum(w * w)

    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), jax.grad(pure)(jnp.asarray(x0)), rtol=1e-6)
