"""tf.math.segment_sum / segment_mean / segment_max and their unsorted_ forms: values,
gradients (the maximum's split among ties), empty segments, shapes and errors against real
TensorFlow; inside tf.function; and through a Variable assignment against a pure-JAX rewrite."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

# Rows 1 and 2 tie in column 0, so the maximum's gradient splits there.
X = np.array([[0.5, 2.0, -1.0], [3.0, -0.5, 0.25], [3.0, 1.5, 0.75], [-2.0, 0.1, 4.0], [1.0, 1.0, 1.0]], np.float32)


def _with_gradient(f):
    def program(tf):
        xv = tf.Variable(X)
        with tf.GradientTape() as tape:
            y = f(tf, xv)
            w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32)).reshape(tuple(y.shape))
            loss = tf.reduce_sum(y * tf.constant(w))
        return [y, tape.gradient(loss, xv)]

    return program


CASES = {
    "segment_sum": lambda tf, x: tf.math.segment_sum(x, [0, 1, 1, 3, 3]),
    "segment_mean": lambda tf, x: tf.math.segment_mean(x, tf.constant([0, 0, 0, 2, 2])),
    "segment_max": lambda tf, x: tf.math.segment_max(x, [0, 1, 1, 1, 4]),
    "segment_max_vector": lambda tf, x: tf.math.segment_max(x[:, 0], [0, 0, 0, 1, 1]),
    "unsorted_sum": lambda tf, x: tf.math.unsorted_segment_sum(x, [2, 0, 2, -1, 0], 4),
    "unsorted_mean": lambda tf, x: tf.math.unsorted_segment_mean(x, [2, 0, 2, 1, 0], num_segments=4),
    "unsorted_max": lambda tf, x: tf.math.unsorted_segment_max(x, [1, 0, 0, 0, 1], 3),
    "unsorted_max_negative_id": lambda tf, x: tf.math.unsorted_segment_max(x, [1, -1, 0, 0, 1], 2),
    "unsorted_2d_ids": lambda tf, x: tf.math.unsorted_segment_sum(
        x[:4], tf.constant([[0, 2, 1], [1, 1, 0], [2, 2, 2], [0, 1, 2]]), 3
    ),
    "unsorted_max_2d_ids": lambda tf, x: tf.math.unsorted_segment_max(
        x[:4], [[0, 1, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]], 3
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    _ok(_with_gradient(CASES[name]))


def test_integer_data_matches_tensorflow():
    def program(tf):
        d = tf.constant([[1, 5], [3, -2], [7, 0]])
        return [
            tf.math.segment_sum(d, [0, 0, 1]),
            tf.math.segment_max(d, [0, 2, 2]),
            tf.math.unsorted_segment_max(d, [2, 0, 2], 4),
            tf.math.unsorted_segment_sum(d, [1, 1, 0], 2),
        ]

    _ok(program)


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        xv = tf.Variable(X)

        @tf.function
        def forward(ids):
            return tf.math.unsorted_segment_max(xv, ids, 3) + tf.math.unsorted_segment_mean(xv, ids, 3) * 2.0

        with tf.GradientTape() as tape:
            y = forward(tf.constant([2, 0, 0, 2, 1]))
            loss = tf.reduce_sum(y * y)
        return [y, tape.gradient(loss, xv)]

    _ok(program)


def test_the_gradient_through_an_assigned_variable_is_exact():
    ids = np.array([0, 1, 1, 1, 3])

    def pure(source):
        v = source * 3.0
        totals = jax.ops.segment_sum(v, ids, 4)
        return jnp.sum(jnp.sin(totals)) + jnp.sum(jax.ops.segment_max(v[:, 1], ids, 4)[jnp.array([0, 1, 3])])

    source, v = gtf.Variable(X), gtf.Variable(np.zeros_like(X))
    with gtf.GradientTape() as tape:
        v.assign(source * 3.0)
        loss = gtf.reduce_sum(gtf.sin(gtf.math.segment_sum(v, ids))) + gtf.reduce_sum(
            gtf.gather(gtf.math.segment_max(v[:, 1], ids), [0, 1, 3])
        )
    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(X)), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, source).numpy(), jax.grad(pure)(jnp.asarray(X)), rtol=1e-5)


BAD = {
    "unsorted_ids": lambda tf: tf.math.segment_sum(tf.constant(X), [0, 2, 1, 3, 3]),
    "negative_sorted_id": lambda tf: tf.math.segment_mean(tf.constant(X), [-1, 0, 0, 1, 1]),
    "ids_length": lambda tf: tf.math.segment_max(tf.constant(X), [0, 0, 1]),
    "float_ids": lambda tf: tf.math.unsorted_segment_sum(tf.constant(X), tf.constant([0.0, 1, 1, 0, 0]), 2),
    "id_past_num_segments": lambda tf: tf.math.unsorted_segment_sum(tf.constant(X), [0, 1, 2, 0, 0], 2),
    "ids_not_a_prefix": lambda tf: tf.math.unsorted_segment_max(tf.constant(X), [0, 1], 2),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.math\.\w*segment_"):
        BAD[name](gtf)


def test_sorted_ids_traced_inside_tf_function_are_a_gradkit_error():
    from gradkit import GradkitError

    f = gtf.function(lambda ids: gtf.math.segment_sum(X, ids))
    with pytest.raises(GradkitError, match="unsorted_segment_sum"):
        f(gtf.constant([0, 0, 1, 1, 2]))


def test_integer_unsorted_mean_dtype_under_jax_64_bit_mode():
    # TensorFlow divides with truediv: float32 means for 8- and 16-bit integers, float64 for wider.
    from _x64_subprocess import run_script

    script = """
        import json, sys
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import gradkit.tf as tf
        out = {}
        for dtype in json.loads(sys.argv[1]):
            mean = tf.math.unsorted_segment_mean(tf.constant(np.array([1, 2, 4], dtype)), [0, 0, 1], 2)
            out[dtype] = [mean.dtype.name, mean.numpy().tolist()]
        print(json.dumps(out))
    """
    got = run_script(script, ["int8", "uint8", "int16", "uint16", "int32", "int64"])
    for dtype, (name, values) in got.items():
        assert name == ("float32" if np.dtype(dtype).itemsize < 4 else "float64"), (dtype, name)
        assert values == [1.5, 4.0]
