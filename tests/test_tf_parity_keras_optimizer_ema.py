"""Keras optimizers' ``use_ema`` (``ema_momentum``, ``ema_overwrite_frequency``,
``finalize_variable_values``) against Keras 3 on TensorFlow and a NumPy oracle; gradkit.tf
refused ``use_ema=True`` before. A meta-gradient through steps that overwrite the Variables
with their averages is checked against ``jax.grad`` of the same steps written in JAX.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

CASES = {
    "default": {"use_ema": True},
    "overwrite_every_2": {"use_ema": True, "ema_momentum": 0.5, "ema_overwrite_frequency": 2},
    "momentum_0_overwrite_every_step": {"use_ema": True, "ema_momentum": 0.0, "ema_overwrite_frequency": 1},
}


def _train(tf, kwargs, compiled=False):
    """Five SGD steps over two Variables (the second skipped at one step), then finalize."""
    ws = [tf.Variable([0.5, -1.0, 2.0]), tf.Variable([[0.25], [1.5]])]
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.5, **kwargs)

    def step(k, skip):
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(tf.sin(w * k)) for w in ws)
        grads = tape.gradient(loss, ws)
        if skip:
            grads[1] = None  # its average still moves, as in Keras
        opt.apply_gradients(zip(grads, ws))

    if compiled:
        step = tf.function(step)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Keras warns of the missing gradient
        for k in range(5):
            step(tf.constant(k + 1.0), k == 1)
            out += [w.numpy() for w in ws]
    opt.finalize_variable_values(ws)
    out += [w.numpy() for w in ws]
    return out, len(opt.variables)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_use_ema_matches_keras(name, compiled):
    tf_real = pytest.importorskip("tensorflow")
    want, got = _train(tf_real, CASES[name], compiled), _train(gtf, CASES[name], compiled)
    assert got[1] == want[1] == 6  # iterations, the rate, a momentum and an average per Variable
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_use_ema_matches_a_numpy_oracle():
    """By hand: SGD steps w -= lr * g with g = 2 w, the average a = m a + (1 - m) w after each
    step (m = 0 at the first), w set to a after every second step and at the end."""
    lr, m = 0.25, 0.5
    w = gtf.Variable([1.0, -2.0])
    opt = gtf.keras.optimizers.SGD(lr, use_ema=True, ema_momentum=m, ema_overwrite_frequency=2)
    want_w, a = np.float32([1.0, -2.0]), np.zeros(2, np.float32)
    for k in range(5):
        with gtf.GradientTape() as tape:
            loss = gtf.reduce_sum(w**2)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        want_w = want_w - lr * 2 * want_w
        mk = m if k else 0.0
        a = mk * a + (1 - mk) * want_w
        if (k + 1) % 2 == 0:
            want_w = a
        np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-6)
    opt.finalize_variable_values([w])
    np.testing.assert_allclose(w.numpy(), a, rtol=1e-6)


def test_a_meta_gradient_through_averaged_steps_is_exact():
    """d(loss after 3 steps)/d(w0, lr) through Adam steps whose Variables are overwritten by
    their averages, against jax.grad of the same steps written in JAX (TensorFlow gives None)."""
    w0, lr0 = np.float32([0.5, -1.5]), np.float32(0.125)

    def pure(w, lr):
        m = v = a = jnp.zeros_like(w)
        for k in range(3):
            g = jnp.cos(w) * (k + 1.0)
            m = m + (g - m) * 0.1
            v = v + (g * g - v) * 0.001
            t = k + 1.0
            alpha = lr * jnp.sqrt(1 - jnp.float32(0.999) ** t) / (1 - jnp.float32(0.9) ** t)
            w = w - (m * alpha) / (jnp.sqrt(v) + 1e-7)
            mk = 0.9 if k else 0.0
            a = mk * a + (1 - mk) * w
            w = a  # ema_overwrite_frequency=1
        return jnp.sum(w**2)

    w, lr = gtf.Variable(w0), gtf.Variable(lr0)
    opt = gtf.keras.optimizers.Adam(lr, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=1)
    with gtf.GradientTape() as outer:
        for k in range(3):
            with gtf.GradientTape() as inner:
                loss = gtf.reduce_sum(gtf.sin(w) * (k + 1.0))
            opt.apply_gradients([(inner.gradient(loss, w), w)])
        after = gtf.reduce_sum(w**2)
    got = outer.gradient(after, [w, lr])
    want = jax.grad(pure, argnums=(0, 1))(jnp.asarray(w0), jnp.asarray(lr0))
    np.testing.assert_allclose(float(after), float(pure(w0, lr0)), rtol=1e-6)
    for g, x in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [{"use_ema": True, "ema_momentum": 1.5}, {"use_ema": True, "ema_overwrite_frequency": 0.5}],
    ids=["momentum_above_1", "fractional_frequency"],
)
def test_bad_ema_options_raise_as_in_keras(kwargs):
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf_real.keras.optimizers.SGD(0.1, **kwargs)
    with pytest.raises(ValueError, match=r"\[gradkit\].*ema_"):
        gtf.keras.optimizers.SGD(0.1, **kwargs)


def test_finalize_with_variables_the_optimizer_never_saw_raises_and_changes_nothing():
    w, other = gtf.Variable([1.0]), gtf.Variable([5.0])
    opt = gtf.keras.optimizers.SGD(0.1, use_ema=True)
    opt.apply_gradients([(gtf.constant([1.0]), w)])
    with pytest.raises(ValueError, match=r"\[gradkit\].*no moving average"):
        opt.finalize_variable_values([w, other])
    np.testing.assert_array_equal(other.numpy(), [5.0])
    np.testing.assert_allclose(w.numpy(), [0.9])
