"""``tf.reduce_max``/``reduce_min`` refuse complex tensors; ``tf.math.confusion_matrix`` with ``dtype=tf.bool`` (whether any example is in a cell),
``tf.math.bincount``'s refusals (a negative ``maxlength``, an arr that is not int32/int64) and
reduction axes given as nested lists (flattened) or floats (refused). Against TensorFlow (skipped
without it) and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _program(tf):
    out = {
        "confusion bool": tf.math.confusion_matrix([0, 1, 1], [0, 1, 0], dtype=tf.bool),
        "confusion bool, 3 classes": tf.math.confusion_matrix([0, 1, 1], [0, 1, 0], num_classes=3, dtype=tf.bool),
        "nested axes": tf.reduce_sum(tf.reshape(tf.range(6.0), [2, 3]), axis=[[0], [1]]),
        "nested axes, max": tf.reduce_max(tf.reshape(tf.range(6.0), [2, 3]), axis=[[1]]),
        "bincount float": tf.math.bincount(tf.constant([1.7, 2.2, 2.9])),
    }
    out = {k: (np.asarray(v).dtype.name, np.asarray(v).tolist()) for k, v in out.items()}
    refusals = {
        "float axis": lambda: tf.reduce_sum(tf.ones([2, 3]), axis=1.0),
        "bincount maxlength -1": lambda: tf.math.bincount([1, 2, 2], maxlength=-1),
        "bincount uint8": lambda: tf.math.bincount(tf.constant([1, 2], tf.uint8)),
        "bincount int16": lambda: tf.math.bincount(tf.constant([1, 2], tf.int16)),
        "reduce_max complex": lambda: tf.reduce_max(tf.constant([1 + 1j, 2 + 0j], tf.complex64)),
        "reduce_min complex": lambda: tf.math.reduce_min(tf.constant([1 + 1j], tf.complex64)),
    }
    for name, call in refusals.items():
        try:
            call()
            out[name] = "accepted"
        except (TypeError, ValueError, tf.errors.InvalidArgumentError):
            out[name] = "refused"
    return out


def test_by_hand():
    got = _program(gtf)
    assert got["confusion bool"] == ("bool", [[True, False], [True, True]])
    assert got["confusion bool, 3 classes"] == ("bool", [[True, False, False], [True, True, False], [False] * 3])
    assert got["nested axes"] == ("float32", 15.0)
    assert got["nested axes, max"] == ("float32", [2.0, 5.0])
    assert got["bincount float"] == ("int32", [0, 1, 2])  # truncated to 1, 2, 2
    assert {k: v for k, v in got.items() if isinstance(v, str)} == {
        "float axis": "refused",
        "bincount maxlength -1": "refused",
        "bincount uint8": "refused",
        "bincount int16": "refused",
        "reduce_max complex": "refused",
        "reduce_min complex": "refused",
    }


def test_the_refusals_say_why():
    with pytest.raises(TypeError, match=r"\[gradkit\] an axis must be an integer, but got 1.0"):
        gtf.reduce_sum(gtf.ones([2, 3]), axis=1.0)
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.math.bincount takes arr of dtype int32 or int64"):
        gtf.math.bincount(gtf.constant([1, 2], gtf.uint8))


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _program(gtf) == _program(tf)
