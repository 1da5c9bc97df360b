"""``tf.experimental.Optional`` and ``iterator.get_next_as_optional()``: the same programs on
gradkit and, where it is installed, on TensorFlow, compared (values as nested Python lists)."""

import jax
import numpy as np
import pytest

import gradkit.tf as gtf


def _plain(tree):
    return jax.tree_util.tree_map(lambda t: np.asarray(t).tolist(), tree, is_leaf=lambda x: hasattr(x, "numpy"))


def _spec(tree):
    return jax.tree_util.tree_map(
        lambda s: (tuple(s.shape), np.dtype(getattr(s.dtype, "as_numpy_dtype", s.dtype)).name),
        tree,
        is_leaf=lambda x: hasattr(x, "shape") and hasattr(x, "dtype"),
    )


def _eager(tf):
    ds = tf.data.Dataset.from_tensor_slices(({"a": [1.0, 2.0]}, [3, 4]))
    it = iter(ds)
    out = []
    while True:
        o = it.get_next_as_optional()
        out.append((bool(o.has_value()), _spec(o.element_spec)))
        if not o.has_value():
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
                o.get_value()
            break
        out.append(_plain(o.get_value()))
    made = tf.experimental.Optional.from_value((tf.constant(1.0), [tf.constant([1, 2])]))
    out.append((bool(made.has_value()), _plain(made.get_value()), _spec(made.element_spec)))
    empty = tf.experimental.Optional.empty(tf.TensorSpec([2], tf.float32))
    out.append((bool(empty.has_value()), _spec(empty.element_spec)))
    out.append(_plain(tf.data.experimental.get_next_as_optional(iter(ds)).get_value()))
    out.append(isinstance(tf.OptionalSpec(tf.TensorSpec([2], tf.float32)), tf.OptionalSpec))
    return out


def test_get_next_as_optional_and_optional_eagerly():
    got = _eager(gtf)
    assert got[0] == (True, ({"a": ((), "float32")}, ((), "int32")))
    assert got[1] == ({"a": 1.0}, 3) and got[3] == ({"a": 2.0}, 4) and got[4][0] is False
    assert got[5] == (True, (1.0, [[1, 2]]), (((), "float32"), ((1, 2), "int32")))
    assert got[6] == (False, ((2,), "float32"))
    try:
        import tensorflow as tf
    except ImportError:
        return
    assert got == _eager(tf)


def _traced(tf):
    ds = tf.data.Dataset.from_tensor_slices(({"a": [1.0, 2.0]}, [3, 4]))

    @tf.function
    def step(it):
        o = it.get_next_as_optional()
        return tf.cond(o.has_value(), lambda: o.get_value()[1] * 10, lambda: tf.constant(-1))

    it = iter(ds)
    values = [int(step(it)) for _ in range(4)]

    @tf.function
    def inner():
        o = iter(ds).get_next_as_optional()
        return o.has_value(), o.get_value()[0]["a"]

    has, a = inner()
    return values, bool(has), float(a), step.experimental_get_tracing_count()


def test_get_next_as_optional_inside_a_tf_function():
    got = _traced(gtf)
    assert got == ([30, 40, -1, -1], True, 1.0, 1)  # one trace: each call reads the next element when it runs
    try:
        import tensorflow as tf
    except ImportError:
        return
    assert got == _traced(tf)
