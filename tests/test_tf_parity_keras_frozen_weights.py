"""Freezing a Keras layer: Keras 3 flips each weight's ``trainable`` flag (and lets users set it),
while a GradientTape keeps watching the weights by the flag they were made with."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _freezing(tf):
    keras = tf.keras
    inp = keras.Input((3,))
    d1, bn, d2 = keras.layers.Dense(4), keras.layers.BatchNormalization(), keras.layers.Dense(2)
    model = keras.Model(inp, d2(bn(d1(inp))))
    seen = []
    d1.trainable = False
    seen.append([d1.kernel.trainable, d1.bias.trainable, [w.trainable for w in bn.weights]])
    seen.append([tuple(w.shape) for w in model.trainable_weights])
    seen.append([tuple(w.shape) for w in model.weights])  # the order stays Keras' creation order
    x = tf.ones((2, 3))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(model(x))
    grads = tape.gradient(y, [d1.kernel, d2.kernel])
    seen.append([g is None for g in grads] + [len(tape.watched_variables())])
    d1.trainable = True
    d2.kernel.trainable = False
    seen.append([d1.kernel.trainable, [tuple(w.shape) for w in d2.trainable_weights], len(model.trainable_weights)])
    with tf.GradientTape() as tape:
        tf.reduce_sum(model(x))
    seen.append(len(tape.watched_variables()))
    model.trainable = False
    seen.append([w.trainable for w in model.weights])
    model.trainable = True  # the moving statistics, made non-trainable, stay so; d2.kernel is set again
    seen.append([w.trainable for w in model.weights])
    late = keras.layers.Dense(2)
    late.trainable = False
    late.build((None, 3))  # weights made while frozen are frozen
    seen.append([late.kernel.trainable, len(late.trainable_weights)])
    return seen


def test_freezing_flips_the_weights_flags_and_the_tape_still_watches():
    seen = _freezing(gtf)
    assert seen[0] == [False, False, [True, True, False, False]]
    assert seen[1] == [(4,), (4,), (4, 2), (2,)]
    assert seen[3] == [False, False, 6]  # six weights were made trainable: the tape watches those
    assert seen[4] == [True, [(2,)], 5]
    assert seen[6] == [False] * 8
    assert seen[7] == [True, True, True, True, False, False, True, True]  # unfreezing sets them all again
    assert seen[8] == [False, 0]


def test_freezing_matches_keras():
    tf = pytest.importorskip("tensorflow")
    assert _freezing(gtf) == _freezing(tf)


def test_frozen_weights_still_get_exact_gradients():
    # Hand derivation: y = sum(x @ K + b), so dy/dK[i, j] = sum over rows of x[:, i].
    layer = gtf.keras.layers.Dense(2, kernel_initializer="ones")
    x = np.arange(6.0, dtype="float32").reshape(2, 3)
    layer.build((None, 3))
    layer.trainable = False
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(layer(x))
    grad = tape.gradient(y, layer.kernel)
    np.testing.assert_allclose(grad.numpy(), np.repeat(x.sum(0)[:, None], 2, axis=1))


def test_keras_variable_trainable_is_settable():
    v = gtf.keras.Variable(np.ones(2, "float32"))
    v.trainable = False
    assert v.trainable is False
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(v * v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 2.0])
