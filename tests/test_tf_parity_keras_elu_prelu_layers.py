"""gradkit.tf's Keras ELU, PReLU and ThresholdedReLU layers against real tf.keras 3 (outputs,
gradients w.r.t. inputs and alpha, weights' names and shapes, configs), and tf.nn.elu's and
Keras' elu's second derivatives at 0 against TensorFlow's nested tapes."""

import re

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, check_output_shape, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
X = _rs.randn(2, 3, 4).astype(np.float32)
X[0, 0, :2] = 0.0  # the kink
IMG = _rs.randn(2, 3, 4, 2).astype(np.float32)

CASES = {
    "elu": (lambda L: L.ELU(), X),
    "elu_alpha": (lambda L: L.ELU(alpha=0.5), X),
    "prelu": (lambda L: L.PReLU(), X),
    "prelu_shared": (lambda L: L.PReLU(shared_axes=[1, 2]), IMG),
    "prelu_shared_int": (lambda L: L.PReLU(shared_axes=1, alpha_initializer="ones"), X),
    "thresholded_relu": (lambda L: L.ThresholdedReLU(), X),
    "thresholded_relu_theta": (lambda L: L.ThresholdedReLU(theta=0.0), X),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_layer_matches_keras(key):
    make, x = CASES[key]
    check_layer(lambda tf: make(tf.keras.layers), x)


def test_prelu_default_alpha_is_zero_and_named_as_keras():
    def build(tf):
        layer = tf.keras.layers.PReLU(shared_axes=[2])
        layer(tf.constant(IMG))
        return layer.name, [np.asarray(w) for w in layer.weights]

    (name, weights), (keras_name, keras_weights) = build(gtf), build(tf_real)
    assert re.sub(r"_\d+$", "", name) == re.sub(r"_\d+$", "", keras_name) == "p_re_lu"
    np.testing.assert_array_equal(weights[0], keras_weights[0])


@pytest.mark.parametrize("make", [lambda L: L.ELU(), lambda L: L.ThresholdedReLU(0.5)], ids=["elu", "thresholded_relu"])
def test_compute_output_shape_matches_keras(make):
    check_output_shape(lambda tf: make(tf.keras.layers), (None, 3, 4))


@pytest.mark.parametrize(
    "fn",
    [
        lambda tf, x: tf.nn.elu(x),
        lambda tf, x: tf.keras.activations.elu(x, alpha=0.5),
        lambda tf, x: tf.keras.layers.ELU(alpha=2.0)(x),
    ],
    ids=["tf.nn.elu", "keras_elu_alpha", "ELU_layer"],
)
def test_elu_second_derivative_at_zero_matches_tensorflow(fn):
    # TensorFlow's EluGradGrad takes the linear piece at 0: the second derivative there is 0.
    def run(tf):
        x = tf.constant([-1.0, -0.0, 0.0, 1e-3, 1.0])
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = fn(tf, x)
            g = inner.gradient(y, x)
        return y.numpy(), g.numpy(), outer.gradient(g, x).numpy()

    for got, want in zip(run(gtf), run(tf_real)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


REFUSED = {
    "theta_negative": lambda tf: tf.keras.layers.ThresholdedReLU(theta=-1.0),
    "theta_none": lambda tf: tf.keras.layers.ThresholdedReLU(theta=None),
    "theta_string": lambda tf: tf.keras.layers.ThresholdedReLU(theta="1"),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refusals_match_keras(key):
    with pytest.raises((ValueError, TypeError)) as theirs:
        REFUSED[key](tf_real)
    builtin = ValueError if isinstance(theirs.value, ValueError) else TypeError
    with pytest.raises(builtin, match=r"\[gradkit\]"):
        REFUSED[key](gtf)


def test_every_name_is_in_the_namespace():
    assert {"ELU", "PReLU", "ThresholdedReLU"} <= set(dir(tf_real.keras.layers)) & set(dir(gtf.keras.layers))


@pytest.mark.parametrize("layer", ["ELU", "PReLU", "ThresholdedReLU"])
def test_integer_inputs_are_refused_as_keras_on_tensorflow(layer):
    # TensorFlow's kernels take floats against the layers' float32 parameters.
    x = np.arange(-3, 3, dtype=np.int32).reshape(2, 3)
    with pytest.raises(tf_real.errors.InvalidArgumentError):
        getattr(tf_real.keras.layers, layer)()(tf_real.constant(x))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\] .* got int32 inputs"):
        getattr(gtf.keras.layers, layer)()(gtf.constant(x))
