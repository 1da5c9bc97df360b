"""Convolutions and average pools refuse a negative explicit padding and a window whose output
size would be negative (an output size of 0 is an empty tensor); ``top_k``'s ``index_type`` and
``argmax``/``argmin``'s ``output_type`` set the indices' dtype, among the dtypes TensorFlow's
kernels take. Against TensorFlow (skipped without it) and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _window_cases(tf):
    x = tf.ones([1, 6, 6, 1])
    return {
        "negative padding": lambda: tf.nn.conv2d(x, tf.ones([3, 3, 1, 1]), 1, [[0, 0], [-1, 0], [0, 0], [0, 0]]),
        "negative padding, depthwise": lambda: tf.nn.depthwise_conv2d(
            x, tf.ones([3, 3, 1, 1]), [1, 1, 1, 1], [[0, 0], [0, 0], [0, -2], [0, 0]]
        ),
        "avg window 8": lambda: tf.nn.avg_pool2d(x, 8, 1, "VALID"),
        "avg window 7": lambda: tf.nn.avg_pool2d(x, 7, 1, "VALID"),
        "avg window 9 stride 2": lambda: tf.nn.avg_pool2d(x, 9, 2, "VALID"),
        "avg window 10 stride 2": lambda: tf.nn.avg_pool2d(x, 10, 2, "VALID"),
        "avg3d window 5": lambda: tf.nn.avg_pool3d(tf.ones([1, 4, 4, 4, 1]), 5, 1, "VALID"),
        "conv window 8": lambda: tf.nn.conv2d(x, tf.ones([8, 3, 1, 1]), 1, "VALID"),
        "conv window 7": lambda: tf.nn.conv2d(x, tf.ones([7, 3, 1, 1]), 1, "VALID"),
        "conv window 9 stride 2": lambda: tf.nn.conv2d(x, tf.ones([9, 3, 1, 1]), 2, "VALID"),
        "conv window 10 stride 2": lambda: tf.nn.conv2d(x, tf.ones([10, 3, 1, 1]), 2, "VALID"),
        "conv1d window 9": lambda: tf.nn.conv1d(tf.ones([2, 7, 4]), tf.ones([9, 4, 5]), 1, "VALID"),
        "conv padded window 9": lambda: tf.nn.conv2d(x, tf.ones([9, 3, 1, 1]), 1, [[0, 0], [1, 1], [0, 0], [0, 0]]),
        "conv dilated": lambda: tf.nn.conv2d(x, tf.ones([3, 3, 1, 1]), 1, "VALID", dilations=4),
    }


def _outcomes(tf):
    out = {}
    for name, case in _window_cases(tf).items():
        try:
            out[name] = tuple(case().shape)
        except tf.errors.OpError:  # TensorFlow with oneDNN raises AbortedError for some
            out[name] = "refused"
    return out


# By hand: (size + padding - dilated window + stride) / stride, truncated toward zero; refused below 0.
_EXPECTED = {
    "negative padding": "refused",
    "negative padding, depthwise": "refused",
    "avg window 8": "refused",
    "avg window 7": (1, 0, 0, 1),
    "avg window 9 stride 2": (1, 0, 0, 1),
    "avg window 10 stride 2": "refused",
    "avg3d window 5": (1, 0, 0, 0, 1),
    "conv window 8": "refused",
    "conv window 7": (1, 0, 4, 1),
    "conv window 9 stride 2": (1, 0, 2, 1),
    "conv window 10 stride 2": "refused",
    "conv1d window 9": "refused",
    "conv padded window 9": (1, 0, 4, 1),
    "conv dilated": "refused",
}


def test_window_sizes_and_paddings_by_hand():
    assert _outcomes(gtf) == _EXPECTED


def test_window_sizes_and_paddings_refused_where_tensorflow_refuses_them():
    # Which are refused, not the empty shapes: TensorFlow's oneDNN convolutions (on by default on
    # x86) return a wrong, non-empty shape where the output is empty.
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _outcomes(gtf), _outcomes(tf)
    assert {k: v == "refused" for k, v in ours.items()} == {k: v == "refused" for k, v in theirs.items()}


def test_the_refusal_says_why():
    with pytest.raises(
        ValueError, match=r"\[gradkit\] tf.nn.conv2d: the window \[8, 3\].*output size would be negative"
    ):
        gtf.nn.conv2d(gtf.ones([1, 6, 6, 1]), gtf.ones([8, 3, 1, 1]), 1, "VALID")
    with pytest.raises(ValueError, match=r"\[gradkit\] tf.nn.conv2d: padding=.* has a negative entry"):
        gtf.nn.conv2d(gtf.ones([1, 6, 6, 1]), gtf.ones([3, 3, 1, 1]), 1, [[0, 0], [-1, 0], [0, 0], [0, 0]])


_INDEX_TYPES = ("int16", "int32", "uint16", "uint8", "float32")


def _index_dtypes(tf):
    ops = {
        "top_k": lambda t: tf.math.top_k([3.0, 1.0, 2.0], 2, index_type=t).indices,
        "argmax": lambda t: tf.math.argmax([3.0, 1.0, 2.0], output_type=t),
        "argmin": lambda t: tf.math.argmin([3.0, 1.0, 2.0], output_type=t),
    }
    out = {}
    for name, op in ops.items():
        for dtype in _INDEX_TYPES:
            try:
                result = op(getattr(tf, dtype))
                out[name, dtype] = (
                    np.dtype(getattr(result.dtype, "as_numpy_dtype", result.dtype)).name,
                    np.asarray(result).tolist(),
                )
            except tf.errors.InvalidArgumentError:
                out[name, dtype] = "refused"
    return out


def test_index_dtypes_by_hand():
    got = _index_dtypes(gtf)
    assert got["top_k", "int16"] == ("int16", [0, 2])
    assert got["argmax", "uint16"] == ("uint16", 0)
    assert got["argmin", "int32"] == ("int32", 1)
    assert got["top_k", "uint16"] == got["argmin", "int16"] == got["argmax", "float32"] == "refused"


def test_index_dtypes_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _index_dtypes(gtf) == _index_dtypes(tf)
