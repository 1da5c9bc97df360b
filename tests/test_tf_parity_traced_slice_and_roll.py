"""``tf.strided_slice`` inside ``tf.function`` with a traced ``begin``/``end`` at positions
``shrink_axis_mask`` takes a single index at (the result's shape is known), values and gradients
against real TensorFlow; a negative stride at such a position refused as TensorFlow refuses it,
and a traced range bound refused with the error that says its value is needed; ``tf.roll`` with a
list of shifts holding traced tensors (packed, as TensorFlow packs it)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both, run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def _slices(tf, x, i):
    return [
        tf.strided_slice(x, [i], [i + 1], shrink_axis_mask=1),
        tf.strided_slice(x, [0, i, 1], [2, i + 1, 4], [1, 1, 2], shrink_axis_mask=2),
        tf.strided_slice(x, [i, 0], [i + 1, 0], ellipsis_mask=2, shrink_axis_mask=1),
        tf.strided_slice(x, [i - 2, 0, i + 2], [i - 1, 3, i + 3], [1, 2, 1], shrink_axis_mask=5),
    ]


def p_traced_shrink_positions(tf):
    return tf.function(lambda x, i: _slices(tf, x, i))(tf.constant(X), tf.constant(1))


def p_gradient_through_traced_shrink_positions(tf):
    v = tf.Variable(X)

    @tf.function
    def grad(i):
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(s * s) for s in _slices(tf, v, i))
        return tape.gradient(loss, v)

    return [grad(tf.constant(0)), grad(tf.constant(1))]


def test_traced_shrink_positions_match_tensorflow():
    out = run_both_ok(p_traced_shrink_positions)
    assert [np.shape(o) for o in out] == [(3, 4), (2, 2), (3, 4), (2,)]


def test_gradients_match_tensorflow():
    out = run_both_ok(p_gradient_through_traced_shrink_positions)
    assert float(np.sum(out[0])) > 0


def test_negative_stride_at_a_shrink_position_is_refused():
    def program(tf):
        try:
            tf.strided_slice(tf.constant([1.0, 2.0, 3.0]), [2], [1], [-1], shrink_axis_mask=1)
        except tf.errors.InvalidArgumentError:
            return "InvalidArgumentError"
        return "accepted"

    assert run_both_ok(program) == "InvalidArgumentError"
    assert run_both_ok(lambda tf: tf.strided_slice(tf.constant([1.0, 2.0, 3.0]), [2], [1], [2], shrink_axis_mask=1))


def test_a_traced_range_bound_needs_its_value():
    f = gtf.function(lambda x, i: gtf.strided_slice(x, [i], [i + 2]))
    with pytest.raises(TypeError, match=r"^\[gradkit\] \S*<lambda>: tf.strided_slice needed a tensor's value"):
        f(gtf.constant(X), gtf.constant(0))
    assert isinstance(run_both(lambda tf: tf.strided_slice(tf.constant(X), [0], [2])), np.ndarray)


def p_roll_with_a_list_holding_traced_shifts(tf):
    @tf.function
    def f(x, i):
        return [tf.roll(x, [i, -i], [0, 2]), tf.roll(x, [i], [0]), tf.roll(x, [1, i], [1, 2])]

    return f(tf.constant(X), tf.constant(1)) + [tf.roll(tf.constant(X), [tf.constant(1), 2], [0, 1])]


def test_roll_with_a_list_holding_traced_shifts_matches_tensorflow():
    out = run_both_ok(p_roll_with_a_list_holding_traced_shifts)
    np.testing.assert_array_equal(out[1], np.roll(X, 1, axis=0))  # by hand too
