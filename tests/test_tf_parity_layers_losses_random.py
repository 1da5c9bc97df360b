"""gradkit.tf's Keras layers, tf.nn losses, tf.Module and tf.random against real TensorFlow."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_LOGITS = _rs.randn(2, 3, 4).astype(np.float32)
_SOFT = np.abs(_rs.randn(2, 3, 4)).astype(np.float32)  # sums to one along no axis


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_cross_entropy_gradients_are_tensorflows_for_labels_not_summing_to_one(axis):
    # TensorFlow's gradient with respect to the logits is softmax - labels (exact only for labels
    # summing to one); gradkit gave the exact sum(labels) * softmax - labels.
    def program(tf):
        labels, logits = tf.Variable(_SOFT), tf.Variable(_LOGITS)
        with tf.GradientTape() as tape:
            loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=axis)
        return [loss, *tape.gradient(loss, [labels, logits])]

    run_both(program)


def test_softmax_cross_entropy_second_order_matches_tensorflow():
    def program(tf):
        logits = tf.Variable([[1.0, 2.0, 3.0]])
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.nn.softmax_cross_entropy_with_logits(labels=[[0.2, 0.3, 0.9]], logits=logits)
            g = inner.gradient(loss, logits)
            s = tf.reduce_sum(g * g)
        return outer.gradient(s, logits)

    run_both(program)


@pytest.mark.parametrize("labels", [[3, 0], [-1, 0]])
def test_sparse_softmax_cross_entropy_refuses_labels_outside_the_classes(labels):
    # gradkit gave NaN silently; TensorFlow raises.
    with pytest.raises(ValueError, match=r"\[gradkit\].*valid range"):
        gtf.nn.sparse_softmax_cross_entropy_with_logits(labels=gtf.constant(labels), logits=gtf.ones([2, 3]))


def test_sparse_softmax_cross_entropy_refuses_labels_of_the_wrong_shape():
    run_both(lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=tf.ones([2, 3, 4])))
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape"):
        gtf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=gtf.ones([2, 3, 4]))


def test_sigmoid_cross_entropy_refuses_labels_of_another_shape():
    # gradkit broadcast labels (2, 1) against logits (2, 3) silently; TensorFlow raises ValueError.
    run_both(lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2, 1]), logits=tf.ones([2, 3])))
    with pytest.raises(ValueError, match=r"\[gradkit\].*same shape"):
        gtf.nn.sigmoid_cross_entropy_with_logits(labels=gtf.ones([2, 1]), logits=gtf.ones([2, 3]))
