"""A Python-float setting of an op (``leaky_relu``'s ``alpha``, ``dropout``'s ``rate``, Huber's
``delta``, ``elu``'s ``alpha``, the cross-entropies' ``label_smoothing``, ``tf.pad``'s
``constant_values``; the int exponent of ``tf.math.pow`` of two Python numbers) is an operand of the compiled program, as a float operand of an
operator is: an eager tape loop whose setting changes every step compiles nothing new (counted
with jax.monitoring), and a ``tf.function`` taking the setting as an argument runs it traced.
Values and gradients against real TensorFlow (skipped without it) and by hand."""

import itertools

import numpy as np
import pytest
from _oracles import count_compiles

import gradkit.tf as gtf

X = (np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)) ** 3
SETTINGS = {
    "leaky_relu": lambda tf, z, a: tf.nn.leaky_relu(z, alpha=a),
    "keras_ops_leaky_relu": lambda tf, z, a: tf.keras.ops.leaky_relu(z, negative_slope=a),
    "huber": lambda tf, z, a: tf.keras.losses.Huber(delta=a)(z, z * 0.5 + 0.25),
    "elu": lambda tf, z, a: tf.keras.activations.elu(z, alpha=a),
    "binary_crossentropy": lambda tf, z, a: tf.keras.losses.binary_crossentropy(
        tf.ones_like(z), tf.sigmoid(z), label_smoothing=a
    ),
    "categorical_crossentropy": lambda tf, z, a: tf.keras.losses.CategoricalCrossentropy(
        from_logits=True, label_smoothing=a
    )(tf.one_hot([0, 1, 3], 4), z),
    "pad_constant_values": lambda tf, z, a: tf.pad(z, [[1, 0], [0, 2]], constant_values=a) * 2.0,
    "pow_of_two_numbers": lambda tf, z, a: z * tf.math.pow(0.9, int(a * 1000)),
}


@pytest.mark.parametrize("name", sorted(SETTINGS) + ["dropout"])
def test_a_new_setting_each_step_compiles_nothing(name):
    op = SETTINGS.get(name, lambda tf, z, a: tf.nn.dropout(z, rate=a))
    w = gtf.Variable(np.ones((4, 4), np.float32))
    values = itertools.count()

    def steps():
        for _ in range(4):
            setting = 0.1 + next(values) * 1e-3
            with gtf.GradientTape() as tape:
                loss = gtf.reduce_sum(op(gtf, gtf.matmul(X, w), setting))
            float(loss)
            tape.gradient(loss, w)

    steps()  # the first steps compile what the loop runs
    assert count_compiles(steps) == 0


def _in_function_with_gradient(tf, name):
    x = tf.constant(X)

    @tf.function
    def f(z, a):
        with tf.GradientTape() as tape:
            tape.watch(z)
            y = SETTINGS[name](tf, z, a)
            loss = tf.reduce_sum(y * y)
        return y, tape.gradient(loss, z)

    return [f(x, 0.3), f(x, 0.7)]


@pytest.mark.parametrize("name", sorted(set(SETTINGS) - {"pow_of_two_numbers"}))  # int() of a traced tensor
def test_a_setting_passed_to_a_tf_function_matches_tensorflow(name):
    got = [[t.numpy() for t in pair] for pair in _in_function_with_gradient(gtf, name)]
    if name == "leaky_relu":  # by hand: x where x > 0, else a x; derivative of the sum of squares 2 y y'
        for (y, g), a in zip(got, (0.3, 0.7)):
            want = np.where(X > 0, X, a * X)
            np.testing.assert_allclose(y, want, rtol=1e-6)
            np.testing.assert_allclose(g, 2 * want * np.where(X > 0, 1.0, a), rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    want = [[t.numpy() for t in pair] for pair in _in_function_with_gradient(tf, name)]
    for (y, g), (wy, wg) in zip(got, want):
        np.testing.assert_allclose(y, wy, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g, wg, rtol=1e-5, atol=1e-6)


def test_dropout_rate_passed_to_a_tf_function_scales_the_kept_entries():
    f = gtf.function(lambda z, r: gtf.nn.dropout(z, rate=r))
    ones = np.ones((200,), np.float32)
    for rate in (0.25, 0.5):
        out = f(ones, rate).numpy()
        kept = out[out != 0]
        np.testing.assert_allclose(kept, 1 / (1 - rate), rtol=1e-6)  # by hand: x / (1 - rate)
        assert 0 < kept.size < out.size


def _relu_settings(tf):
    x = np.linspace(-8, 8, 9).astype(np.float32)
    relu = tf.keras.activations.relu
    return [
        tf.function(lambda z, m: relu(z, max_value=m))(x, 5.0),
        tf.function(lambda z, s: relu(z, negative_slope=s))(x, 0.1),
        tf.function(lambda z, t: relu(z, threshold=t))(x, 1.0),
        tf.function(lambda z, s, m, t: relu(z, negative_slope=s, max_value=m, threshold=t))(x, 0.1, 6.0, 1.0),
        relu(x, negative_slope=0.1, max_value=6.0, threshold=1.0),
    ]


def test_keras_relu_settings_passed_to_a_tf_function():
    got = [t.numpy() for t in _relu_settings(gtf)]
    np.testing.assert_allclose(got[0], np.clip(np.linspace(-8, 8, 9), 0, 5), rtol=1e-6)  # by hand
    tf = pytest.importorskip("tensorflow")
    for g, w in zip(got, _relu_settings(tf)):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)
