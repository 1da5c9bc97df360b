"""``tf.keras.optimizers.LossScaleOptimizer`` against real Keras 3: steps with scaled losses,
gradients that overflow (the step skipped, the scale halved), the scale doubled after
``dynamic_growth_steps`` finite steps, the inner optimizer's state and ``iterations``, eagerly
and in ``tf.function``; its Variables, config and argument checks."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

# Per-step loss factors: 1e36 makes the scaled loss and its gradients overflow float32.
FACTORS = [1.0, 2.0, 1e36, 0.5, 1.0, 3.0, 1e36, 1.0]


def _train(tf, make_inner, compiled, **kwargs):
    ws = [tf.Variable([0.5, -1.0, 2.0]), tf.Variable([[0.25, 1.0], [1.5, -0.5]])]
    opt = tf.keras.optimizers.LossScaleOptimizer(make_inner(tf.keras.optimizers), **kwargs)

    def step(factor):
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(w**2 * factor) for w in ws)
            scaled = opt.scale_loss(loss)
        grads = tape.gradient(scaled, ws)
        opt.apply_gradients(zip(grads, ws))
        return scaled

    if compiled:
        step = tf.function(step)
    out = []
    for factor in FACTORS:
        scaled = step(tf.constant(factor))
        scaled = scaled.numpy()
        out.append([scaled if np.isfinite(scaled) else -1.0, opt.dynamic_scale.numpy(), opt.step_counter.numpy()])
        out.append([w.numpy() for w in ws] + [opt.iterations.numpy()])
    return out + [[v.numpy() for v in opt.variables[2:]]]


INNER = {
    "sgd": lambda opts: opts.SGD(0.1),
    "adam": lambda opts: opts.Adam(0.05),
    "lion_ema": lambda opts: opts.Lion(0.05, use_ema=True),
}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_steps_skips_and_scale_match_keras(inner, compiled):
    run_both_ok(lambda tf: _train(tf, INNER[inner], compiled, initial_scale=2.0**10, dynamic_growth_steps=2))


def test_defaults_names_and_scale_before_the_first_step_match_keras():
    def program(tf):
        opt = tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD())
        before = opt.scale_loss(tf.constant(2.0))
        w = tf.Variable([1.0])
        opt.apply_gradients([(tf.constant([4.0]), w)])
        names = [v.name.split(":")[0] for v in opt.variables[2:4]]
        return [before, opt.scale_loss(tf.constant(2.0)), w, len(opt.variables), opt.learning_rate, names]

    run_both_ok(program)
    assert gtf.keras.optimizers.LossScaleOptimizer(gtf.keras.optimizers.SGD()).name.startswith("loss_scale_optimizer")


def test_config_matches_keras_and_round_trips():
    def config(opts):
        opt = opts.LossScaleOptimizer(
            opts.Adam(0.25, name="inner"), initial_scale=8.0, dynamic_growth_steps=3, name="l"
        )
        return opt.get_config()

    want, got = config(tf_real.keras.optimizers), config(gtf.keras.optimizers)
    assert got == want
    copy = gtf.keras.optimizers.LossScaleOptimizer.from_config(got)
    assert copy.get_config() == want and type(copy.inner_optimizer).__name__ == "Adam"


def test_learning_rate_is_the_inner_optimizers():
    def program(tf):
        opt = tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5))
        opt.learning_rate = 0.25
        return [opt.learning_rate, opt.inner_optimizer.learning_rate]

    run_both_ok(program)


@pytest.mark.parametrize(
    "kwargs",
    [{"dynamic": False}, {"clipnorm": 1.0}, {"use_ema": True}, {"beta_1": 0.9}],
    ids=["dynamic_false", "clipnorm", "use_ema", "unknown"],
)
def test_arguments_keras_refuses_are_refused(kwargs):
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD(), **kwargs)
    assert str(info.value).startswith("[gradkit]")


def test_a_meta_gradient_through_a_loss_scaled_step_is_the_unscaled_one():
    """By hand: SGD's step with loss L = sum(w**2) scaled by s is w - lr * 2w, so after it
    meta = sum(w' * d) has d meta/d lr = -sum(2w * d) and d meta/d w = (1 - 2 lr) d."""
    d = np.array([2.0, 3.0], np.float32)
    w, lr = gtf.Variable([1.0, 0.5]), gtf.Variable(0.25)
    opt = gtf.keras.optimizers.LossScaleOptimizer(gtf.keras.optimizers.SGD(0.1), initial_scale=1024.0)
    opt.learning_rate = lr
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            scaled = opt.scale_loss(gtf.reduce_sum(w**2))
        opt.apply_gradients([(inner.gradient(scaled, w), w)])
        meta = gtf.reduce_sum(w * gtf.constant(d))
    dw, dlr = outer.gradient(meta, [w, lr])
    np.testing.assert_allclose(np.asarray(dw), (1 - 2 * 0.25) * d, rtol=1e-6)
    np.testing.assert_allclose(float(dlr), -np.sum(2 * np.array([1.0, 0.5]) * d), rtol=1e-6)


def test_a_compiled_skipped_step_leaves_every_variable_unchanged():
    w = gtf.Variable([1.0, 2.0])
    opt = gtf.keras.optimizers.LossScaleOptimizer(gtf.keras.optimizers.Adam(0.1), initial_scale=4.0)

    @gtf.function
    def step(g):
        opt.apply_gradients([(g, w)])

    step(gtf.constant([1.0, 1.0]))
    before = [v.numpy() for v in opt.variables[2:]] + [w.numpy()]
    step(gtf.constant([np.nan, 1.0]))
    after = [v.numpy() for v in opt.variables[2:]] + [w.numpy()]
    # Only the step counter (reset to 0) and the scale (halved) move.
    assert int(after[0]) == 0 and float(after[1]) == float(before[1]) / 2
    for b, a in zip(before[2:], after[2:]):
        np.testing.assert_array_equal(a, b)
