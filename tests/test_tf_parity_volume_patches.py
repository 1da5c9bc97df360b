"""``tf.extract_volume_patches`` against real TensorFlow 2.21: values, dtypes and shapes for SAME
and VALID padding and several windows and strides, the gradient (summed where windows overlap),
inside ``tf.function``, and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

VOLUME = np.arange(2 * 4 * 5 * 6 * 2, dtype=np.float32).reshape(2, 4, 5, 6, 2) / 50.0
CASES = [
    ([1, 2, 2, 3, 1], [1, 1, 2, 2, 1], "SAME"),
    ([1, 2, 2, 3, 1], [1, 1, 2, 2, 1], "VALID"),
    ([1, 3, 1, 2, 1], [1, 2, 3, 1, 1], "SAME"),
    ([1, 1, 1, 1, 1], [1, 1, 1, 1, 1], "VALID"),
    ([1, 4, 5, 6, 1], [1, 1, 1, 1, 1], "VALID"),  # the whole volume
    ([1, 9, 2, 2, 1], [1, 3, 1, 1, 1], "VALID"),  # no window fits: an empty result
    ([1, 2, 3, 2, 1], [1, 3, 3, 3, 1], "SAME"),
]
IDS = [f"{''.join(map(str, k[1:4]))}-{''.join(map(str, s[1:4]))}-{p}" for k, s, p in CASES]


def _value_and_gradient(tf, ksizes, strides, padding, function=False):
    x = tf.Variable(VOLUME)

    def step():
        with tf.GradientTape() as tape:
            y = tf.extract_volume_patches(x, ksizes, strides, padding)
            weights = tf.reshape(tf.range(tf.size(y), dtype=tf.float32) % 7.0 - 3.0, tf.shape(y))
            loss = tf.reduce_sum(y * weights)
        return y, tape.gradient(loss, x)

    y, g = tf.function(step)() if function else step()
    return np.asarray(y), np.asarray(g)


@pytest.mark.parametrize("ksizes, strides, padding", CASES, ids=IDS)
def test_values_and_gradients_match_tensorflow(ksizes, strides, padding):
    tf = pytest.importorskip("tensorflow")
    want = _value_and_gradient(tf, ksizes, strides, padding)
    got = _value_and_gradient(gtf, ksizes, strides, padding)
    assert got[0].shape == want[0].shape and got[0].dtype == want[0].dtype
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_inside_tf_function():
    tf = pytest.importorskip("tensorflow")
    want = _value_and_gradient(tf, *CASES[0], function=True)
    got = _value_and_gradient(gtf, *CASES[0], function=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_integers_keep_their_dtype():
    tf = pytest.importorskip("tensorflow")
    x = np.arange(1 * 3 * 3 * 3 * 1, dtype=np.int32).reshape(1, 3, 3, 3, 1)
    want = tf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "SAME").numpy()
    got = gtf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "SAME").numpy()
    assert got.dtype == want.dtype == np.int32
    np.testing.assert_array_equal(got, want)


BAD = {
    "window across the batch": dict(ksizes=[2, 2, 2, 2, 1]),
    "zero window": dict(ksizes=[1, 0, 2, 2, 1]),
    "three sizes": dict(ksizes=[1, 2, 2]),
    "zero stride": dict(strides=[1, 0, 1, 1, 1]),
    "padding": dict(padding="FULL"),
    "4-D input": dict(input=VOLUME[0]),
    "negative output size": dict(ksizes=[1, 9, 2, 2, 1]),
    "boolean input": dict(input=VOLUME > 1.0),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments_are_refused_as_tensorflow_refuses_them(case):
    tf = pytest.importorskip("tensorflow")
    args = dict(input=VOLUME, ksizes=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="VALID") | BAD[case]
    with pytest.raises(tf.errors.OpError if case != "negative output size" else tf.errors.InvalidArgumentError):
        tf.extract_volume_patches(**args)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] tf\.extract_volume_patches got"):
        gtf.extract_volume_patches(**args)
