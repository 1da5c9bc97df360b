"""The derivative of ``tf.nn.relu``/``relu6`` (and Keras' ReLU layer and ``relu`` activation built
on them) multiplies the incoming gradient by TensorFlow's 0/1 mask, so a NaN or inf coming back
stays NaN where the unit is off, eagerly and compiled; against real TensorFlow (skipped without
it) and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = [-1.0, 2.0, 0.0, 7.0, 6.0]


def _gradients(tf, upstream):
    x = tf.constant(X)
    activations = [
        tf.nn.relu,
        tf.nn.relu6,
        tf.keras.layers.ReLU(name="relu_layer"),
        lambda x: tf.keras.activations.relu(x, max_value=5.0),
    ]
    out = []
    for f in activations:
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(f(x) * upstream)
        out.append(tape.gradient(loss, x).numpy().tolist())
    return out


@pytest.mark.parametrize("upstream", [np.nan, np.inf, 1.0, -2.0])
def test_incoming_gradient_times_the_mask_as_in_tensorflow(upstream):
    got = _gradients(gtf, upstream)
    # By hand: upstream * (0 < x) for relu and the layer, upstream * (0 < x < 6) for relu6. (Keras'
    # max_value clips after the relu, and a clip's derivative selects: TensorFlow is the oracle there.)
    masks = [np.array(X) > 0, (np.array(X) > 0) & (np.array(X) < 6), np.array(X) > 0]
    for g, mask in zip(got, masks):
        with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as TensorFlow's mask gives
            np.testing.assert_array_equal(g, upstream * mask.astype(np.float32))
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(np.array(got), np.array(_gradients(tf, upstream)))


def test_compiled_gradient_keeps_the_nan():
    @gtf.function
    def grad(x):
        with gtf.GradientTape() as tape:
            tape.watch(x)
            loss = gtf.reduce_sum(gtf.nn.relu(x) * np.nan)
        return tape.gradient(loss, x)

    assert np.isnan(grad(gtf.constant(X)).numpy()).all()


def test_integer_relu_keeps_its_dtype():
    assert gtf.nn.relu(gtf.constant([-3, 4])).numpy().tolist() == [0, 4]
    assert gtf.nn.relu6(gtf.constant([-3, 8])).numpy().tolist() == [0, 6]
