"""Keras' cross-entropies of probabilities that kept their logits, against Keras 3 on TensorFlow:
inside a ``tf.function`` the logits behind a raw ``tf.nn.sigmoid``/``tf.nn.softmax`` op (the
cross-entropy of that kind only; a softmax along another axis keeps none), and the binary focal
cross-entropy of a Keras softmax or sigmoid (its cross-entropy from the logits, its focal factor
from the probabilities as given)."""

import warnings

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

LOGITS = np.array([[30.0, -30.0, 0.5], [1.0, 0.2, -0.3]], np.float32)
LABELS = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], np.float32)

LOSSES = {
    "bce": lambda tf: tf.keras.losses.BinaryCrossentropy(),
    "bce_function": lambda tf: lambda y, p: tf.reduce_mean(tf.keras.losses.binary_crossentropy(y, p)),
    "cce": lambda tf: tf.keras.losses.CategoricalCrossentropy(),
    "sparse_cce": lambda tf: lambda y, p: tf.keras.losses.SparseCategoricalCrossentropy()(np.array([2, 0]), p),
    "binary_focal": lambda tf: tf.keras.losses.BinaryFocalCrossentropy(),
}
ACTIVATIONS = {
    "sigmoid": lambda tf: tf.nn.sigmoid,
    "math_sigmoid": lambda tf: tf.math.sigmoid,
    "softmax": lambda tf: tf.nn.softmax,
    "softmax_axis0": lambda tf: lambda x: tf.nn.softmax(x, axis=0),
}


def _in_function(tf, loss, activation):
    v = tf.Variable(LOGITS)
    loss, activation = LOSSES[loss](tf), ACTIVATIONS[activation](tf)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            value = loss(LABELS, activation(v))
        return value, tape.gradient(value, v)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, grad = step()
        with tf.GradientTape() as tape:  # eagerly: the clipped probabilities, in both
            eager = loss(LABELS, activation(v))
    return [value, grad, eager, tape.gradient(eager, v)]


CASES = [
    ("bce", "sigmoid"),
    ("bce_function", "math_sigmoid"),
    ("cce", "softmax"),
    ("sparse_cce", "softmax"),
    ("binary_focal", "sigmoid"),
    ("cce", "sigmoid"),  # another op's probabilities: clipped, as Keras takes them
    ("bce", "softmax"),
    ("cce", "softmax_axis0"),
]


@pytest.mark.parametrize("loss, activation", CASES)
def test_inside_a_function_the_logits_behind_the_op(loss, activation):
    outcome = run_program(lambda tf: _in_function(tf, loss, activation))
    assert not isinstance(outcome, Exception), outcome


def _focal_of_a_keras_activation(tf, activation, **options):
    v = tf.Variable(LOGITS / 10.0)
    with tf.GradientTape() as tape:
        value = tf.keras.losses.BinaryFocalCrossentropy(**options)(LABELS, activation(tf)(v))
    return [value, tape.gradient(value, v)]


def p_binary_focal_of_a_keras_softmax(tf):
    return _focal_of_a_keras_activation(tf, lambda tf: tf.keras.activations.softmax)


def p_binary_focal_of_a_keras_sigmoid_with_class_balancing(tf):
    return _focal_of_a_keras_activation(tf, lambda tf: tf.keras.activations.sigmoid, apply_class_balancing=True)


def p_binary_focal_of_a_softmax_dense_layer(tf):
    layer = tf.keras.layers.Dense(3, activation="softmax", kernel_initializer=tf.keras.initializers.Constant(0.3))
    x = tf.constant(LOGITS / 10.0)
    with tf.GradientTape() as tape:
        value = tf.keras.losses.binary_focal_crossentropy(LABELS, layer(x), apply_class_balancing=True)
    return [value, tape.gradient(value, layer.kernel)]


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
