"""Max pooling whose output is empty: a 'VALID' window larger than the input (TensorFlow's output
size ``(size - window + stride) // stride`` is 0) and explicit padding too small for the window.
The output is empty, as TensorFlow's, and the gradient is zeros (the derivative of an empty
result). TensorFlow 2.21's own max-pool gradient returns uninitialized memory there, so the
gradient is checked against zeros, and shapes, dtypes and refusals against TensorFlow."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from refusals import assert_gradkit_refusal

import gradkit.tf as gtf

X = np.arange(1 * 2 * 3 * 2, dtype=np.float32).reshape(1, 2, 3, 2)

EMPTY = {
    "argmax": lambda tf, v: tf.nn.max_pool_with_argmax(v, 3, 1, "VALID"),
    "argmax_int32_strided": lambda tf, v: tf.nn.max_pool_with_argmax(
        v, [1, 3, 2, 1], [1, 2, 1, 1], "VALID", output_dtype=tf.int32
    ),
    "argmax_batch_index": lambda tf, v: tf.nn.max_pool_with_argmax(v, [2, 4], 1, "VALID", include_batch_in_index=True),
    "max_pool2d": lambda tf, v: tf.nn.max_pool2d(v, 3, 1, "VALID"),
    "max_pool": lambda tf, v: tf.nn.max_pool(v, [3, 1], 1, "VALID"),
    "pool": lambda tf, v: tf.nn.pool(v, [3, 1], "MAX", padding="VALID"),
    "max_pool3d": lambda tf, v: tf.nn.max_pool3d(tf.reshape(v, [1, 1, 2, 3, 2]), [1, 3, 1], 1, "VALID"),
    "explicit_padding": lambda tf, v: tf.nn.max_pool2d(v, [3, 1], 1, [[0, 0], [0, 0], [0, 0], [0, 0]]),
    "explicit_padding_strided": lambda tf, v: tf.nn.max_pool2d(v, [3, 4], 2, [[0, 0], [0, 0], [1, 0], [0, 0]]),
}


def _run(tf, name):
    v = tf.Variable(X)
    with tf.GradientTape() as tape:
        out = EMPTY[name](tf, v)
        outs = list(out) if isinstance(out, tuple) else [out]
        loss = tf.reduce_sum(outs[0] * outs[0])
    return outs, tape, loss, v


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_an_empty_max_pool_has_zero_gradients(name):
    outs, tape, loss, v = _run(gtf, name)
    assert 0 in tuple(outs[0].shape)
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), np.zeros_like(X))


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_outputs_match_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    want = _run(tf, name)[0]  # (its gradient is uninitialized memory: not compared)
    got = _run(gtf, name)[0]
    for w, g in zip(want, got):
        assert tuple(g.shape) == tuple(w.shape)
        if w.dtype.is_floating or w.dtype == tf.int32:
            assert np.dtype(g.dtype) == w.dtype.as_numpy_dtype
        else:  # int64 indices are int32 unless jax's x64 mode is on
            assert np.dtype(g.dtype) == jax.dtypes.canonicalize_dtype(np.int64)


def test_a_zero_size_input_pools_to_an_empty_output():
    y = gtf.nn.max_pool2d(X[:, :, :0], 1, 1, "VALID")
    assert tuple(y.shape) == (1, 2, 0, 2)


REFUSED = {
    "negative_size": lambda tf: tf.nn.max_pool2d(X, [4, 1], 1, "VALID"),
    "negative_size_argmax": lambda tf: tf.nn.max_pool_with_argmax(X, [4, 5], [1, 2], "VALID"),
    "negative_size_3d": lambda tf: tf.nn.max_pool3d(X[None], 3, 1, "VALID"),
    "argmax_of_an_empty_input": lambda tf: tf.nn.max_pool_with_argmax(X[:, :, :0], 1, 1, "VALID"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_negative_output_size_is_refused(name):
    assert_gradkit_refusal(lambda: REFUSED[name](gtf), ValueError, r"tf\.nn\.")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_negative_output_size_is_refused_as_in_tensorflow(name):
    from refusals import assert_refused_like_tensorflow

    assert_refused_like_tensorflow(REFUSED[name], pytest.importorskip("tensorflow"), gtf, r"tf\.nn\.")


def test_an_empty_one_dimensional_max_pool_is_refused():
    # TensorFlow 2.21 aborts the process (a division by zero in its kernel) here, so it is not run.
    assert_gradkit_refusal(lambda: gtf.nn.max_pool1d(X[0], 4, 1, "VALID"), ValueError, r"tf\.nn\.max_pool1d")
