"""tf.nn.conv2d, conv1d, max_pool2d and avg_pool2d: values, gradients, shapes and errors
against real TensorFlow; inside tf.function; and through a Variable assignment against a
pure-JAX rewrite (where real TensorFlow gives None)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
F = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)
X1 = RNG.normal(size=(2, 9, 3)).astype(np.float32)
F1 = RNG.normal(size=(3, 3, 2)).astype(np.float32)
FG = RNG.normal(size=(2, 2, 1, 6)).astype(np.float32)  # grouped: 3 groups of 1 input channel


def _ok(program):
    out = run_both(program)
    assert not isinstance(out, Exception), out


def _weighted_sum(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32)).reshape(tuple(y.shape))
    return tf.reduce_sum(y * tf.constant(w))


def _with_gradients(f, x=X, w=F):
    def program(tf):
        xv, wv = tf.Variable(x), tf.Variable(w)
        with tf.GradientTape() as tape:
            y = f(tf, xv, wv)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, [xv, wv])]

    return program


CONV = {
    "same": lambda tf, x, w: tf.nn.conv2d(x, w, strides=1, padding="SAME"),
    "valid": lambda tf, x, w: tf.nn.conv2d(x, w, 1, "VALID"),
    "same_stride2": lambda tf, x, w: tf.nn.conv2d(x, w, strides=2, padding="SAME"),
    "strides4_valid": lambda tf, x, w: tf.nn.conv2d(x, w, strides=[1, 2, 3, 1], padding="VALID"),
    "strides2_list": lambda tf, x, w: tf.nn.conv2d(x, w, strides=[3, 2], padding="SAME"),
    "dilated_same": lambda tf, x, w: tf.nn.conv2d(x, w, 1, "SAME", dilations=2),
    "dilated_valid": lambda tf, x, w: tf.nn.conv2d(x, w, 1, "VALID", dilations=[1, 2, 2, 1]),
    "explicit": lambda tf, x, w: tf.nn.conv2d(x, w, 1, [[0, 0], [1, 2], [0, 1], [0, 0]]),
    "explicit_stride": lambda tf, x, w: tf.nn.conv2d(x, w, 2, [[0, 0], [2, 0], [1, 1], [0, 0]]),
}


@pytest.mark.parametrize("name", sorted(CONV))
def test_conv2d_values_and_gradients_match_tensorflow(name):
    _ok(_with_gradients(CONV[name]))


def test_grouped_conv2d_matches_tensorflow():
    tf_out, gk_out = (
        _with_gradients(lambda tf, x, w: tf.nn.conv2d(x, w, 1, "SAME"), w=FG)(tf) for tf in (tf_real, gtf)
    )
    for a, b in zip([tf_out[0], *tf_out[1]], [gk_out[0], *gk_out[1]]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)  # summation order


def test_conv_takes_tensorflows_batch_shape():
    _ok(_with_gradients(lambda tf, x, w: tf.nn.conv1d(x, w, 1, "SAME"), x=X, w=F1))
    _ok(_with_gradients(lambda tf, x, w: tf.nn.conv2d(x, w, 2, "VALID"), x=X[None], w=F))


def test_an_input_of_too_low_a_rank_is_a_gradkit_error():
    # (real TensorFlow 2.21 aborts the process on these, so they are not run there)
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf.nn.conv2d takes a rank-4 or higher input"):
        gtf.nn.conv2d(X[0], F, 1, "SAME")
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf.nn.conv1d takes a rank-3 or higher input"):
        gtf.nn.conv1d(X1[0], F1, 1, "SAME")


CONV1D = {
    "same": lambda tf, x, w: tf.nn.conv1d(x, w, stride=1, padding="SAME"),
    "valid_stride2": lambda tf, x, w: tf.nn.conv1d(x, w, 2, "VALID"),
    "dilated": lambda tf, x, w: tf.nn.conv1d(x, w, 1, "SAME", dilations=2),
    "stride3_list": lambda tf, x, w: tf.nn.conv1d(x, w, [1, 3, 1], "SAME"),
}


@pytest.mark.parametrize("name", sorted(CONV1D))
def test_conv1d_values_and_gradients_match_tensorflow(name):
    _ok(_with_gradients(CONV1D[name], x=X1, w=F1))


POOL = {
    "max_valid": lambda tf, x: tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID"),
    "max_same": lambda tf, x: tf.nn.max_pool2d(x, 3, 2, "SAME"),
    "max_overlap": lambda tf, x: tf.nn.max_pool2d(x, [2, 3], 1, "VALID"),
    "max_explicit": lambda tf, x: tf.nn.max_pool2d(x, 2, 2, [[0, 0], [1, 1], [1, 0], [0, 0]]),
    "max_ksize4": lambda tf, x: tf.nn.max_pool2d(x, [1, 2, 2, 1], [1, 1, 2, 1], "SAME"),
    "avg_valid": lambda tf, x: tf.nn.avg_pool2d(x, ksize=2, strides=2, padding="VALID"),
    "avg_same": lambda tf, x: tf.nn.avg_pool2d(x, 3, 2, "SAME"),
    "avg_same_stride1": lambda tf, x: tf.nn.avg_pool2d(x, [3, 2], 1, "SAME"),
}


@pytest.mark.parametrize("name", sorted(POOL))
def test_pool_values_and_gradients_match_tensorflow(name):
    def program(tf):
        xv = tf.Variable(X)
        with tf.GradientTape() as tape:
            y = POOL[name](tf, xv)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, xv)]

    _ok(program)


def test_a_cnn_inside_tf_function_matches_tensorflow():
    def program(tf):
        xv, wv = tf.Variable(X), tf.Variable(F)

        @tf.function
        def forward(x):
            h = tf.nn.relu(tf.nn.conv2d(x, wv, 1, "SAME"))
            return tf.nn.avg_pool2d(tf.nn.max_pool2d(h, 2, 1, "SAME"), 2, 2, "VALID")

        with tf.GradientTape() as tape:
            y = forward(xv)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, [xv, wv])]

    _ok(program)


def test_the_gradient_through_an_assigned_filter_is_exact():
    """A filter assigned from another Variable: real TensorFlow gives None for the source."""
    bias = np.float32(0.3)

    def pure(source, x):
        w = jnp.tanh(source) + bias
        y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.sum(jnp.sin(y))

    source, filters = gtf.Variable(F), gtf.Variable(np.zeros_like(F))
    with gtf.GradientTape() as tape:
        filters.assign(gtf.tanh(source) + bias)
        y = gtf.nn.max_pool2d(gtf.nn.conv2d(X, filters, 1, "SAME"), 2, 2, "VALID")
        loss = gtf.reduce_sum(gtf.sin(y))
    got = tape.gradient(loss, source)
    want = jax.grad(pure)(jnp.asarray(F), jnp.asarray(X))
    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(F), jnp.asarray(X)), rtol=1e-5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


BAD = {
    "conv2d_bad_padding": lambda tf: tf.nn.conv2d(tf.constant(X), tf.constant(F), 1, "HALF"),
    "conv2d_channel_mismatch": lambda tf: tf.nn.conv2d(tf.constant(X), tf.constant(F[:, :, :2]), 1, "SAME"),
    "conv2d_strides_length3": lambda tf: tf.nn.conv2d(tf.constant(X), tf.constant(F), [1, 1, 1], "SAME"),
    "conv1d_rank2_filters": lambda tf: tf.nn.conv1d(tf.constant(X1), tf.constant(F1[0]), 1, "SAME"),
    "max_pool_bad_padding": lambda tf: tf.nn.max_pool2d(tf.constant(X), 2, 2, "FULL"),
    "avg_pool_rank3": lambda tf: tf.nn.avg_pool2d(tf.constant(X[0]), 2, 2, "SAME"),
    "avg_pool_explicit": lambda tf: tf.nn.avg_pool2d(tf.constant(X), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf\.nn\.\w+"):
        BAD[name](gtf)
