"""tf.nn.max_pool / avg_pool (generic, 1d, 2d, 3d), tf.nn.pool and tf.nn.max_pool_with_argmax
against real TensorFlow: values, gradients through a Variable (including TensorFlow's choice
among tied entries: the first maximal entry for 1-D and 2-D, every entry within 1e-5 of the
maximum for 3-D), second derivatives, data formats, integer inputs, tf.function and errors."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

RNG = np.random.default_rng(0)
X1 = RNG.normal(size=(2, 9, 3)).astype(np.float32)
X2 = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
X3 = RNG.normal(size=(2, 5, 6, 4, 2)).astype(np.float32)
# Rounded: most windows hold ties, so the tie rules decide the gradients.
T1, T2, T3 = (np.round(x).astype(np.float32) for x in (X1, X2, X3))


def _weights(shape, dtype=np.float32):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float32)).reshape(tuple(shape)).astype(dtype)


def _with_gradient(f, x):
    def program(tf):
        v = tf.Variable(x)
        with tf.GradientTape() as tape:
            y = f(tf, v)
            loss = tf.reduce_sum(y * tf.constant(_weights(y.shape)))
        return [y, tape.gradient(loss, v)]

    return program


CASES = {
    "max_pool1d_valid": (lambda tf, x: tf.nn.max_pool1d(x, 3, 2, "VALID"), X1),
    "max_pool1d_same_ties": (lambda tf, x: tf.nn.max_pool1d(x, 3, 1, "SAME"), T1),
    "max_pool1d_explicit": (lambda tf, x: tf.nn.max_pool1d(x, [3], [1, 2, 1], [[0, 0], [2, 1], [0, 0]]), T1),
    "max_pool_rank3": (lambda tf, x: tf.nn.max_pool(x, [2], [1], "SAME"), T1),
    "max_pool2d_ties": (lambda tf, x: tf.nn.max_pool2d(x, 3, 1, "SAME"), T2),
    "max_pool2d_ties_valid": (lambda tf, x: tf.nn.max_pool2d(x, [2, 3], [1, 2], "VALID"), T2),
    "max_pool_rank4": (lambda tf, x: tf.nn.max_pool(x, 2, 2, "SAME"), T2),
    "max_pool_rank4_explicit": (lambda tf, x: tf.nn.max_pool(x, 3, 2, [[0, 0], [2, 1], [0, 2], [0, 0]]), T2),
    "max_pool3d": (lambda tf, x: tf.nn.max_pool3d(x, 2, 2, "SAME"), X3),
    "max_pool3d_ties": (lambda tf, x: tf.nn.max_pool3d(x, [2, 3, 2], 1, "SAME"), T3),
    "max_pool3d_ties_valid": (lambda tf, x: tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID"), T3),
    "avg_pool1d_same": (lambda tf, x: tf.nn.avg_pool1d(x, 4, 3, "SAME"), X1),
    "avg_pool_rank3": (lambda tf, x: tf.nn.avg_pool(x, [1, 2, 1], 2, "VALID"), X1),
    "avg_pool_rank4": (lambda tf, x: tf.nn.avg_pool(x, [3, 2], [2, 1], "SAME"), X2),
    "avg_pool3d_same": (lambda tf, x: tf.nn.avg_pool3d(x, [2, 3, 3], [2, 1, 2], "SAME"), X3),
    "pool_max_dilated": (lambda tf, x: tf.nn.pool(x, [2, 2], "MAX", dilations=[2, 1]), T2),
    "pool_avg_dilated": (lambda tf, x: tf.nn.pool(x, [2, 3], "AVG", dilations=[2, 2]), X2),
    "pool_max3d_dilated": (lambda tf, x: tf.nn.pool(x, [2, 2, 2], "MAX", dilations=[2, 1, 1]), T3),
    "pool_avg3d_strided": (lambda tf, x: tf.nn.pool(x, [2, 2, 2], "AVG", strides=[1, 2, 2], padding="SAME"), X3),
    "pool_max1d_same": (lambda tf, x: tf.nn.pool(x, [3], "MAX", strides=[2], padding="SAME"), T1),
    "pool_avg1d_same": (lambda tf, x: tf.nn.pool(x, [3], "AVG", strides=[2], padding="SAME"), X1),
    "pool_explicit": (lambda tf, x: tf.nn.pool(x, [2, 2], "MAX", padding=[[0, 0], [1, 1], [1, 0], [0, 0]]), T2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    f, x = CASES[name]
    _ok(_with_gradient(f, x))


@pytest.mark.parametrize(
    "values, grads",
    [
        ([1.0, 1.0 - 5e-6, 0.0], [1.0, 1.0, 0.0]),  # within 1e-5 of the maximum: both
        ([1.0, 1.0 - 2e-5, 0.0], [1.0, 0.0, 0.0]),
        ([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]),
    ],
)
def test_max_pool3d_sends_the_gradient_to_every_near_maximum_as_tensorflow(values, grads):
    def program(tf):
        v = tf.Variable(np.array(values, np.float32).reshape(1, 1, 1, 3, 1))
        with tf.GradientTape() as tape:
            y = tf.nn.max_pool3d(v, [1, 1, 3], 1, "VALID")
        return [y, tape.gradient(y, v)]

    out = _ok(program)
    np.testing.assert_array_equal(out[1].ravel(), grads)


def test_max_pool2d_sends_a_tie_to_the_first_entry_as_tensorflow():
    def program(tf):
        v = tf.Variable(np.array([2.0, 1.0, 2.0], np.float32).reshape(1, 1, 3, 1))
        with tf.GradientTape() as tape:
            y = tf.nn.max_pool2d(v, [1, 3], 1, "SAME")
        return [y, tape.gradient(y, v)]

    np.testing.assert_array_equal(_ok(program)[1].ravel(), [2.0, 0.0, 1.0])


SECOND = {
    "max_pool2d_ties": (lambda tf, x: tf.nn.max_pool2d(x, 2, 1, "SAME"), T2[:1]),
    "max_pool1d": (lambda tf, x: tf.nn.max_pool1d(x, 3, 2, "SAME"), X1),
    "max_pool3d": (lambda tf, x: tf.nn.max_pool3d(x, 2, 1, "VALID"), X3[:1]),
    "avg_pool2d": (lambda tf, x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), X2[:1]),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives_match_tensorflow(name):
    f, x = SECOND[name]

    def program(tf):
        v = tf.Variable(x)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = f(tf, v)
                loss = tf.reduce_sum(y * y * tf.constant(_weights(y.shape)))
            g = inner.gradient(loss, v)
            total = tf.reduce_sum(g * g)
        return [g, outer.gradient(total, v)]

    _ok(program)


@pytest.mark.parametrize("pool", ["max_pool2d", "max_pool1d", "avg_pool2d"])
def test_forward_mode_matches_tensorflow(pool):
    x = T2 if pool != "max_pool1d" else T1

    def program(tf):
        v = tf.Variable(x)
        with tf.autodiff.ForwardAccumulator(v, tf.constant(_weights(x.shape))) as acc:
            y = getattr(tf.nn, pool)(v, 3, 1, "SAME")
        return [y, acc.jvp(y)]

    _ok(program)


def test_channels_first_matches_tensorflow():
    # TensorFlow's CPU kernels have no channels-first max-pool gradient: its values are compared
    # here, and the gradients against TensorFlow's channels-last ones, transposed.
    def program(tf):
        return [
            tf.nn.max_pool2d(np.moveaxis(T2, -1, 1), 3, 2, "SAME", data_format="NCHW"),
            tf.nn.avg_pool2d(np.moveaxis(X2, -1, 1), 2, 1, "VALID", data_format="NCHW"),
            tf.nn.max_pool1d(np.moveaxis(T1, -1, 1), 2, 1, "SAME", data_format="NCW"),
            tf.nn.avg_pool3d(np.moveaxis(X3, -1, 1), 2, 2, "SAME", data_format="NCDHW"),
            tf.nn.pool(np.moveaxis(X2, -1, 1), [2, 2], "AVG", data_format="NCHW", dilations=[1, 2]),
        ]

    _ok(program)


@pytest.mark.parametrize("n", [2, 3])
def test_channels_first_max_pool_gradients_are_tensorflows_channels_last_ones(n):
    x, last, first = (T2, "NHWC", "NCHW") if n == 2 else (T3, "NDHWC", "NCDHW")
    want = _with_gradient(lambda tf, v: tf.nn.max_pool(v, 3, 2, "SAME", data_format=last), x)(tf_real)
    v = gtf.Variable(np.moveaxis(x, -1, 1))
    with gtf.GradientTape() as tape:
        y = gtf.nn.max_pool(v, 3, 2, "SAME", data_format=first)
        loss = gtf.reduce_sum(y * gtf.constant(np.moveaxis(_weights(want[0].shape), -1, 1)))
    np.testing.assert_allclose(np.moveaxis(y.numpy(), 1, -1), want[0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.moveaxis(tape.gradient(loss, v).numpy(), 1, -1), want[1].numpy(), rtol=1e-5, atol=1e-6
    )


def test_rank5_generic_pools_match_tensorflows_3d_pools():
    # TensorFlow's own gradient of tf.nn.max_pool / avg_pool on a rank-5 input fails (its
    # gradient reads a data_format of None): the gradients are compared with max_pool3d's.
    _ok(lambda tf: [tf.nn.max_pool(T3, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID"), tf.nn.avg_pool(X3, 2, 1, "SAME")])
    want = _with_gradient(lambda tf, x: tf.nn.max_pool3d(x, 2, [1, 2, 1], "SAME"), T3)(tf_real)
    got = _with_gradient(lambda tf, x: tf.nn.max_pool(x, 2, [1, 2, 1], "SAME"), T3)(gtf)
    for a, b in zip(want, got):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float16"])
def test_max_pool_of_other_dtypes_matches_tensorflow(dtype):
    def program(tf):
        x = tf.cast(tf.constant(np.abs(T2) * 10), dtype)
        return [tf.nn.max_pool2d(x, 2, 1, "SAME"), tf.nn.max_pool1d(x[0], 3, 2, "VALID")]

    out = _ok(program)
    assert all(np.dtype(o.dtype) == np.dtype(dtype) for o in out)


@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax_matches_tensorflow(include_batch):
    def program(tf):
        v = tf.Variable(T2)
        with tf.GradientTape() as tape:
            out, argmax = tf.nn.max_pool_with_argmax(v, 3, 2, "SAME", include_batch_in_index=include_batch)
            loss = tf.reduce_sum(out * tf.constant(_weights(out.shape)))
        return [out, argmax, tape.gradient(loss, v)]

    _ok(program)


def test_max_pool_with_argmax_returned_from_a_function_matches_tensorflow():
    def program(tf):
        pooled = tf.function(lambda x: tf.nn.max_pool_with_argmax(x, 2, 2, "VALID"))(tf.constant(T2))
        return [type(pooled).__name__, pooled.output, pooled.argmax]

    _ok(program)


def test_pooling_inside_tf_function_matches_tensorflow():
    def program(tf):
        v = tf.Variable(T2)

        @tf.function
        def forward(x):
            h = tf.nn.max_pool(x, 2, 1, "SAME")
            return tf.nn.avg_pool(h, 3, 2, "SAME")[:, :3] + tf.nn.pool(h, [2, 2], "MAX", dilations=[2, 2])[:, :3, :3]

        with tf.GradientTape() as tape:
            y = forward(v)
            loss = tf.reduce_sum(y * tf.constant(_weights(y.shape)))
        return [y, tape.gradient(loss, v)]

    _ok(program)


BAD = {
    "max_pool_lower_case_padding": lambda tf: tf.nn.max_pool(tf.constant(X2), 2, 1, "same"),
    "max_pool_rank6": lambda tf: tf.nn.max_pool(tf.zeros([1, 2, 2, 2, 2, 1]), 1, 1, "VALID"),
    "max_pool3d_explicit": lambda tf: tf.nn.max_pool3d(tf.constant(X3), 2, 1, [[0, 0], [1, 1], [1, 1], [1, 1], [0, 0]]),
    "max_pool_rank5_explicit": lambda tf: tf.nn.max_pool(tf.constant(X3), 2, 1, [[0, 0]] + [[1, 1]] * 3 + [[0, 0]]),
    "max_pool_padding_as_large_as_window": lambda tf: tf.nn.max_pool2d(
        tf.constant(X2), 2, 1, [[0, 0], [2, 2], [0, 0], [0, 0]]
    ),
    "max_pool_ksize_0": lambda tf: tf.nn.max_pool2d(tf.constant(X2), 0, 1, "VALID"),
    "max_pool_batch_window": lambda tf: tf.nn.max_pool2d(tf.constant(X2), [2, 1, 1, 1], 1, "VALID"),
    "max_pool1d_format": lambda tf: tf.nn.max_pool2d(tf.constant(X2), 2, 1, "VALID", data_format="NWC"),
    "max_pool3d_int": lambda tf: tf.nn.max_pool3d(tf.constant(T3.astype(np.int32)), 2, 1, "VALID"),
    "avg_pool_int": lambda tf: tf.nn.avg_pool2d(tf.constant(T2.astype(np.int32)), 2, 1, "VALID"),
    "avg_pool_explicit": lambda tf: tf.nn.avg_pool(tf.constant(X1), 2, 1, [[0, 0], [1, 1], [0, 0]]),
    "avg_pool3d_rank4": lambda tf: tf.nn.avg_pool3d(tf.constant(X2), 2, 1, "VALID"),
    "pool_int_window": lambda tf: tf.nn.pool(tf.constant(X2), 2, "MAX"),
    "pool_lower_case_type": lambda tf: tf.nn.pool(tf.constant(X2), [2, 2], "max"),
    "pool_rank_mismatch": lambda tf: tf.nn.pool(tf.constant(X2), [2], "MAX"),
    "pool_strides_over_window": lambda tf: tf.nn.pool(tf.constant(X2), [2, 2], "MAX", strides=[3, 3]),
    "pool_dilated_same": lambda tf: tf.nn.pool(tf.constant(X2), [2, 2], "AVG", padding="SAME", dilations=[2, 2]),
    "pool_dilated_strided": lambda tf: tf.nn.pool(tf.constant(X2), [2, 2], "AVG", strides=[2, 2], dilations=[2, 2]),
    "pool_avg_explicit": lambda tf: tf.nn.pool(
        tf.constant(X2), [2, 2], "AVG", padding=[[0, 0], [1, 1], [1, 1], [0, 0]]
    ),
    "argmax_nchw": lambda tf: tf.nn.max_pool_with_argmax(tf.constant(X2), 2, 2, "SAME", data_format="NCHW"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf\.nn\.\w+"):
        BAD[name](gtf)


def test_a_window_larger_than_the_input_is_a_gradkit_error():
    # (real TensorFlow 2.21 aborts the process on this one, so it is not run there)
    with pytest.raises(GradkitError, match=r"larger than the input"):
        gtf.nn.max_pool2d(gtf.constant(X2), 8, 1, "VALID")


def test_windows_of_minus_infinity_match_tensorflow():
    a = np.full((1, 3, 3, 1), -np.inf, np.float32)
    a[0, 2, 2, 0] = 1.0

    def program(tf):
        x = tf.constant(a)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            ys = [
                tf.nn.max_pool2d(x, 2, 2, "SAME"),
                tf.nn.max_pool3d(tf.reshape(x, [1, 1, 3, 3, 1]), 2, 2, "SAME"),
                tf.nn.max_pool1d(tf.reshape(x, [1, 9, 1]), 2, 2, "VALID"),
                tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")[0],
            ]
        return [ys, [tape.gradient(y, x) for y in ys]]

    _ok(program)
