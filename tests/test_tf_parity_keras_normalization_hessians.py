"""Second derivatives through Keras' normalization layers, against Keras 3 on real TensorFlow
2.21. Keras computes their statistics with ``tf.nn.moments``, whose variance treats the mean as
a constant: values and gradients are the usual ones, Hessians are not, and gradkit.tf's layers
give TensorFlow's (as its ``tf.nn.moments`` and ``keras.ops.layer_normalization`` do)."""

import numpy as np
import pytest

_X = np.random.RandomState(3).randn(6, 4).astype(np.float32)


def _hessian(tf, fn):
    x = tf.constant(_X)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_sum(fn(x)[:, :2] ** 2)
        grad = inner.gradient(loss, x)
    return [loss, grad, outer.jacobian(grad, x)]


def p_layer_normalization(tf):
    layer = tf.keras.layers.LayerNormalization()
    layer.build((6, 4))
    return _hessian(tf, layer) + _hessian(tf, lambda x: tf.keras.ops.layer_normalization(x, epsilon=1e-3))


def p_batch_normalization_in_training(tf):
    layer = tf.keras.layers.BatchNormalization()
    layer.build((6, 4))
    return _hessian(tf, lambda x: layer(x, training=True)) + [layer.moving_mean, layer.moving_variance]


def p_hessian_vector_product_through_a_model(tf):
    K = tf.keras
    model = K.Sequential([K.Input((4,)), K.layers.Dense(3, kernel_initializer="ones"), K.layers.LayerNormalization()])
    kernel = model.layers[0].kernel
    kernel.assign(np.sin(np.arange(12, dtype=np.float32)).reshape(4, 3))
    v = tf.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_sum(model(_X)[:, :2] ** 2)
        grad = inner.gradient(loss, kernel)
    return [grad, outer.gradient(grad, kernel, output_gradients=v)]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    # run_both compares every value (rtol 1e-5); neither side may raise.
    assert not isinstance(run_both(program), Exception)
