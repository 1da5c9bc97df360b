"""Keras layers cast floating inputs of another dtype (float16, bfloat16, float64) to their
compute dtype, float32, before ``call``, as Keras 3's ``DTypePolicy.convert_input`` does:
against Keras 3 through real TensorFlow 2.21 (values, dtypes, gradients). Large float16 inputs
make a layer that computed in float16 overflow, so the values tell the two apart."""

import numpy as np
import pytest

_BIG = (np.random.default_rng(0).standard_normal((4, 6)) * 500).astype(np.float16)


def _out(y):
    return [np.asarray(y, np.float32), str(np.asarray(y).dtype)]


def p_weightless_layers_return_float32(tf):
    L = tf.keras.layers
    x = tf.constant(_BIG)
    return (
        _out(L.Activation("linear", dtype="float32")(x))
        + _out(L.Add()([x, x]))
        + _out(L.Lambda(lambda t: t * 2)(x))
        + _out(L.Flatten()(tf.cast(x, tf.bfloat16)))
    )


def p_convolutions_take_half_precision_inputs(tf):
    L = tf.keras.layers
    ones = tf.ones((2, 4, 4, 3))
    return _out(L.Conv2D(2, 3, kernel_initializer="ones")(tf.cast(ones, tf.float16))) + _out(
        L.Conv2D(2, 3, kernel_initializer="ones")(tf.cast(ones, tf.bfloat16))
    )


def p_gradient_with_respect_to_a_half_precision_input_keeps_its_dtype(tf):
    dense = tf.keras.layers.Dense(2, kernel_initializer="ones")
    x = tf.Variable(np.array([[1.0, 2.0, 3.0]], np.float16))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(dense(x) ** 2)
    grad = tape.gradient(y, x)
    return [y, str(np.asarray(grad).dtype), tf.cast(grad, tf.float32)]


def p_a_model_trained_on_float16_data(tf):
    K = tf.keras
    model = K.Sequential([K.Input((6,)), K.layers.BatchNormalization(), K.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=K.optimizers.SGD(0.01), loss="mse")
    history = model.fit(_BIG.repeat(2, axis=0), np.ones((8, 1), np.float16), batch_size=8, epochs=2, verbose=0)
    return [history.history["loss"], model.layers[0].moving_variance]


def p_autocast_false_keeps_the_input_dtype(tf):
    layer = tf.keras.layers.Activation("linear", autocast=False)
    return [layer.autocast, tf.keras.layers.Dense(2).autocast, _out(layer(tf.constant(_BIG[:1])))[1]]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(program)


def _normalized(layer, tf, **kwargs):
    return layer(tf.constant(_BIG), **kwargs)


_NORMALIZATIONS = {
    "LayerNormalization": (lambda L: L.LayerNormalization(), {}),
    "BatchNormalization": (lambda L: L.BatchNormalization(), {"training": True}),
    "UnitNormalization": (lambda L: L.UnitNormalization(), {}),
    "GroupNormalization": (lambda L: L.GroupNormalization(2), {}),
}


def _float64_oracle(name):
    x = _BIG.astype(np.float64)
    if name == "UnitNormalization":
        return x / np.sqrt((x**2).sum(-1, keepdims=True))
    if name == "BatchNormalization":
        return (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
    groups = x.reshape(4, 2, 3) if name == "GroupNormalization" else x[:, None, :]
    normed = (groups - groups.mean(-1, keepdims=True)) / np.sqrt(groups.var(-1, keepdims=True) + 1e-3)
    return normed.reshape(4, 6)


@pytest.mark.parametrize("name", sorted(_NORMALIZATIONS))
def test_normalization_of_float16_input_is_computed_in_float32(name):
    """Against NumPy in float64, and against Keras on TensorFlow to float16's precision: Keras
    rounds these layers' results for float16 inputs to about 5e-4, so it is no oracle at 1e-5."""
    import gradkit.tf as gtf

    make, kwargs = _NORMALIZATIONS[name]
    got = make(gtf.keras.layers)(gtf.constant(_BIG), **kwargs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), _float64_oracle(name), rtol=1e-5, atol=1e-5)
    tf = pytest.importorskip("tensorflow")
    theirs = make(tf.keras.layers)(tf.constant(_BIG), **kwargs)
    assert theirs.dtype == tf.float32
    np.testing.assert_allclose(np.asarray(got), theirs.numpy(), rtol=2e-3, atol=2e-3)
