"""gradkit.tf's Keras Lambda layer against real tf.keras 3: outputs and gradients of a function
of the inputs (with ``arguments`` and ``training``), ``compute_output_shape``, configs of
named functions both ways, and the refusals (serialized lambdas, ``mask=``)."""

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import _errors  # noqa: E402

_rs = np.random.RandomState(0)
X = _rs.randn(2, 5).astype(np.float32)


def scaled_tanh(x, scale=2.0):
    return scale * (x * x)


def flip(x, training=None):
    return x if training else -x


def first_two(shape):
    return (shape[0], 2)


def test_named_function_with_arguments_matches_keras():
    check_layer(
        lambda tf: tf.keras.layers.Lambda(scaled_tanh, arguments={"scale": 3.0}, name="lam"), X, compare_config=False
    )


def test_lambda_function_output_and_gradient_match_keras():
    check_layer(
        lambda tf: tf.keras.layers.Lambda(lambda x: tf.reduce_sum(tf.sin(x) * x, axis=-1, keepdims=True)),
        X,
        compare_config=False,
    )


def test_list_inputs_match_keras():
    check_layer(lambda tf: tf.keras.layers.Lambda(lambda xs: xs[0] * tf.exp(xs[1])), [X, X[::-1]], compare_config=False)


@pytest.mark.parametrize("training", [None, True, False])
def test_training_reaches_the_function_as_in_keras(training):
    def run(tf):
        return tf.keras.layers.Lambda(flip)(tf.constant(X), training=training).numpy()

    np.testing.assert_array_equal(run(gtf), run(tf_real))


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda tf: tf.keras.layers.Lambda(lambda x: x[:, :2]), (None, 5)),
        (lambda tf: tf.keras.layers.Lambda(lambda x: x, output_shape=(7,)), (None, 5)),
        (lambda tf: tf.keras.layers.Lambda(lambda x: x, output_shape=first_two), (None, 5)),
    ],
    ids=["traced", "tuple", "function"],
)
def test_compute_output_shape_matches_keras(make, shape):
    layer = make(gtf)
    layer(gtf.constant(X))
    assert tuple(layer.compute_output_shape(shape)) == tuple(make(tf_real).compute_output_shape(shape))


def test_config_of_named_functions_round_trips_both_ways():
    def make(tf):
        return tf.keras.layers.Lambda(scaled_tanh, output_shape=first_two, arguments={"scale": 0.5}, name="lam")

    ours, theirs = make(gtf).get_config(), make(tf_real).get_config()
    assert ours == theirs
    objects = {"scaled_tanh": scaled_tanh, "first_two": first_two}
    copy = gtf.keras.layers.Lambda.from_config(theirs, custom_objects=objects)
    assert copy.get_config() == ours and copy.function is scaled_tanh
    assert tf_real.keras.layers.Lambda.from_config(ours, custom_objects=objects).get_config() == theirs


def test_keras_activation_names_are_found_by_from_config():
    config = tf_real.keras.layers.Lambda(tf_real.keras.activations.relu).get_config()
    layer = gtf.keras.layers.Lambda.from_config(config)
    np.testing.assert_array_equal(layer(gtf.constant(X)).numpy(), np.maximum(X, 0))


def test_serializing_a_python_lambda_is_refused():
    with pytest.raises(_errors.GradkitNotImplementedError, match=r"\[gradkit\].*lambda"):
        gtf.keras.layers.Lambda(lambda x: x).get_config()
    config = tf_real.keras.layers.Lambda(lambda x: x + 1).get_config()
    with pytest.raises(ValueError):
        tf_real.keras.layers.Lambda.from_config(dict(config))
    with pytest.raises(ValueError, match=r"\[gradkit\].*lambda"):
        gtf.keras.layers.Lambda.from_config(config)


def test_unknown_function_names_are_refused_as_keras():
    config = tf_real.keras.layers.Lambda(scaled_tanh).get_config()
    with pytest.raises(TypeError):
        tf_real.keras.layers.Lambda.from_config(dict(config))
    with pytest.raises(TypeError, match=r"\[gradkit\].*custom_objects"):
        gtf.keras.layers.Lambda.from_config(config)


def test_a_tensor_mask_is_the_output_mask_and_is_not_serialized():
    mask = np.array([[True, False]])
    layer = gtf.keras.layers.Lambda(np.negative, mask=mask)
    assert layer.compute_mask(np.zeros((1, 2)), None) is mask
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*mask"):
        layer.get_config()
