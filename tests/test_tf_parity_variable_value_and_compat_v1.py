"""``v.value()`` (TensorFlow's method; gradkit's ``v.value`` property reads the same tensor),
``tf.compat.v1``'s assign and scatter ops, an assign of a list holding tensors (packed, as
TensorFlow converts it), and a jacobian without pfor on a tape that is not persistent (refused,
as TensorFlow refuses it). Against TensorFlow (skipped without it), jax.grad and by hand."""

import jax
import numpy as np
import pytest

import gradkit.tf as gtf


def test_value_is_callable_and_differentiable():
    v = gtf.Variable([1.0, 2.0])
    np.testing.assert_array_equal(v.value().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(v.value + 1.0), [2.0, 3.0])
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(v.value() * v.value())
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])  # by hand: 2 v
    assert float(gtf.function(lambda: gtf.reduce_sum(v.value()))()) == 3.0


def _compat_v1_program(tf):
    v = tf.Variable([1.0, 2.0, 3.0])
    steps = [
        lambda: tf.compat.v1.assign(v, [5.0, 5.0, 5.0]),
        lambda: tf.compat.v1.assign_add(v, [1.0, 1.0, 1.0]),
        lambda: tf.compat.v1.assign_sub(v, [0.5, 0.5, 0.5]),
        lambda: tf.compat.v1.scatter_update(v, [0], [9.0]),
        lambda: tf.compat.v1.scatter_add(v, [1, 1], [1.0, 2.0]),
        lambda: tf.compat.v1.scatter_sub(v, [2], [0.5]),
        lambda: tf.compat.v1.scatter_nd_update(v, [[2]], [7.0]),
        lambda: tf.compat.v1.scatter_nd_add(v, [[0], [2]], [1.0, 1.0]),
        lambda: tf.compat.v1.scatter_nd_sub(v, [[1]], [3.0]),
    ]
    return [step().numpy().tolist() for step in steps]


def test_compat_v1_state_ops_by_hand():
    assert _compat_v1_program(gtf) == [
        [5.0, 5.0, 5.0],
        [6.0, 6.0, 6.0],
        [5.5, 5.5, 5.5],
        [9.0, 5.5, 5.5],
        [9.0, 8.5, 5.5],
        [9.0, 8.5, 5.0],
        [9.0, 8.5, 7.0],
        [10.0, 8.5, 8.0],
        [10.0, 5.5, 8.0],
    ]


def test_compat_v1_state_ops_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _compat_v1_program(gtf) == _compat_v1_program(tf)


def test_compat_v1_assign_refuses_a_tensor_ref():
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.compat.v1.assign takes a tf.Variable as ref"):
        gtf.compat.v1.assign(gtf.constant([1.0]), [2.0])


def test_assigning_a_list_of_tensors_packs_them_and_keeps_the_gradient():
    v, x = gtf.Variable([1.0, 2.0, 3.0]), gtf.Variable(2.0)
    with gtf.GradientTape() as tape:
        v.assign([x * 1.0, x * x, 1.0])
        loss = gtf.reduce_sum(v * v)
    expected = jax.grad(lambda x: x**2 + x**4 + 1.0)(2.0)  # the pure rewrite: 2x + 4x^3
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected)
    np.testing.assert_array_equal(v.numpy(), [2.0, 4.0, 1.0])


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_a_jacobian_without_pfor_needs_a_persistent_tape_as_in_tensorflow(method):
    def run(tf, persistent):
        x = tf.constant([[1.0, 2.0]])
        with tf.GradientTape(persistent=persistent) as tape:
            tape.watch(x)
            y = x * x
        return getattr(tape, method)(y, x, experimental_use_pfor=False)

    with pytest.raises(
        RuntimeError, match=rf"\[gradkit\] GradientTape must be created with persistent=True to compute the {method}"
    ):
        run(gtf, False)
    by_hand = np.array([[2.0, 0.0], [0.0, 4.0]])  # d(x * x)/dx = diag(2x)
    got = run(gtf, True).numpy()
    np.testing.assert_array_equal(got.reshape(2, 2), by_hand)
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(RuntimeError):
        run(tf, False)
    np.testing.assert_array_equal(run(tf, True).numpy(), got)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_inside_tf_function_a_loop_jacobian_needs_no_persistent_tape(method):
    # TensorFlow requires persistence only when running eagerly; traced, it builds a loop.
    def run(tf):
        @tf.function
        def f(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.sin(x) * 2.0
            return getattr(tape, method)(y, x, experimental_use_pfor=False)

        return np.asarray(f(tf.constant([[1.0, 2.0]])))

    got = run(gtf)
    by_hand = np.diag(2.0 * np.cos([1.0, 2.0]))  # d(2 sin x)/dx
    np.testing.assert_allclose(got.reshape(2, 2), by_hand, rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, run(tf), rtol=1e-6)
