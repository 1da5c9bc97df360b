"""tf.math.segment_min / segment_prod, unsorted_segment_min / unsorted_segment_prod and
unsorted_segment_sqrt_n against real TensorFlow: values, empty segments, dtypes, gradients
(the minimum's split among ties; the product's with zeros in a segment), second derivatives,
inside tf.function, and errors."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

# Rows 1 and 2 tie in column 0 (the minimum's gradient splits); column 1 has a lone zero in
# rows 0-1 and two zeros in rows 3-4 (the product's gradient cases).
X = np.array([[0.5, 0.0, -1.0], [-2.0, 3.0, 0.25], [-2.0, 1.5, 0.75], [4.0, 0.0, 2.0], [1.0, 0.0, 1.0]], np.float32)


def _dtype(tf, t):
    return t.dtype.name if tf is tf_real else np.dtype(t.dtype).name


CASES = {
    "segment_min": lambda tf, x: tf.math.segment_min(x, [0, 1, 1, 3, 3]),
    "segment_min_vector": lambda tf, x: tf.math.segment_min(x[:, 0], [0, 0, 0, 1, 1]),
    "segment_prod": lambda tf, x: tf.math.segment_prod(x, [0, 0, 1, 3, 3]),
    "segment_prod_all": lambda tf, x: tf.math.segment_prod(x, [0, 0, 0, 0, 0]),
    "unsorted_min": lambda tf, x: tf.math.unsorted_segment_min(x, [1, 0, 0, 0, 1], 3),
    "unsorted_min_negative_id": lambda tf, x: tf.math.unsorted_segment_min(x, [1, -1, 0, 0, 1], 2),
    "unsorted_prod": lambda tf, x: tf.math.unsorted_segment_prod(x, [2, 2, 0, 0, -1], 4),
    "unsorted_prod_2d_ids": lambda tf, x: tf.math.unsorted_segment_prod(
        x[:4], tf.constant([[0, 2, 1], [0, 1, 0], [2, 2, 2], [1, 1, 2]]), 3
    ),
    "unsorted_min_2d_ids": lambda tf, x: tf.math.unsorted_segment_min(
        x[:4], [[0, 1, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]], 3
    ),
    "unsorted_sqrt_n": lambda tf, x: tf.math.unsorted_segment_sqrt_n(x, [0, 0, 0, 1, -1], 3),
    "unsorted_sqrt_n_2d_ids": lambda tf, x: tf.math.unsorted_segment_sqrt_n(
        x[:2], tf.constant([[0, 1, 1], [1, 1, 3]]), 4
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    def program(tf):
        xv = tf.Variable(X)
        with tf.GradientTape() as tape:
            y = CASES[name](tf, xv)
            w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32)).reshape(tuple(y.shape))
            loss = tf.reduce_sum(y * tf.constant(w))
        return [y, tape.gradient(loss, xv)]

    _ok(program)


@pytest.mark.parametrize("name", ["segment_prod", "unsorted_prod", "unsorted_min", "unsorted_sqrt_n"])
def test_second_derivatives_match_tensorflow(name):
    def program(tf):
        xv = tf.Variable(X)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = CASES[name](tf, xv)
                loss = tf.reduce_sum(y * y)
            g = inner.gradient(loss, xv)
            gg = tf.reduce_sum(g * tf.constant(X))
        return [g, outer.gradient(gg, xv)]

    _ok(program)


def test_integer_data_empty_segments_and_nan_match_tensorflow():
    def program(tf):
        d = tf.constant([3, 2, 5])
        f = tf.constant([3.0, np.nan, 5.0])
        out = [
            tf.math.segment_min(d, [0, 0, 2]),
            tf.math.unsorted_segment_min(d, [0, 0, 2], 4),
            tf.math.segment_prod(d, [0, 0, 2]),
            tf.math.unsorted_segment_prod(d, [0, 0, 2], 4),
            tf.math.unsorted_segment_min(f, [0, 0, 2], 4),
            tf.math.segment_min(f, [0, 0, 2]),
            tf.math.unsorted_segment_sqrt_n(tf.constant([1.0, 2.0], tf.float16), [0, 0], 2),
        ]
        return [*out, [_dtype(tf, t) for t in out]]

    _ok(program)


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        xv = tf.Variable(X)

        @tf.function
        def forward(ids):
            return (
                tf.math.unsorted_segment_min(xv, ids, 3)
                + tf.math.unsorted_segment_prod(xv, ids, 3)
                + tf.math.unsorted_segment_sqrt_n(xv, ids, 3)
            )

        with tf.GradientTape() as tape:
            y = forward(tf.constant([2, 0, 0, 2, 1]))
            loss = tf.reduce_sum(y * y)
        return [y, tape.gradient(loss, xv)]

    _ok(program)


BAD = {
    "unsorted_min_ids": lambda tf: tf.math.segment_min(tf.constant(X), [0, 2, 1, 3, 3]),
    "prod_ids_length": lambda tf: tf.math.segment_prod(tf.constant(X), [0, 0, 1]),
    "sqrt_n_int": lambda tf: tf.math.unsorted_segment_sqrt_n(tf.constant([1, 2]), [0, 0], 2),
    "prod_past_num_segments": lambda tf: tf.math.unsorted_segment_prod(tf.constant(X), [0, 1, 2, 0, 0], 2),
    "min_float_ids": lambda tf: tf.math.unsorted_segment_min(tf.constant(X), tf.constant([0.0, 1, 1, 0, 0]), 2),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.math\.\w*segment_"):
        BAD[name](gtf)


def _infinite_entries(tf):
    x = tf.constant([-np.inf, 1.0, 2.0, np.inf, 3.0, np.nan, -np.inf, -np.inf])
    ids = [0, 0, 1, 1, 2, 2, 3, 3]
    with tf.GradientTape() as tape:
        tape.watch(x)
        top = tf.math.segment_max(x, ids)
        low = tf.math.unsorted_segment_min(x, ids, 4)
        finite = tf.reduce_sum(tf.gather(top, [0, 1]))
    return top.numpy(), low.numpy(), tape.gradient(finite, x).numpy()


def test_an_infinite_entry_that_is_not_the_maximum_leaves_the_result_finite():
    # -inf beside 1 (a masked logit): the maximum is 1, not NaN (-inf * 0); a NaN maximum stays NaN.
    top, low, grad = _infinite_entries(gtf)
    np.testing.assert_array_equal(top, [1.0, np.inf, np.nan, -np.inf])
    np.testing.assert_array_equal(low, [-np.inf, 2.0, np.nan, -np.inf])
    np.testing.assert_array_equal(grad, [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0])


def test_infinite_entries_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for ours, theirs in zip(_infinite_entries(gtf), _infinite_entries(tf)):
        np.testing.assert_array_equal(ours, theirs)
