"""``tf.keras.optimizers`` RMSprop, Adagrad, AdamW, Adamax, Nadam and the base options
(``weight_decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``,
``exclude_from_weight_decay``) against real TensorFlow/Keras 3: several steps over Variables of
different shapes with varying gradients, a learning rate changed between steps, a schedule,
a Variable left out of a step, eagerly and in ``tf.function`` (which compiles once). The
hypergradient d(loss after the steps)/d(learning rate) through gradkit's steps is checked
against central finite differences of real Keras' steps in float64.
"""

import warnings

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from _oracles import count_compiles  # noqa: E402
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

OPTIMIZERS = {
    "rmsprop": lambda opts: opts.RMSprop(0.05),
    "rmsprop_momentum_centered": lambda opts: opts.RMSprop(0.02, rho=0.8, momentum=0.5, epsilon=1e-6, centered=True),
    "rmsprop_momentum": lambda opts: opts.RMSprop(0.02, momentum=0.9),
    "adagrad": lambda opts: opts.Adagrad(0.1),
    "adagrad_no_initial": lambda opts: opts.Adagrad(0.05, initial_accumulator_value=0.0, epsilon=1e-5),
    "adamw": lambda opts: opts.AdamW(0.05),
    "adamw_amsgrad": lambda opts: opts.AdamW(0.05, weight_decay=0.3, beta_1=0.8, amsgrad=True),
    "adamax": lambda opts: opts.Adamax(0.05),
    "nadam": lambda opts: opts.Nadam(0.05, beta_2=0.99),
    "sgd_weight_decay_clipnorm": lambda opts: opts.SGD(0.1, momentum=0.5, weight_decay=0.2, clipnorm=0.5),
    "adam_clipvalue": lambda opts: opts.Adam(0.05, clipvalue=0.3),
    "rmsprop_global_clipnorm": lambda opts: opts.RMSprop(0.05, global_clipnorm=0.7),
    "adagrad_schedule": lambda opts: opts.Adagrad(opts.schedules.ExponentialDecay(0.2, 2, 0.5), weight_decay=0.1),
    "nadam_schedule_clipnorm": lambda opts: opts.Nadam(opts.schedules.InverseTimeDecay(0.1, 2, 0.5), clipnorm=1.0),
}

# Each new optimizer and each clipping option, also compiled and differentiated (the rest
# share their code paths: kept to the eager parity check, for time).
COMPILED = [
    "adagrad_schedule",
    "adam_clipvalue",
    "adamax",
    "adamw_amsgrad",
    "nadam_schedule_clipnorm",
    "rmsprop_global_clipnorm",
    "rmsprop_momentum_centered",
    "sgd_weight_decay_clipnorm",
]
DIFFERENTIATED = [n for n in COMPILED if "schedule" not in n] + ["adagrad", "nadam"]

# Per-Variable gradient scales: some gradients are clipped, some are not.
SCALES = [0.3, 1.0, 2.5]


def _variables(tf, dtype=None):
    return [
        tf.Variable(np.asarray(0.5, dtype or np.float32)),
        tf.Variable(np.asarray([1.0, -2.0, 0.3], dtype or np.float32)),
        tf.Variable(np.asarray([[0.2, -0.1], [0.4, 1.5]], dtype or np.float32)),
    ]


def _loss(tf, ws, i):
    # A gradient that changes with the step i and with the Variables themselves.
    return sum(tf.reduce_sum(c * (1.0 + 0.3 * i) * w**2 + c * tf.sin(w)) for c, w in zip(SCALES, ws))


def _train(tf, opt, steps=5, compiled=False, change_rate=True):
    ws = _variables(tf)

    def step(i, skip_first):
        with tf.GradientTape() as tape:
            loss = _loss(tf, ws, i)
        grads = tape.gradient(loss, ws)
        if skip_first:
            grads[0] = None  # a Variable left out of a step keeps its slots
        opt.apply_gradients(zip(grads, ws))
        return loss

    if compiled:
        step = tf.function(step)
    trace = []
    for k in range(steps):
        if change_rate and k == 2:
            opt.learning_rate = 0.5 * float(np.asarray(opt.learning_rate))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Keras warns of the missing gradient
            loss = step(tf.constant(float(k)), k == 3)
        trace.append([loss] + [w.numpy() for w in ws])
    return trace + [opt.iterations]


@pytest.mark.parametrize(
    "name, compiled",
    [(n, False) for n in sorted(OPTIMIZERS)] + [(n, True) for n in COMPILED],
    ids=[f"{n}-eager" for n in sorted(OPTIMIZERS)] + [f"{n}-tf.function" for n in COMPILED],
)
def test_steps_match_keras(name, compiled):
    def program(tf):
        opt = OPTIMIZERS[name](tf.keras.optimizers)
        return _train(tf, opt, compiled=compiled, change_rate="schedule" not in name)

    out = run_both(program)
    assert not isinstance(out, Exception), out


@pytest.mark.parametrize("name", COMPILED)
def test_a_compiled_step_compiles_once(name):
    opt = OPTIMIZERS[name](gtf.keras.optimizers)
    ws = _variables(gtf)

    @gtf.function
    def step(i):
        with gtf.GradientTape() as tape:
            loss = _loss(gtf, ws, i)
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
        return loss

    step(gtf.constant(0.0))
    step(gtf.constant(1.0))

    def more():
        for k in range(2, 5):
            if "schedule" not in name:
                opt.learning_rate = 0.01 * k
            step(gtf.constant(float(k)))

    assert count_compiles(more) == 0


def _keras_loss_after_steps(name, lr, steps=3):
    """Real Keras in float64: the loss after ``steps`` steps from a rate of ``lr``."""
    opt = OPTIMIZERS[name](tf_real.keras.optimizers)
    opt.learning_rate = lr
    ws = _variables(tf_real, np.float64)
    for k in range(steps):
        with tf_real.GradientTape() as tape:
            loss = _loss(tf_real, ws, float(k))
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
    return float(_loss(tf_real, ws, float(steps)))


@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_hypergradient_through_steps_matches_finite_differences_of_keras(name):
    lr, h, steps = 0.0625, 2.0**-10, 2  # exact in float32, as Keras keeps its rate
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


def test_exclude_from_weight_decay_matches_keras():
    def program(tf):
        opt = tf.keras.optimizers.AdamW(0.1, weight_decay=0.5)
        a, b, bias = tf.Variable([1.0, 2.0]), tf.Variable(3.0), tf.Variable([0.5, -0.5], name="my_bias")
        opt.exclude_from_weight_decay(var_list=[a], var_names=["bias"])
        out = []
        for _ in range(3):
            grads = [tf.constant([0.1, 0.2]), tf.constant(0.3), tf.constant([0.1, -0.1])]
            opt.apply_gradients(zip(grads, [a, b, bias]))
            out += [a.numpy(), b.numpy(), bias.numpy()]
        return out

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_hyperparameters_read_back_as_in_keras():
    def program(tf):
        opts = tf.keras.optimizers
        r, a = opts.RMSprop(rho=0.8, momentum=0.1, centered=True), opts.Adagrad(initial_accumulator_value=0.2)
        w, n, x = opts.AdamW(weight_decay=0.01, clipnorm=2.0), opts.Nadam(beta_1=0.8), opts.Adamax(epsilon=1e-6)
        return [r.learning_rate, r.rho, r.momentum, r.epsilon, r.centered, a.initial_accumulator_value, a.epsilon] + [
            w.weight_decay,
            w.clipnorm,
            w.beta_2,
            n.beta_1,
            x.epsilon,
            r.weight_decay,
            r.clipvalue,
            r.global_clipnorm,
        ]

    out = run_both(program)
    assert not isinstance(out, Exception), out


@pytest.mark.parametrize(
    "make",
    [
        lambda opts: opts.SGD(0.1, clipnorm=1.0, clipvalue=0.5),
        lambda opts: opts.RMSprop(global_clipnorm=1.0, clipnorm=1.0),
        lambda opts: opts.AdamW(weight_decay=None),
    ],
    ids=["clipnorm_and_clipvalue", "global_clipnorm_and_clipnorm", "adamw_without_weight_decay"],
)
def test_options_keras_refuses_are_refused(make):
    out = run_both(lambda tf: make(tf.keras.optimizers))
    assert isinstance(out, ValueError) and str(out).startswith("[gradkit]"), out


@pytest.mark.parametrize("kwargs", [{"gradient_accumulation": 2}, {"jit_compile": True}], ids=["typo", "jit_compile"])
def test_an_argument_keras_does_not_take_is_refused(kwargs):
    out = run_both(lambda tf: tf.keras.optimizers.RMSprop(**kwargs))
    assert isinstance(out, ValueError) and list(kwargs)[0] in str(out), out


def test_keras_2_decay_is_ignored_with_keras_warning():
    """Keras 3 takes ``decay`` and ignores it (a warning unless it is None); gradkit.tf raised."""
    for tf in (tf_real, gtf):
        tf.keras.optimizers.Adam(0.1, decay=None)
        with pytest.warns(UserWarning, match="`decay` is no longer supported"):
            opt = tf.keras.optimizers.SGD(0.5, decay=0.1)
        assert "decay" not in opt.get_config()
        w = tf.Variable([1.0])
        opt.apply_gradients([(tf.constant([1.0]), w)])
        np.testing.assert_allclose(w.numpy(), [0.5])


@pytest.mark.parametrize(
    "make",
    [
        lambda opts: opts.Nadam(0.1),
        lambda opts: opts.Adamax(0.1),
        lambda opts: opts.RMSprop(0.1, global_clipnorm=1.0, centered=True),
        lambda opts: opts.SGD(0.1, momentum=0.9, clipnorm=1.0),
        lambda opts: opts.Adagrad(0.1, initial_accumulator_value=0.0, clipvalue=1.0),
    ],
    ids=["nadam", "adamax", "rmsprop_global_clipnorm", "sgd_clipnorm", "adagrad_clipvalue"],
)
def test_a_meta_gradient_through_an_exactly_zero_gradient_is_finite(make):
    """Every gradient is exactly 0, so no step moves w: by hand, d(sum(w * d))/dw = d and the
    derivative with respect to the rate is 0 (square roots and norms taken at 0 must not make
    them NaN)."""
    d = np.array([2.0, 3.0], np.float32)
    w, lr = gtf.Variable([1.0, 0.5]), gtf.Variable(0.1)
    opt = make(gtf.keras.optimizers)
    opt.learning_rate = lr
    with gtf.GradientTape() as outer:
        for _ in range(2):
            with gtf.GradientTape() as inner:
                inner_loss = gtf.reduce_sum(gtf.constant([0.0, 0.0]) * w**2)
            opt.apply_gradients(zip([inner.gradient(inner_loss, w)], [w]))
        meta = gtf.reduce_sum(w * gtf.constant(d))
    dw, dlr = outer.gradient(meta, [w, lr])
    np.testing.assert_allclose(np.asarray(dw), d)
    np.testing.assert_allclose(float(dlr), 0.0)


def _build_then_apply(tf):
    """Keras 3's custom-loop API: ``build`` before a compiled step, ``apply``, ``variables``."""
    ws = _variables(tf)
    opt = tf.keras.optimizers.Adam(0.1)
    opt.build(ws)
    n_built = len(opt.variables)

    @tf.function
    def step(i):
        with tf.GradientTape() as tape:
            loss = _loss(tf, ws, i)
        opt.apply(tape.gradient(loss, ws))  # the Variables given to build

    for i in range(3):
        step(tf.constant(float(i)))
    opt.apply([tf.ones_like(w) for w in ws], ws)
    return [w.numpy() for w in ws], int(opt.iterations.numpy()), n_built, len(opt.variables)


def test_build_apply_and_variables_as_in_keras():
    want, got = _build_then_apply(tf_real), _build_then_apply(gtf)
    for w, g in zip(want[0], got[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[1] == want[1] == 4
    # iterations, the learning rate, and Adam's two moments per Variable, made by build
    assert got[2:] == want[2:] == (8, 8)


def test_apply_without_variables_before_build_says_what_to_pass():
    opt = gtf.keras.optimizers.SGD(0.1)
    w = gtf.Variable([1.0])
    with pytest.raises(ValueError, match="optimizer.build"):
        opt.apply([gtf.constant([1.0])])
    np.testing.assert_array_equal(w.numpy(), [1.0])


def test_optimizer_names_are_keras_defaults():
    def base(name):  # 'adam_1' -> 'adam': earlier tests made optimizers of these kinds too
        stem, _, number = name.rpartition("_")
        return stem if number.isdigit() else name

    names = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Nadam"]
    want = [base(getattr(tf_real.keras.optimizers, n)().name) for n in names]
    got = [base(getattr(gtf.keras.optimizers, n)().name) for n in names]
    assert got == want == ["sgd", "adam", "adam_w", "rm_sprop", "adagrad", "adamax", "nadam"]
    first, second = gtf.keras.optimizers.Adamax(), gtf.keras.optimizers.Adamax()
    assert base(second.name) == base(first.name) and second.name != first.name
    assert gtf.keras.optimizers.Adam(name="outer").name == "outer"


def _first_step_with_a_missing_gradient(tf):
    """Keras builds the state of every Variable passed to the first step, its gradient None or not."""
    ws = _variables(tf)
    opt = tf.keras.optimizers.Nadam(0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Keras warns of the missing gradient
        opt.apply_gradients(zip([None, tf.constant([1.0, 2.0, 3.0]), None], ws))
    values = sorted(np.asarray(v.numpy(), np.float64).ravel().tolist() for v in opt.variables)
    return len(opt.variables), values


def test_the_first_step_makes_the_state_of_a_variable_without_a_gradient_as_keras():
    # gradkit made slots only for the Variables with a gradient: 5 Variables where Keras has 9.
    want, got = _first_step_with_a_missing_gradient(tf_real), _first_step_with_a_missing_gradient(gtf)
    # iterations, the learning rate, Nadam's u_product and two moments for each of the 3 Variables
    assert got[0] == want[0] == 9
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def _steps_with_a_loss_scale(tf, **kwargs):
    """Keras' loss_scale_factor: scale_loss multiplies the loss, apply_gradients divides the
    gradients before clipping."""
    ws = [tf.Variable([0.5, -1.0, 2.0]), tf.Variable([[0.25], [1.5]], dtype=tf.float16)]
    opt = tf.keras.optimizers.Adam(0.1, **kwargs)
    for k in range(3):
        with tf.GradientTape() as tape:
            loss = opt.scale_loss(sum(tf.reduce_sum(tf.cast(w, tf.float32) ** 2) for w in ws) * (1e-3 * (k + 1)))
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
    return [w.read_value() for w in ws] + [opt.get_config()["loss_scale_factor"], opt.scale_loss(2.0)]


@pytest.mark.parametrize(
    "kwargs",
    [{"loss_scale_factor": 1024.0}, {"loss_scale_factor": 0.5, "clipnorm": 0.001}, {"loss_scale_factor": 8.0}],
    ids=["scale_1024", "scale_half_clipnorm", "scale_8"],
)
def test_loss_scale_factor_matches_keras(kwargs):
    # gradkit refused loss_scale_factor (a ValueError naming it as not supported).
    out = run_both(lambda tf: _steps_with_a_loss_scale(tf, **kwargs))
    assert not isinstance(out, Exception), out


def test_a_loss_scale_factor_leaves_the_step_unchanged():
    """By hand: SGD's step is -lr * dL/dw whatever power-of-two factor scales the loss."""
    w = gtf.Variable([0.5, -1.0, 2.0])
    opt = gtf.keras.optimizers.SGD(0.25, loss_scale_factor=1024.0)
    with gtf.GradientTape() as tape:
        scaled = opt.scale_loss(gtf.reduce_sum(w**2))
    opt.apply_gradients([(tape.gradient(scaled, w), w)])
    np.testing.assert_array_equal(w.numpy(), np.float32([0.5, -1.0, 2.0]) * (1 - 2 * 0.25))
    assert float(scaled) == 1024.0 * 5.25
