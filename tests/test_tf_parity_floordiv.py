"""tf.math.floordiv of floats is floor(x / y), as TensorFlow computes it.

jnp.floor_divide goes through NumPy's divmod, which can land one lower where x / y rounds to
an integer: in float32 1.5 // 0.3 is 5.0 in TensorFlow and was 4.0 here.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

X = np.array([1.5, -1.5, 7.0, 0.6, 2.1, -0.9], np.float32)


def test_float_floordiv_matches_tensorflow():
    def program(tf):
        v = tf.Variable(X)
        with tf.GradientTape() as t:
            q = tf.math.floordiv(v, 0.3)
            loss = tf.reduce_sum(q * v)
        return [q, v // 0.3, 0.3 // v, tf.math.floordiv(tf.constant(X), tf.constant(0.3)), t.gradient(loss, v)]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_integer_floordiv_still_rounds_toward_minus_infinity():
    out = run_both(lambda tf: [tf.math.floordiv(tf.constant([7, -7, 6]), 2), tf.Variable([7, -7]) // 3])
    assert not isinstance(out, Exception), out
