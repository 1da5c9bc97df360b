"""``tf.TensorShape(None)``, a shape of unknown rank: its properties, a Variable declared with
it (an assign may change its rank), and a ``TensorSpec`` of it (any shape), against TensorFlow
where installed; the expected values are by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _program(tf):
    unknown = tf.TensorShape(None)
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape(None))
    v.assign([[1.0, 2.0], [3.0, 4.0]])
    f = tf.function(lambda x: tf.reduce_sum(x), input_signature=[tf.TensorSpec(tf.TensorShape(None), tf.float32)])
    return {
        "rank": unknown.rank,
        "str": str(unknown),
        "equal_itself": unknown == tf.TensorShape(None),
        "equal_scalar": unknown == tf.TensorShape([]),
        "fully_defined": unknown.is_fully_defined(),
        "variable_rank": v.shape.rank,
        "variable": v.numpy().tolist(),
        "sums": [float(f(tf.ones([2, 3]))), float(f(tf.ones([4])))],
    }


def test_unknown_rank_shapes():
    out = _program(gtf)
    assert out == {
        "rank": None,
        "str": "<unknown>",
        "equal_itself": True,
        "equal_scalar": False,
        "fully_defined": False,
        "variable_rank": None,
        "variable": [[1.0, 2.0], [3.0, 4.0]],
        "sums": [6.0, 4.0],
    }
    with pytest.raises(ValueError, match=r"^\[gradkit\] as_list\(\) is not defined on an unknown TensorShape"):
        gtf.TensorShape(None).as_list()
    tf_real = pytest.importorskip("tensorflow")
    assert _program(tf_real) == out
    np.testing.assert_equal(gtf.TensorShape([None, 3]).as_list(), [None, 3])
