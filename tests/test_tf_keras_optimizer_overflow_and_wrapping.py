"""Optimizer edge cases against hand derivations and, where installed, Keras 3 itself.

- A second moment that overflows (a gradient of 1e20 squares to inf; the next step's
  ``v + (g*g - v) * (1 - beta_2)`` is ``inf - inf``) is NaN, and the weight it scales becomes NaN,
  as Keras' step makes it, rather than a finite ``m / epsilon`` step of 1e22.
- ``LossScaleOptimizer`` wraps an optimizer of your own (``update_step``) and a ``MultiOptimizer``,
  eagerly and in ``tf.function``: the gradients unscaled, a step with an infinite gradient
  skipped and the scale halved, as Keras does.
"""

import numpy as np
import pytest

import gradkit.tf as gtf


def _overflowed(tf, name):
    w = tf.Variable([1.0, 2.0])
    optimizer = getattr(tf.keras.optimizers, name)(0.001)
    for _ in range(2):
        optimizer.apply_gradients([(tf.constant([1e20, 1.0]), w)])
    return np.asarray(w.numpy())


def _adam_second_entry(lr=0.001, b1=0.9, b2=0.999, eps=1e-7, g=1.0, w=2.0, steps=2):
    # Keras' Adam by hand, for the entry whose gradient stays finite.
    m = v = 0.0
    for t in range(1, steps + 1):
        m += (g - m) * (1 - b1)
        v += (g * g - v) * (1 - b2)
        alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        w -= m * alpha / (np.sqrt(v) + eps)
    return w


@pytest.mark.parametrize("name", ["Adam", "Nadam", "Lamb", "Ftrl"])
def test_an_overflowed_second_moment_makes_the_weight_nan(name):
    got = _overflowed(gtf, name)
    assert np.isnan(got[0]) and np.isfinite(got[1])
    if name == "Adam":
        np.testing.assert_allclose(got[1], _adam_second_entry(), rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _overflowed(tf, name), rtol=1e-5)


def test_nadam_in_bfloat16_whose_beta_2_rounds_to_one_is_nan_as_keras():
    # 0.999 is 1.0 in bfloat16: the bias-corrected second moment is 0 / 0.
    w = gtf.Variable([1.0, 2.0], dtype=gtf.bfloat16)
    gtf.keras.optimizers.Nadam(0.01).apply_gradients([(gtf.constant([0.5, -0.5], dtype=gtf.bfloat16), w)])
    assert np.isnan(np.asarray(w.numpy(), np.float32)).all()


def _wrapped_custom(tf, compiled):
    class PlainSGD(tf.keras.optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, learning_rate * gradient)

    optimizer = tf.keras.optimizers.LossScaleOptimizer(PlainSGD(learning_rate=0.5), initial_scale=2.0)
    v = tf.Variable([1.0])

    def step(g):
        optimizer.apply_gradients([(g, v)])

    step = tf.function(step) if compiled else step
    seen = []
    for g in (1.0, np.inf, 2.0):
        step(tf.constant([g]))
        seen.append(float(v.numpy()[0]))
    return seen


@pytest.mark.parametrize("compiled", [False, True])
def test_loss_scale_optimizer_wraps_an_optimizer_of_your_own(compiled):
    # Scale 2: the gradient 1 is unscaled to 0.5, a step of 0.25; the infinite one is skipped and
    # halves the scale to 1, so the gradient 2 steps by 1.
    got = _wrapped_custom(gtf, compiled)
    assert got == [0.75, 0.75, -0.25]
    tf = pytest.importorskip("tensorflow")
    assert got == _wrapped_custom(tf, compiled)


def _wrapped_multi(tf, compiled):
    opts = tf.keras.optimizers
    routing = opts.OptimizerMap(opts.SGD(0.1), {"fast": opts.SGD(1.0, momentum=0.5)})
    optimizer = opts.LossScaleOptimizer(opts.MultiOptimizer(routing), initial_scale=4.0)
    fast, slow = tf.keras.Variable([1.0], name="fast"), tf.keras.Variable([1.0], name="slow")

    def step(g):
        optimizer.apply_gradients([(g, fast), (g, slow)])

    step = tf.function(step) if compiled else step
    seen = []
    for g in (4.0, np.inf, 2.0):
        step(tf.constant([g]))
        seen.append((float(fast.numpy()[0]), float(slow.numpy()[0])))
    return seen


@pytest.mark.parametrize("compiled", [False, True])
def test_loss_scale_optimizer_wraps_a_multi_optimizer(compiled):
    # Scale 4, gradient 4 -> 1: fast (SGD 1.0, momentum 0.5) 1 -> 0, slow (SGD 0.1) 1 -> 0.9. The
    # infinite step is skipped (scale 2). Gradient 2 -> 1: fast's momentum 0.5 * -1 - 1 = -1.5.
    got = _wrapped_multi(gtf, compiled)
    np.testing.assert_allclose(got, [(0.0, 0.9), (0.0, 0.9), (-1.5, 0.8)], rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _wrapped_multi(tf, compiled), rtol=1e-6)
