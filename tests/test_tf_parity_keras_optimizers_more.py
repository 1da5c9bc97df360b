"""``tf.keras.optimizers`` Adadelta, Ftrl, Lion, Lamb and Adafactor against real Keras 3: several
steps over Variables of rank 0, 1 and 2 (Adafactor factors the rank-2 one) with varying
gradients, a learning rate changed between steps, a Variable left out of a step, eagerly and
in ``tf.function``; the optimizer's Variables (count, shapes, dtypes), configs both ways,
Keras' argument checks, and the hypergradient d(loss after the steps)/d(learning rate) against
central finite differences of real Keras' steps in float64."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import _compare, _np, run_both_ok  # noqa: E402
from test_tf_parity_keras_optimizers import _loss, _train, _variables  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

OPTIMIZERS = {
    "adadelta": lambda opts: opts.Adadelta(1.0),
    "adadelta_rho_clipnorm": lambda opts: opts.Adadelta(0.5, rho=0.8, epsilon=1e-4, clipnorm=0.5),
    "lion": lambda opts: opts.Lion(0.05),
    "lion_weight_decay": lambda opts: opts.Lion(0.05, beta_1=0.7, beta_2=0.9, weight_decay=0.3),
    "lamb": lambda opts: opts.Lamb(0.05),
    "lamb_global_clipnorm": lambda opts: opts.Lamb(0.05, beta_1=0.8, epsilon=1e-5, global_clipnorm=0.7),
    "ftrl": lambda opts: opts.Ftrl(0.2),
    "ftrl_regularized": lambda opts: opts.Ftrl(
        0.2,
        learning_rate_power=-0.7,
        initial_accumulator_value=0.3,
        l1_regularization_strength=0.4,
        l2_regularization_strength=0.1,
        l2_shrinkage_regularization_strength=0.05,
        beta=0.2,
    ),
    "adafactor": lambda opts: opts.Adafactor(0.1),
    "adafactor_options": lambda opts: opts.Adafactor(
        0.05, beta_2_decay=-0.5, epsilon_2=1e-2, clip_threshold=0.5, relative_step=False, clipvalue=1.0
    ),
    "adafactor_schedule": lambda opts: opts.Adafactor(opts.schedules.ExponentialDecay(0.2, 2, 0.5)),
}
COMPILED = ["adadelta", "lion_weight_decay", "lamb", "ftrl_regularized"]


@pytest.mark.parametrize(
    "name, compiled",
    [(n, False) for n in sorted(OPTIMIZERS)] + [(n, True) for n in COMPILED],
    ids=[f"{n}-eager" for n in sorted(OPTIMIZERS)] + [f"{n}-tf.function" for n in COMPILED],
)
def test_steps_match_keras(name, compiled):
    def program(tf):
        opt = OPTIMIZERS[name](tf.keras.optimizers)
        return _train(tf, opt, compiled=compiled, change_rate="schedule" not in name)

    run_both_ok(program)


def test_compiled_adafactor_matches_keras_eager():
    """Keras' Adafactor cannot make its first state inside a tf.function (it names a placeholder
    Variable 'Variable:0', which TensorFlow refuses as a scope name): gradkit's compiled steps
    against Keras' eager ones."""
    want = _train(tf_real, OPTIMIZERS["adafactor"](tf_real.keras.optimizers))
    got = _train(gtf, OPTIMIZERS["adafactor"](gtf.keras.optimizers), compiled=True)
    _compare(_np(want), _np(got))


@pytest.mark.parametrize("cls", ["Adadelta", "Ftrl", "Lion", "Lamb", "Adafactor"])
def test_optimizer_variables_as_keras(cls):
    """The step counter, the rate, then each Variable's slots in Keras' number, shapes and dtypes
    (Adafactor's two int32 placeholders for a Variable of rank below 2 included)."""

    def program(tf):
        opt = getattr(tf.keras.optimizers, cls)(0.1)
        ws = _variables(tf)
        opt.apply_gradients(zip([tf.ones_like(w) for w in ws], ws))
        return [
            [str(np.dtype(v.dtype.name if hasattr(v.dtype, "name") else v.dtype)), v.numpy()] for v in opt.variables[1:]
        ]

    run_both_ok(program)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_config_matches_keras_both_ways(name):
    def config(opts):
        return {k: v for k, v in OPTIMIZERS[name](opts).get_config().items() if k != "name"}

    want, got = config(tf_real.keras.optimizers), config(gtf.keras.optimizers)
    assert got == want
    cls = type(OPTIMIZERS[name](gtf.keras.optimizers))
    copy = cls.from_config({"name": "copy", **got})
    assert copy.name == "copy" and {k: v for k, v in copy.get_config().items() if k != "name"} == want


@pytest.mark.parametrize(
    "make",
    [
        lambda opts: opts.Lion(beta_1=0.0),
        lambda opts: opts.Lion(beta_1=1.5),
        lambda opts: opts.Ftrl(initial_accumulator_value=-0.1),
        lambda opts: opts.Ftrl(learning_rate_power=0.5),
        lambda opts: opts.Ftrl(l1_regularization_strength=-1.0),
        lambda opts: opts.Ftrl(l2_shrinkage_regularization_strength=-1.0),
        lambda opts: opts.Lamb(amsgrad=True),
    ],
    ids=[
        "lion_beta_1_zero",
        "lion_beta_1_above_1",
        "ftrl_accumulator",
        "ftrl_power",
        "ftrl_l1",
        "ftrl_shrinkage",
        "lamb_amsgrad",
    ],
)
def test_arguments_keras_refuses_are_refused(make):
    errors = []
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            make(tf.keras.optimizers)
        errors.append(info.value)
    assert str(errors[1]).startswith("[gradkit]"), errors[1]


def _keras_loss_after_steps(name, lr, steps):
    opt = OPTIMIZERS[name](tf_real.keras.optimizers)
    opt.learning_rate = lr
    ws = _variables(tf_real, np.float64)
    for k in range(steps):
        with tf_real.GradientTape() as tape:
            loss = _loss(tf_real, ws, float(k))
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
    return float(_loss(tf_real, ws, float(steps)))


@pytest.mark.parametrize("name", ["adadelta_rho_clipnorm", "lamb", "ftrl_regularized", "adafactor_options", "lion"])
def test_hypergradient_through_steps_matches_finite_differences_of_keras(name):
    lr, h, steps = 0.0625, 2.0**-10, 2
    lr_var = gtf.Variable(lr)
    opt = OPTIMIZERS[name](gtf.keras.optimizers)
    opt.learning_rate = lr_var
    ws = _variables(gtf)
    with gtf.GradientTape() as outer:
        for k in range(steps):
            with gtf.GradientTape() as inner:
                loss = _loss(gtf, ws, float(k))
            opt.apply_gradients(zip(inner.gradient(loss, ws), ws))
        after = _loss(gtf, ws, float(steps))
    got = outer.gradient(after, lr_var)
    want = (_keras_loss_after_steps(name, lr + h, steps) - _keras_loss_after_steps(name, lr - h, steps)) / (2 * h)
    np.testing.assert_allclose(float(got), want, rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(float(after), _keras_loss_after_steps(name, lr, steps), rtol=1e-5)


@pytest.mark.parametrize(
    "make, dw_by_hand",
    [
        (lambda o: o.Lamb(0.1), [2.0, 3.0]),
        (lambda o: o.Adafactor(0.1), [2.0, 3.0]),
        # Ftrl sets w from its linear term alone (0 here): the new w does not depend on the old.
        (lambda o: o.Ftrl(0.1), [0.0, 0.0]),
    ],
    ids=["lamb", "adafactor", "ftrl"],
)
def test_a_meta_gradient_through_zero_variables_and_gradients_is_finite(make, dw_by_hand):
    """Norms and square roots at an all-zero Variable and gradient: every gradient is 0, so by
    hand d(sum(w * d))/dw is ``dw_by_hand`` and the derivative with respect to the rate is 0."""
    w, lr = gtf.Variable([0.0, 0.0]), gtf.Variable(0.1)
    opt = make(gtf.keras.optimizers)
    opt.learning_rate = lr
    with gtf.GradientTape() as outer:
        for _ in range(2):
            with gtf.GradientTape() as inner:
                inner_loss = gtf.reduce_sum(gtf.constant([0.0, 0.0]) * w**2)
            opt.apply_gradients(zip([inner.gradient(inner_loss, w)], [w]))
        meta = gtf.reduce_sum(w * gtf.constant([2.0, 3.0]))
    dw, dlr = outer.gradient(meta, [w, lr])
    np.testing.assert_allclose(np.asarray(dw), dw_by_hand)
    np.testing.assert_allclose(float(dlr), 0.0)
