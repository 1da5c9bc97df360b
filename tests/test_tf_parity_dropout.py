"""tf.nn.dropout: the same statistics, gradients (exactly 0 where dropped, 1 / (1 - rate) where
kept), shapes, dtypes and errors as real TensorFlow (whose draws differ); a new mask at each
call of a tf.function; and the gradient through an assigned Variable against a pure-JAX
rewrite (real TensorFlow gives None there)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

X = np.linspace(-2.0, 3.0, 6000, dtype=np.float32).reshape(60, 100)


def _draws(noise_shape):
    if noise_shape is None:
        return X.size
    return int(np.prod([60 if d is None else d for d in noise_shape]))


def _facts(tf, rate, dtype=np.float32, noise_shape=None):
    """What a dropout of ``X`` must show in any framework: shape, dtype, the kept values scaled, the
    gradient 1 / (1 - rate) exactly where kept and 0 where dropped, the rows a noise_shape shares."""
    x = tf.Variable(X.astype(dtype))
    with tf.GradientTape() as tape:
        y = tf.nn.dropout(x, rate, noise_shape=noise_shape, seed=7)
        loss = tf.reduce_sum(y)
    g, yv, xv = tape.gradient(loss, x).numpy(), y.numpy(), X.astype(dtype)
    dropped = g == 0
    scale = np.asarray(1 / (1 - rate), dtype) if rate else np.asarray(1, dtype)
    return [
        np.array(y.shape),
        y.dtype.name,
        np.array(sorted(set(g.ravel().tolist()))),
        np.array(np.array_equal(yv[~dropped], xv[~dropped] * scale) and not yv[dropped].any()),
        # within 4 standard deviations of the independent draws' fraction
        np.array(abs(dropped.mean() - rate) <= 4 * np.sqrt(rate * (1 - rate) / _draws(noise_shape)) + 1e-9),
        np.array(bool((dropped == dropped[:1]).all() if noise_shape == [1, 100] else True)),
    ]


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.5, 0.8])
def test_statistics_and_gradients_match_tensorflow(rate):
    out = run_both(lambda tf: _facts(tf, rate))
    assert not isinstance(out, Exception), out
    assert out[3] and out[4]


@pytest.mark.parametrize("noise_shape", [[1, 100], [60, 1], [None, 1], [100]])
def test_noise_shape_matches_tensorflow(noise_shape):
    out = run_both(lambda tf: _facts(tf, 0.5, noise_shape=noise_shape))
    assert not isinstance(out, Exception), out
    assert out[3] and out[5]


def test_float16_and_a_tensor_rate_match_tensorflow():
    out = run_both(lambda tf: _facts(tf, 0.5, dtype=np.float16))
    assert not isinstance(out, Exception), out

    def program(tf):
        x, r = tf.Variable(np.ones(4000, np.float32)), tf.Variable(0.25)
        with tf.GradientTape() as tape:
            y = tf.nn.dropout(x, r)
            loss = tf.reduce_sum(y)
        gx, gr = tape.gradient(loss, [x, r])
        kept = float(tf.reduce_sum(tf.cast(y > 0, tf.float32)))
        return [np.array(sorted(set(gx.numpy().tolist()))), np.array(float(gr) / kept, np.float32)]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_each_call_of_a_tf_function_draws_a_new_mask():
    def program(tf):
        x = tf.Variable(np.ones((8, 50), np.float32))
        step = tf.function(lambda: tf.nn.dropout(x, 0.5, noise_shape=[8, 1]))
        with tf.GradientTape() as tape:
            first = step()
            loss = tf.reduce_sum(first)
        # Two calls outside the tape: TensorFlow runs a call under a tape through another
        # concrete function with random state of its own, which, once set_seed was called in
        # the process (by another test), starts where the untaped one does.
        second, third = step(), step()
        g = tape.gradient(loss, x).numpy()
        return [
            np.array(not np.array_equal(second.numpy(), third.numpy())),
            np.array(np.array_equal(g, first.numpy())),  # x is ones: the gradient is the output
        ]

    out = run_both(program)
    assert not isinstance(out, Exception), out
    assert out[0] and out[1]


def test_the_gradient_through_an_assigned_variable_is_exact():
    source, v = gtf.Variable(X[:4]), gtf.Variable(np.zeros_like(X[:4]))
    with gtf.GradientTape() as tape:
        v.assign(gtf.tanh(source) * 2.0)
        y = gtf.nn.dropout(v, 0.4, seed=1)
        loss = gtf.reduce_sum(gtf.sin(y))
    kept = jnp.asarray(y.numpy() != 0)  # the mask this run drew (tanh(X) is never exactly 0 here)

    def pure(s):
        return jnp.sum(jnp.sin(jnp.where(kept, jnp.tanh(s) * 2.0 * np.float32(1 / 0.6), 0.0)))

    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(X[:4])), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, source).numpy(), jax.grad(pure)(jnp.asarray(X[:4])), rtol=1e-5)


BAD = {
    "rate_one": lambda tf: tf.nn.dropout(tf.constant(X), 1.0),
    "rate_negative": lambda tf: tf.nn.dropout(tf.constant(X), -0.1),
    "integer_x": lambda tf: tf.nn.dropout(tf.constant([1, 2, 3]), 0.5),
    "noise_shape": lambda tf: tf.nn.dropout(tf.constant(X), 0.5, noise_shape=[3, 100]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf\.nn\.dropout"):
        BAD[name](gtf)
