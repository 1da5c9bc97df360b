"""tf.nn.softmax_cross_entropy_with_logits differentiated twice, against real TensorFlow: the
labels' gradient (-log_softmax(logits)) differentiated by the logits, the logits' gradient
(TensorFlow's softmax - labels) by the logits, and forward mode. The logits' gradient
differentiated by the labels is that expression's, -I (TensorFlow gives zeros); checked by hand."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import programs, run_program  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

LOGITS = np.random.RandomState(0).randn(2, 3).astype(np.float32)
LABELS = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.5]], np.float32)  # the second row sums to 0.7


def _second_order(tf):
    labels, logits = tf.constant(LABELS), tf.constant(LOGITS)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([labels, logits])
        with tf.GradientTape(persistent=True) as inner:
            inner.watch([labels, logits])
            loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        by_labels, by_logits = inner.gradient(loss, [labels, logits])
    return outer, labels, logits, by_labels, by_logits


def p_labels_gradient_by_logits(tf):
    outer, _, logits, by_labels, _ = _second_order(tf)
    return by_labels, outer.jacobian(by_labels, logits)


def p_logits_gradient_by_logits(tf):
    outer, _, logits, _, by_logits = _second_order(tf)
    return by_logits, outer.jacobian(by_logits, logits)


def p_penalty_on_the_labels_gradient(tf):
    outer, _, logits, by_labels, _ = _second_order(tf)
    return outer.gradient(tf.reduce_sum(by_labels * by_labels), logits)


def p_forward_mode_along_the_logits(tf):
    labels, logits = tf.constant(LABELS), tf.constant(LOGITS)
    with tf.autodiff.ForwardAccumulator(logits, tf.ones_like(logits)) as acc:
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return acc.jvp(loss)


@pytest.mark.parametrize("program", programs(globals()), ids=lambda p: p.__name__)
def test_second_order_matches_tensorflow(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome


def test_logits_gradient_by_labels_is_that_of_softmax_minus_labels():
    outer, labels, _, _, by_logits = _second_order(gtf)
    jac = np.asarray(outer.jacobian(by_logits, labels))
    want = -np.eye(6, dtype=np.float32).reshape(2, 3, 2, 3)  # d(softmax(z) - labels)/d labels
    np.testing.assert_allclose(jac, want, atol=1e-7)
