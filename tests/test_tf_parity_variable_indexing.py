"""A tf.Variable's index reads as a tensor's does: bounds checked, boolean masks selecting.

jax clamps an integer index outside its axis (``v[5]`` on three rows read the last row), and a
Variable's slice was taken on the raw array, so it skipped the checks a tensor's index makes.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

X = np.arange(12, dtype=np.float32).reshape(3, 4)

OUT_OF_BOUNDS = {
    "row": lambda v: v[5],
    "negative_row": lambda v: v[-4],
    "column": lambda v: v[1, 9],
    "after_a_slice": lambda v: v[1:2, 7],
    "after_an_ellipsis": lambda v: v[..., 4],
    "assigned": lambda v: v[3].assign(np.ones(4, np.float32)),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_BOUNDS))
def test_an_index_outside_its_axis_raises_as_in_tensorflow(name):
    out = run_both(lambda tf: OUT_OF_BOUNDS[name](tf.Variable(X)))
    assert isinstance(out, IndexError), out


def test_indices_inside_the_axes_read_as_in_tensorflow():
    run_both(lambda tf: [tf.Variable(X)[-3], tf.Variable(X)[2, -1], tf.Variable(X)[..., 3]])


def test_a_boolean_mask_selects_and_differentiates_as_in_tensorflow():
    def program(tf):
        v = tf.Variable(X)
        with tf.GradientTape() as t:
            picked = v[v > 5.0]
            rows = v[np.array([True, False, True])]
            loss = tf.reduce_sum(picked**2) + tf.reduce_sum(rows * 3.0)
        return [picked, rows, t.gradient(loss, v)]

    out = run_both(program)
    assert not isinstance(out, Exception), out
