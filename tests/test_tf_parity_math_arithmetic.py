"""tf.math.asinh/acosh/atanh, is_inf, softsign, xlog1py, xdivy, multiply_no_nan,
reciprocal_no_nan, nextafter, scalar_mul, polyval, accumulate_n, tf.truncatediv/truncatemod
and the top-level aliases (tf.tan, tf.asinh, ...) against real TensorFlow: values, dtypes,
gradients (where the "no NaN" ops are 0, and None where TensorFlow has none), second
derivatives, inside tf.function, and the errors for inputs TensorFlow refuses."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.array([[0.0, -1.5, 2.0], [0.5, 0.0, -0.25]], np.float32)
Y = np.array([[0.0, 0.0, 4.0], [-1.0, 3.0, 0.0]], np.float32)


def _dtype(tf, t):
    return t.dtype.name if tf is tf_real else np.dtype(t.dtype).name


def _weighted_sum(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32) + 0.5).reshape(tuple(y.shape))
    return tf.reduce_sum(y * tf.constant(w))


CASES = {
    "asinh": lambda tf, x, y: tf.math.asinh(x),
    "acosh": lambda tf, x, y: tf.math.acosh(x + 2.0),
    "atanh": lambda tf, x, y: tf.math.atanh(x / 2.5),
    "softsign": lambda tf, x, y: tf.math.softsign(x),
    "xlog1py": lambda tf, x, y: tf.math.xlog1py(x, y),
    "xlog1py_at_minus_one": lambda tf, x, y: tf.math.xlog1py(x, y * 0.0 - 1.0),
    "xlog1py_broadcast": lambda tf, x, y: tf.math.xlog1py(x[:1], tf.reshape(y[:, 2], [2, 1])),
    "xdivy": lambda tf, x, y: tf.math.xdivy(x, y),
    "xdivy_broadcast": lambda tf, x, y: tf.math.xdivy(tf.reshape(x[:, 0], [2, 1]), y + 1.0),
    "multiply_no_nan": lambda tf, x, y: tf.math.multiply_no_nan(tf.math.log(x), y),
    "multiply_no_nan_broadcast": lambda tf, x, y: tf.math.multiply_no_nan(x[0], y),
    "reciprocal_no_nan": lambda tf, x, y: tf.math.reciprocal_no_nan(x),
    "nextafter": lambda tf, x, y: tf.math.nextafter(x, y),
    "scalar_mul": lambda tf, x, y: tf.math.scalar_mul(y[1, 1], x),
    "scalar_mul_top_level": lambda tf, x, y: tf.scalar_mul(2.5, x),
    "polyval": lambda tf, x, y: tf.math.polyval([y[0, 2], x, 3.0, y], x),
    "polyval_one_coefficient": lambda tf, x, y: tf.math.polyval([y[0, 2]], x),
    "accumulate_n": lambda tf, x, y: tf.math.accumulate_n([x, y, x * y]),
    "tan": lambda tf, x, y: tf.tan(x) + tf.math.tan(x),
    "sinh_cosh": lambda tf, x, y: tf.sinh(x) * tf.cosh(x),
    "atan2": lambda tf, x, y: tf.atan2(x, y + 1.0),
    "top_level_inverse_hyperbolic": lambda tf, x, y: tf.asinh(x) + tf.acosh(y + 2.0) + tf.atanh(x / 3.0),
    "truncatediv_no_gradient": lambda tf, x, y: tf.truncatediv(x * 4.0, y + 0.5) + x,
    "is_inf_mask": lambda tf, x, y: tf.where(tf.math.is_inf(1.0 / x), 0.0, x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_dtypes_and_gradients_match_tensorflow(name):
    def program(tf):
        x, y = tf.Variable(X), tf.Variable(Y)
        with tf.GradientTape() as tape:
            z = CASES[name](tf, x, y)
            loss = _weighted_sum(tf, z)
        return [z, _dtype(tf, z), tape.gradient(loss, [x, y])]

    _ok(program)


def test_no_nan_ops_at_infinities_and_zero_upstream_match_tensorflow():
    def program(tf):
        x = tf.Variable([np.inf, 2.0, np.nan, -np.inf])
        y = tf.Variable([0.0, 0.0, 0.0, 3.0])
        with tf.GradientTape() as tape:
            z = tf.math.multiply_no_nan(x, y) * tf.constant([3.0, 0.0, 1.0, 1.0])
            loss = tf.reduce_sum(z)
        return [z, tape.gradient(loss, [x, y])]

    _ok(program)


SECOND = {
    "multiply_no_nan": lambda tf, x, y: tf.math.multiply_no_nan(x * x, y),
    "xdivy": lambda tf, x, y: tf.math.xdivy(x, y + 2.0),
    "xlog1py": lambda tf, x, y: tf.math.xlog1py(x, y + 2.0),
    "reciprocal_no_nan": lambda tf, x, y: tf.math.reciprocal_no_nan(x + y),
    "nextafter": lambda tf, x, y: tf.math.nextafter(x * x, y),
    "atanh": lambda tf, x, y: tf.math.atanh(x / 2.5) * y,
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives_match_tensorflow(name):
    def program(tf):
        x, y = tf.Variable(X), tf.Variable(Y)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = _weighted_sum(tf, SECOND[name](tf, x, y))
            gx, gy = inner.gradient(loss, [x, y])
            gg = tf.reduce_sum(gx * gx) + tf.reduce_sum(gy * gy)
        return [gx, gy, outer.gradient(gg, [x, y])]

    _ok(program)


INTEGER = {
    "truncatediv": lambda tf: tf.truncatediv(tf.constant([-7, 7, 6, -1]), tf.constant([2, -2, 4, 3])),
    "truncatediv_python": lambda tf: tf.truncatediv(tf.constant([-7, 3]), 2),
    "truncatediv_int8": lambda tf: tf.truncatediv(tf.constant([-7, 9], tf.int8), tf.constant([2, -4], tf.int8)),
    "truncatediv_float": lambda tf: tf.truncatediv(tf.constant([-7.5, 7.5, 1.0]), tf.constant([2.0, -2.0, 0.0])),
    "truncatemod": lambda tf: tf.truncatemod(tf.constant([-7, 7, 6, -1]), tf.constant([2, -2, 4, 3])),
    "truncatemod_float": lambda tf: tf.truncatemod(tf.constant([-7.5, 7.5]), tf.constant([2.0, -2.0])),
    "polyval_int": lambda tf: tf.math.polyval([1, 2, -3], tf.constant([1, 2, 4])),
    "polyval_python_x": lambda tf: tf.math.polyval([1.0, 2.0], 3.0),
    "polyval_empty": lambda tf: tf.math.polyval([], tf.constant([1.0, 2.0])),
    "accumulate_n_one": lambda tf: tf.math.accumulate_n([[1.0, 2.0]]),
    "accumulate_n_python": lambda tf: tf.math.accumulate_n([[1.0, 2.0], [3.0, 4.0]], shape=[2]),
    "is_inf": lambda tf: tf.math.is_inf(tf.constant([np.inf, -np.inf, np.nan, 1.0], tf.float16)),
    "scalar_mul_numpy": lambda tf: tf.math.scalar_mul(np.float64(2.5), tf.constant([1.0, 2.0])),
}


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_float_and_python_inputs_match_tensorflow(name):
    def program(tf):
        z = INTEGER[name](tf)
        return [z, _dtype(tf, z)]

    _ok(program)


def test_scalar_mul_scales_the_values_of_indexed_slices():
    def program(tf):
        out = tf.math.scalar_mul(
            2.0, tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([3]), tf.constant([5, 2]))
        )
        return [out.values, out.indices, out.dense_shape]

    _ok(program)


def test_the_truncated_ops_give_no_gradient():
    x = gtf.Variable([-7.5, 7.5])
    with gtf.GradientTape(persistent=True) as tape:
        d = gtf.reduce_sum(gtf.truncatediv(x, 2.0))
        m = gtf.reduce_sum(gtf.truncatemod(x, 2.0))
    assert tape.gradient(d, x) is None and tape.gradient(m, x) is None
    # TensorFlow: None for truncatediv; for truncatemod it has no gradient and raises LookupError.
    xv = tf_real.Variable([-7.5, 7.5])
    with tf_real.GradientTape() as tape:
        d = tf_real.reduce_sum(tf_real.truncatediv(xv, 2.0))
    assert tape.gradient(d, xv) is None


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        x, y = tf.Variable(X), tf.Variable(Y)

        @tf.function
        def forward(s):
            return (
                (tf.math.xdivy(x, y) + tf.math.multiply_no_nan(x, y) * s + tf.math.polyval([s, y, 1.0], x))
                + tf.math.scalar_mul(s, tf.math.asinh(x))
                + tf.math.accumulate_n([x, y])
            )

        with tf.GradientTape() as tape:
            z = forward(tf.constant(1.5))
            loss = _weighted_sum(tf, z)
        return [z, tape.gradient(loss, [x, y])]

    _ok(program)


BAD = {
    "is_inf_int": lambda tf: tf.math.is_inf(tf.constant([1, 2])),
    "asinh_int": lambda tf: tf.math.asinh(tf.constant([1])),
    "xdivy_int": lambda tf: tf.math.xdivy(tf.constant([1]), tf.constant([2])),
    "multiply_no_nan_int": lambda tf: tf.math.multiply_no_nan(tf.constant([1]), tf.constant([2])),
    "multiply_no_nan_mixed": lambda tf: tf.math.multiply_no_nan(tf.constant([1.0]), tf.constant([2.0], tf.float16)),
    "reciprocal_no_nan_int": lambda tf: tf.math.reciprocal_no_nan(tf.constant([1, 0])),
    "nextafter_half": lambda tf: tf.math.nextafter(tf.constant([1.0], tf.float16), tf.constant([2.0], tf.float16)),
    "scalar_mul_vector": lambda tf: tf.math.scalar_mul(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0])),
    "scalar_mul_float_for_int": lambda tf: tf.math.scalar_mul(2.5, tf.constant([1, 2])),
    "polyval_tensor_coeffs": lambda tf: tf.math.polyval(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0])),
    "polyval_tuple_coeffs": lambda tf: tf.math.polyval((1.0, 2.0), tf.constant([1.0, 2.0])),
    "polyval_int_coeffs_float_x": lambda tf: tf.math.polyval([1, 2], tf.constant([1.0, 2.0])),
    "accumulate_n_empty": lambda tf: tf.math.accumulate_n([]),
    "accumulate_n_shapes": lambda tf: tf.math.accumulate_n([tf.constant([1.0, 2.0]), tf.constant([[1.0, 2.0]])]),
    "accumulate_n_shape_arg": lambda tf: tf.math.accumulate_n([tf.constant([1.0, 2.0])], shape=[3]),
    "accumulate_n_dtypes": lambda tf: tf.math.accumulate_n([tf.constant([1.0]), tf.constant([1.0], tf.float16)]),
    "accumulate_n_tensor_dtype": lambda tf: tf.math.accumulate_n([tf.constant([1.0])], tensor_dtype=tf.float16),
    "truncatediv_by_zero": lambda tf: tf.truncatediv(tf.constant([-7, 7]), tf.constant([0, -2])),
    "truncatemod_by_zero": lambda tf: tf.truncatemod(tf.constant([1, 2]), tf.constant([0, 1])),
    "truncatemod_int8": lambda tf: tf.truncatemod(tf.constant([-7], tf.int8), tf.constant([2], tf.int8)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_inputs_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.(math\.)?\w+"):
        BAD[name](gtf)


def test_top_level_aliases_are_the_ones_tensorflow_has():
    added = "tan sinh cosh atan2 asinh acosh atanh scalar_mul truncatediv truncatemod".split()
    for name in added:
        assert hasattr(tf_real, name), name
        assert callable(getattr(gtf, name)), name
    for name in ("is_inf", "xdivy", "multiply_no_nan", "polyval", "erfc", "bincount", "cumulative_logsumexp"):
        assert not hasattr(tf_real, name), name
        with pytest.raises(AttributeError, match=r"^\[gradkit\]"):
            getattr(gtf, name)
