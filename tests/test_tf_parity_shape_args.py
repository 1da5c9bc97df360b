"""Shape-like arguments TensorFlow refuses raise in gradkit.tf too.

jax broadcasts or clamps them (``jnp.tile`` pads short multiples with ones, ``jnp.pad`` spreads
one row of paddings over every axis and mirrors past an edge, ``jax.lax.slice`` clamps a
negative begin), so each of these returned a tensor that TensorFlow never produces.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

X = np.arange(12, dtype=np.float32).reshape(3, 4)

REFUSED = {
    "tile_short_multiples": lambda tf: tf.tile(tf.constant(X), [2]),
    "tile_long_multiples": lambda tf: tf.tile(tf.constant(X), [2, 1, 1]),
    "unstack_num_not_the_axis_size": lambda tf: tf.unstack(tf.constant(X), num=2),
    "pad_one_row_for_two_axes": lambda tf: tf.pad(tf.constant(X), [[1, 1]]),
    "pad_negative": lambda tf: tf.pad(tf.constant(X), [[-1, 0], [0, 1]]),
    "pad_reflect_past_the_edge": lambda tf: tf.pad(tf.constant(X), [[3, 0], [0, 0]], mode="REFLECT"),
    "pad_symmetric_past_the_edge": lambda tf: tf.pad(tf.constant(X), [[0, 0], [5, 0]], mode="SYMMETRIC"),
    "split_sizes_short": lambda tf: tf.split(tf.constant(X), [1, 1], axis=0),
    "split_sizes_long_with_rest": lambda tf: tf.split(tf.constant(X), [3, -1, 2], axis=1),
    "slice_negative_begin": lambda tf: tf.slice(tf.constant(X), [-1, 0], [1, 1]),
    "slice_past_the_end": lambda tf: tf.slice(tf.constant(X), [2, 0], [2, 1]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_argument_tensorflow_refuses_raises(name):
    out = run_both(REFUSED[name])
    assert isinstance(out, Exception), out


def test_the_arguments_tensorflow_takes_agree():
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as t:
            outs = [
                tf.tile(x, [2, 1]),
                *tf.unstack(x, num=4, axis=1),
                tf.pad(x, [[2, 0], [0, 3]], mode="REFLECT"),
                tf.pad(x, [[3, 0], [0, 4]], mode="SYMMETRIC"),
                *tf.split(x, [1, -1, 2], axis=1),
                *tf.split(x, [3, -1], axis=1),
                tf.slice(x, [1, 0], [-1, 4]),
            ]
            loss = sum(tf.reduce_sum(o * o) for o in outs)
        return outs + [t.gradient(loss, x)]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_shape_and_size_of_a_list_of_tensors_agree_in_a_function():
    def program(tf):
        @tf.function
        def shapes(x):
            return tf.shape((x, x)), tf.size([x]), tf.rank([x, x, x])

        return [*shapes(tf.constant(X)), tf.shape([tf.constant(X)])]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_a_traced_begin_with_known_sizes_slices_in_a_function():
    def program(tf):
        x = tf.Variable(np.arange(24, dtype=np.float32).reshape(4, 6))

        @tf.function
        def rows(begin, i):
            return tf.slice(x, begin, [2, 3]), tf.slice(x, [i, 0], [1, -1]), tf.slice(x, [1, i], [-1, 2])

        with tf.GradientTape() as tape:
            outs = rows(tf.constant([1, 2]), tf.constant(2))
            loss = sum(tf.reduce_sum(o * o) for o in outs)
        return [*outs, tape.gradient(loss, x)]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_a_traced_begin_where_the_size_is_minus_one_is_refused():
    import gradkit.tf as gtf

    f = gtf.function(lambda x, i: gtf.slice(x, [0, i], [1, -1]))
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.slice inside tf.function got a traced begin on axis 1"):
        f(gtf.constant(X), gtf.constant(1))
