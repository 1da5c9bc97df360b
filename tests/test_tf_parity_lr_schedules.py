"""``tf.keras.optimizers.schedules``: each schedule's rate at every step, and an optimizer given
one (eagerly and inside ``tf.function``, which reads the step and compiles once), against real
TensorFlow/Keras; a learning rate given as a Variable still gets its hypergradient (oracle:
the pure-JAX rewrite)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from _oracles import count_compiles  # noqa: E402
from test_tf_parity import run_both  # noqa: E402

SCHEDULES = {
    "exponential": lambda S: S.ExponentialDecay(0.1, 3, 0.5),
    "exponential_staircase": lambda S: S.ExponentialDecay(0.1, 3, 0.5, staircase=True),
    "inverse_time": lambda S: S.InverseTimeDecay(0.2, 2, 0.5),
    "inverse_time_staircase": lambda S: S.InverseTimeDecay(0.2, 2, 0.5, staircase=True),
    "piecewise": lambda S: S.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]),
    "polynomial": lambda S: S.PolynomialDecay(0.1, 4, 0.01, power=2.0),
    "polynomial_cycle": lambda S: S.PolynomialDecay(0.1, 4, 0.01, cycle=True),
    "cosine": lambda S: S.CosineDecay(0.1, 5, alpha=0.1),
    "cosine_warmup": lambda S: S.CosineDecay(0.0, 4, warmup_target=0.2, warmup_steps=3),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_a_schedule_gives_keras_rate_at_every_step(name):
    def program(tf):
        schedule = SCHEDULES[name](tf.keras.optimizers.schedules)
        return [schedule(step) for step in range(12)]

    run_both(program)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
def test_an_optimizer_with_a_schedule_trains_as_keras(compiled):
    def program(tf):
        schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.3, 2, 0.5)
        opt = tf.keras.optimizers.SGD(schedule, momentum=0.5)
        w = tf.Variable([1.0, -2.0])

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(w**2)
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            return loss

        step = tf.function(step) if compiled else step
        losses = [step() for _ in range(5)]
        return [losses, w, opt.learning_rate, opt.iterations]

    run_both(program)


def test_a_compiled_step_with_a_schedule_compiles_once():
    """The rate is computed from the optimizer's step inside the compiled program. Oracle: the
    hand-derived SGD trajectory w <- w - lr(k) * 2w with lr(k) = 0.3 * 0.5 ** (k / 2)."""
    import gradkit.tf as gtf

    opt = gtf.keras.optimizers.SGD(gtf.keras.optimizers.schedules.ExponentialDecay(0.3, 2, 0.5))
    w = gtf.Variable([1.0, -2.0])

    @gtf.function
    def step():
        with gtf.GradientTape() as tape:
            loss = gtf.reduce_sum(w**2)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

    step()
    step()
    assert count_compiles(lambda: [step() for _ in range(4)]) == 0
    expected = np.array([1.0, -2.0])
    for k in range(6):
        expected = expected - 0.3 * 0.5 ** (k / 2) * 2 * expected
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


def test_a_variable_learning_rate_keeps_its_hypergradient():
    """An outer tape differentiates a training step through the optimizer with respect to a
    learning rate given as a Variable. Oracle: jax.grad of the pure rewrite."""
    import gradkit.tf as gtf

    lr = gtf.Variable(0.1)
    opt = gtf.keras.optimizers.SGD(lr)
    w = gtf.Variable([1.0, -2.0])
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            loss = gtf.reduce_sum(w**3)
        opt.apply_gradients(zip(inner.gradient(loss, [w]), [w]))
        after = gtf.reduce_sum(w**2)
    got = outer.gradient(after, lr)

    def pure(rate):
        w0 = jnp.array([1.0, -2.0])
        w1 = w0 - rate * jax.grad(lambda v: jnp.sum(v**3))(w0)
        return jnp.sum(w1**2)

    np.testing.assert_allclose(float(got), float(jax.grad(pure)(0.1)), rtol=1e-5)
