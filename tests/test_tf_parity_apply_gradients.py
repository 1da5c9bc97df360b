"""``optimizer.apply_gradients`` with missing gradients, against Keras 3 on TensorFlow."""

import warnings

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


def test_every_gradient_none_raises_as_in_keras_and_changes_nothing():
    # gradkit returned silently: a step that changed nothing hid a loss computed off the tape.
    def program(tf):
        v = tf.Variable(1.0)
        tf.keras.optimizers.SGD(0.1).apply_gradients([(None, v)])

    run_both(program)
    v = gtf.Variable(1.0)
    opt = gtf.keras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match=r"\[gradkit\] No gradients provided for any variable.*explain"):
        opt.apply_gradients([(None, v)])
    assert float(v.numpy()) == 1.0 and int(opt.iterations.numpy()) == 0


def test_no_pairs_at_all_raise_a_value_error_as_in_keras():
    run_both(lambda tf: tf.keras.optimizers.SGD(0.1).apply_gradients([]))
    with pytest.raises(ValueError, match=r"\[gradkit\].*no \(gradient, Variable\) pairs.*zip"):
        gtf.keras.optimizers.SGD(0.1).apply_gradients(zip([], []))


def _step_with_one_gradient_missing(tf):
    v, w = tf.Variable(1.0), tf.Variable(2.0)
    opt = tf.keras.optimizers.SGD(0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        returned = opt.apply_gradients([(None, v), (tf.constant(3.0), w)])
    messages = [str(c.message) for c in caught if issubclass(c.category, UserWarning)]
    assert any("Gradients do not exist for variables" in m for m in messages), messages
    return [v, w, returned, opt.iterations]


def test_a_missing_gradient_is_skipped_with_keras_warning_and_iterations_returned():
    out = run_both(_step_with_one_gradient_missing)
    np.testing.assert_allclose(out[1], 2.0 - 0.1 * 3.0, rtol=1e-6)  # hand derivation
