"""Keras optimizers' ``gradient_accumulation_steps`` (gradkit.tf refused it before).

Against Keras 3 on TensorFlow, call by call (eagerly and in ``tf.function``): the Variables, every
optimizer Variable (accumulators, slots, Nadam's ``u_product``, the counter) and ``iterations``,
with clipping, weight decay, ``loss_scale_factor``, ``use_ema``, a schedule and Variables left out
of a call (also of an update, whose accumulators Keras sets to zero anyway). Without TensorFlow: a
NumPy transcription of Keras' rule, a meta-gradient through accumulated steps against ``jax.grad``
of the same steps written in JAX, and the config round trip.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf


def _tf():
    return pytest.importorskip("tensorflow")


OPTIMIZERS = {
    "sgd_nesterov": lambda o, **kw: o.SGD(0.1, momentum=0.9, nesterov=True, **kw),
    "adam": lambda o, **kw: o.Adam(0.05, **kw),
    "rmsprop_centered": lambda o, **kw: o.RMSprop(0.02, momentum=0.5, centered=True, **kw),
    "adamw_global_clipnorm": lambda o, **kw: o.AdamW(0.05, weight_decay=0.1, global_clipnorm=1.0, **kw),
    "nadam_schedule": lambda o, **kw: o.Nadam(o.schedules.ExponentialDecay(0.1, 2, 0.5), **kw),
    "sgd_ema_loss_scale_clipvalue": lambda o, **kw: o.SGD(
        0.1, momentum=0.5, use_ema=True, ema_overwrite_frequency=2, loss_scale_factor=4.0, clipvalue=0.4, **kw
    ),
}
COMPILED = ["adam", "sgd_ema_loss_scale_clipvalue", "nadam_schedule"]

# Keras' names of each optimizer's slots, in the order gradkit keeps them per Variable.
SLOTS = {
    "sgd": ["momentum"],
    "adam": ["momentum", "velocity"],
    "adamw": ["momentum", "velocity"],
    "nadam": ["momentum", "velocity"],
    "rmsprop": ["velocity", "momentum", "average_gradient"],
}
SCALES = [0.3, 1.0, 2.5]


def _variables(tf, dtype=np.float32):
    return [
        tf.Variable(dtype(0.5), name="a"),
        tf.Variable(dtype([1.0, -2.0, 0.3]), name="b"),
        tf.Variable(dtype([[0.2, -0.1], [0.4, 1.5]]), name="c"),
    ]


def _loss(tf, ws, i):
    return sum(tf.reduce_sum(c * (1.0 + 0.3 * i) * w**2 + c * tf.sin(w)) for c, w in zip(SCALES, ws))


def _optimizer_state(opt, name, keras):
    """Every optimizer Variable's value by a common label ('b/momentum', 'c/gradient_accumulator')."""
    out = {}
    for v in opt.variables:
        label = v.name.split(":")[0]
        if keras:
            # Keras' Nadam names its u_product 'variable', 'variable_1', ...
            label = "u_product" if label.startswith("variable") else label.replace("_0_", "/", 1)
        else:
            label = {"iterations": "iteration"}.get(label, label)
            if "/slot_" in label:
                variable, i = label.split("/slot_")
                label = f"{variable}/{SLOTS[name.split('_')[0]][int(i)]}"
        out[label] = np.asarray(v.numpy(), np.float32)
    return out


def _train(tf, name, steps, compiled=False, calls=7):
    """``calls`` calls over three Variables; the first is left out of call 3, the third of call 5."""
    opt = OPTIMIZERS[name](tf.keras.optimizers, gradient_accumulation_steps=steps)
    ws = _variables(tf)

    def step(i, skip):
        with tf.GradientTape() as tape:
            loss = _loss(tf, ws, i)
        grads = tape.gradient(loss, ws)
        if skip is not None:
            grads[skip] = None
        opt.apply_gradients(zip(grads, ws))

    if compiled:
        step = tf.function(step)
    trace = []
    for k in range(calls):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Keras warns of the missing gradient
            step(tf.constant(float(k)), {3: 0, 5: 2}.get(k))
        trace.append(
            ([w.numpy() for w in ws], _optimizer_state(opt, name, tf is not gtf), int(np.asarray(opt.iterations)))
        )
    return trace


@pytest.mark.parametrize(
    "name, steps, compiled",
    [(n, k, False) for n in sorted(OPTIMIZERS) for k in (None, 2, 3)]
    + [(n, k, True) for n in COMPILED for k in (2, 3)],
)
def test_calls_match_keras(name, steps, compiled):
    tf_real = _tf()
    want, got = _train(tf_real, name, steps, compiled), _train(gtf, name, steps, compiled)
    for call, ((w_want, s_want, it_want), (w_got, s_got, it_got)) in enumerate(zip(want, got)):
        assert it_got == it_want, call
        for a, b in zip(w_got, w_want):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=f"call {call}")
        assert sorted(s_got) == sorted(s_want), (sorted(s_got), sorted(s_want))
        for label in s_want:
            np.testing.assert_allclose(s_got[label], s_want[label], rtol=2e-5, atol=1e-6, err_msg=f"{call} {label}")


def _numpy_adam(w, grads, steps, lr0, decay_rate):
    """Keras' Adam with gradient accumulation, by hand: the rate from an ExponentialDecay(lr0, 1,
    decay_rate) at the number of calls, the bias correction at the number of updates."""
    w, acc = np.float32(w), np.zeros_like(w)
    m, v = np.zeros_like(w), np.zeros_like(w)
    trace = []
    for n, g in enumerate(grads):
        if (n + 1) % steps:
            acc = acc + g
        else:
            g, acc = (g + acc) / steps, np.zeros_like(w)
            t = n // steps + 1
            lr = lr0 * decay_rate**n
            m = m + (g - m) * (1 - 0.9)
            v = v + (g * g - v) * (1 - 0.999)
            alpha = lr * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
            w = w - (m * alpha) / (np.sqrt(v) + 1e-7)
        trace.append((w, acc, (n + 1) // steps))
    return trace


@pytest.mark.parametrize("steps", [2, 3])
def test_adam_calls_match_a_numpy_transcription(steps):
    rng = np.random.default_rng(steps)
    grads = rng.normal(size=(7, 3)).astype(np.float32)
    w0 = np.float32([0.5, -1.0, 2.0])
    w = gtf.Variable(w0)
    schedule = gtf.keras.optimizers.schedules.ExponentialDecay(0.1, 1, 0.5)
    opt = gtf.keras.optimizers.Adam(schedule, gradient_accumulation_steps=steps)
    for n, (g, (want_w, want_acc, want_iterations)) in enumerate(zip(grads, _numpy_adam(w0, grads, steps, 0.1, 0.5))):
        returned = opt.apply_gradients([(gtf.constant(g), w)])
        np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(opt._accumulator(w).numpy(), want_acc, rtol=1e-6, atol=1e-7)
        assert int(opt.iterations.numpy()) == want_iterations and int(returned.numpy()) == n + 1
        np.testing.assert_allclose(float(opt.learning_rate), 0.1 * 0.5 ** (n + 1), rtol=1e-6)


def test_sgd_momentum_calls_match_a_numpy_transcription():
    """SGD with momentum 0.5, weight decay 0.1 and loss_scale_factor 2: every second call steps
    with the mean of the two unscaled gradients; the decay reads the Variable before the step."""
    lr, w0 = 0.25, np.float32([1.0, -2.0])
    grads = np.float32([[0.4, 0.2], [1.0, -0.6], [0.2, 0.2], [-0.8, 0.4], [2.0, 1.0]])
    w = gtf.Variable(w0)
    opt = gtf.keras.optimizers.SGD(
        lr, momentum=0.5, weight_decay=0.1, loss_scale_factor=2.0, gradient_accumulation_steps=2
    )
    want, acc, m = w0, np.zeros(2, np.float32), np.zeros(2, np.float32)
    for n, g in enumerate(grads):
        opt.apply_gradients([(gtf.constant(g), w)])
        g = g / 2.0
        if n % 2 == 0:
            acc = acc + g
        else:
            g, acc = (g + acc) / 2, np.zeros(2, np.float32)
            want = want - want * np.float32(0.1) * lr
            m = 0.5 * m - lr * g
            want = want + m
        np.testing.assert_allclose(w.numpy(), want, rtol=1e-6)


def test_a_meta_gradient_through_accumulated_steps_is_exact():
    """d(loss after 5 calls)/d(w0, lr) through Adam with k = 2 (two updates, one call that only
    accumulates at the end), each gradient taken at the Variable's value then, against jax.grad of
    the same calls written in JAX."""
    w0, lr0 = np.float32([0.5, -1.5]), np.float32(0.125)

    def pure(w, lr):
        m = v = acc = jnp.zeros_like(w)
        for n in range(5):
            g = jnp.cos(w) * (n + 1.0)
            if n % 2 == 0:
                acc = acc + g
                continue
            g, acc = (g + acc) / 2, jnp.zeros_like(w)
            m = m + (g - m) * 0.1
            v = v + (g * g - v) * 0.001
            t = n // 2 + 1.0
            alpha = lr * jnp.sqrt(1 - jnp.float32(0.999) ** t) / (1 - jnp.float32(0.9) ** t)
            w = w - (m * alpha) / (jnp.sqrt(v) + 1e-7)
        return jnp.sum(w**2) + jnp.sum(acc)

    w, lr = gtf.Variable(w0), gtf.Variable(lr0)
    opt = gtf.keras.optimizers.Adam(lr, gradient_accumulation_steps=2)
    with gtf.GradientTape() as outer:
        for n in range(5):
            with gtf.GradientTape() as inner:
                loss = gtf.reduce_sum(gtf.sin(w) * (n + 1.0))
            opt.apply_gradients([(inner.gradient(loss, w), w)])
        after = gtf.reduce_sum(w**2) + gtf.reduce_sum(opt._accumulator(w))
    got = outer.gradient(after, [w, lr])
    want = jax.grad(pure, argnums=(0, 1))(jnp.asarray(w0), jnp.asarray(lr0))
    np.testing.assert_allclose(float(after), float(pure(w0, lr0)), rtol=1e-6)
    for g, x in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-4, atol=1e-6)


def _rmsprop_calls(compiled):
    from _oracles import count_compiles

    ws = _variables(gtf)
    opt = gtf.keras.optimizers.RMSprop(0.05, momentum=0.5, gradient_accumulation_steps=3)

    def step(i):
        with gtf.GradientTape() as tape:
            loss = _loss(gtf, ws, i)
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))

    if compiled:
        step = gtf.function(step)
    step(gtf.constant(0.0))
    compiles = count_compiles(lambda: [step(gtf.constant(float(k))) for k in range(1, 6)])
    return [w.numpy() for w in ws] + [int(opt.iterations.numpy())], compiles


def _keras_loss_after_calls(name, lr, calls):
    """Real Keras in float64, k = 2: the loss after ``calls`` calls from a rate of ``lr``."""
    tf_real = _tf()
    opt = OPTIMIZERS[name](tf_real.keras.optimizers, gradient_accumulation_steps=2)
    opt.learning_rate = lr
    ws = _variables(tf_real, np.float64)
    for k in range(calls):
        with tf_real.GradientTape() as tape:
            loss = _loss(tf_real, ws, float(k))
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
    return float(_loss(tf_real, ws, float(calls)))


@pytest.mark.parametrize("name", ["sgd_nesterov", "adamw_global_clipnorm", "rmsprop_centered"])
def test_hypergradient_through_accumulated_calls_matches_finite_differences_of_keras(name):
    """d(loss after 5 calls)/d(learning rate) with k = 2: two updates (the rate enters the weight
    decay and the rule), each averaging gradients taken at the Variables' values then."""
    lr, h, calls = 0.0625, 2.0**-10, 5  # exact in float32, as Keras keeps its rate
    lr_var = gtf.Variable(lr)
    opt = OPTIMIZERS[name](gtf.keras.optimizers, gradient_accumulation_steps=2)
    opt.learning_rate = lr_var
    ws = _variables(gtf)
    with gtf.GradientTape() as outer:
        for k in range(calls):
            with gtf.GradientTape() as inner:
                loss = _loss(gtf, ws, float(k))
            opt.apply_gradients(zip(inner.gradient(loss, ws), ws))
        after = _loss(gtf, ws, float(calls))
    got = outer.gradient(after, lr_var)
    want = (_keras_loss_after_calls(name, lr + h, calls) - _keras_loss_after_calls(name, lr - h, calls)) / (2 * h)
    np.testing.assert_allclose(float(got), want, rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(float(after), _keras_loss_after_calls(name, lr, calls), rtol=1e-5)


def test_a_compiled_accumulating_step_compiles_once_and_matches_eager():
    (eager, _), (compiled, compiles) = _rmsprop_calls(False), _rmsprop_calls(True)
    assert compiles == 0  # the raw count is data: accumulating and updating calls share one program
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("steps", [None, 0, 2, 3])
def test_config_round_trip_keeps_the_steps(steps):
    opt = gtf.keras.optimizers.Adam(0.01, gradient_accumulation_steps=steps)
    config = opt.get_config()
    assert config["gradient_accumulation_steps"] == steps
    copy = gtf.keras.optimizers.Adam.from_config(config)
    assert copy.get_config() == config and copy.gradient_accumulation_steps == steps
    results = []
    for optimizer in (opt, copy):
        w = gtf.Variable([1.0, -2.0])
        for g in ([0.1, 0.2], [0.4, -0.1], [0.3, 0.3]):
            optimizer.apply_gradients([(gtf.constant(g), w)])
        results.append(w.numpy())
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("steps", [None, 2, 3])
def test_config_matches_keras(steps):
    tf_real = _tf()
    want = tf_real.keras.optimizers.RMSprop(0.01, gradient_accumulation_steps=steps, name="o").get_config()
    got = gtf.keras.optimizers.RMSprop(0.01, gradient_accumulation_steps=steps, name="o").get_config()
    assert got == want


BAD = {"one": 1, "negative": -2, "true": True, "fraction": 1.5, "string": "2"}


@pytest.mark.parametrize("key", sorted(BAD))
def test_bad_steps_are_refused_when_made(key):
    tf_real = _tf()
    with pytest.raises(Exception) as want:
        tf_real.keras.optimizers.SGD(0.1, gradient_accumulation_steps=BAD[key])
    with pytest.raises(type(want.value), match=r"^\[gradkit\].*gradient_accumulation_steps"):
        gtf.keras.optimizers.SGD(0.1, gradient_accumulation_steps=BAD[key])


@pytest.mark.parametrize("steps", [2.0, 2.5])
def test_a_float_step_count_is_refused_at_the_first_step_with_nothing_changed(steps):
    """Keras takes a float >= 2 when made and raises TypeError at the first step."""
    tf_real = _tf()
    for tf in (tf_real, gtf):
        w = tf.Variable([1.0, 2.0])
        opt = tf.keras.optimizers.SGD(0.1, momentum=0.9, gradient_accumulation_steps=steps)
        with pytest.raises(TypeError) as error:
            opt.apply_gradients([(tf.constant([1.0, 1.0]), w)])
        assert tf is tf_real or str(error.value).startswith("[gradkit]")
        np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
        assert int(np.asarray(opt._iterations.numpy())) == 0


@pytest.mark.parametrize("steps", [0, False, np.int64(2)])
def test_what_keras_accepts_is_accepted(steps):
    tf_real = _tf()
    out = []
    for tf in (tf_real, gtf):
        w = tf.Variable([1.0, 2.0])
        opt = tf.keras.optimizers.SGD(0.5, gradient_accumulation_steps=steps)
        for g in ([1.0, 1.0], [3.0, -1.0], [2.0, 2.0]):
            opt.apply_gradients([(tf.constant(g), w)])
        out.append((w.numpy(), int(np.asarray(opt.iterations))))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    assert out[1][1] == out[0][1]


def test_a_gradient_of_another_dtype_is_refused_as_tensorflow_refuses_it():
    """Keras adds the gradient to an accumulator of the Variable's dtype: TensorFlow raises for a
    float32 gradient of a bfloat16 Variable (without accumulation Keras casts it)."""
    tf_real = _tf()
    for tf in (tf_real, gtf):
        w = tf.Variable([1.0, -2.0], dtype=tf.bfloat16)
        opt = tf.keras.optimizers.SGD(0.1, gradient_accumulation_steps=2)
        with pytest.raises(Exception) as error:
            opt.apply_gradients([(tf.constant([0.3, 0.1]), w)])
        assert tf is tf_real or str(error.value).startswith("[gradkit]") and isinstance(error.value, ValueError)
        np.testing.assert_array_equal(np.float32(w.numpy()), [1.0, -2.0])


def test_python_and_numpy_gradients_take_the_variables_dtype():
    w = gtf.Variable(np.float16([1.0, 2.0]))
    opt = gtf.keras.optimizers.SGD(0.5, gradient_accumulation_steps=2)
    opt.apply_gradients([([0.5, 0.25], w)])
    opt.apply_gradients([(np.float32([1.5, 0.75]), w)])
    np.testing.assert_allclose(np.float32(w.numpy()), [0.5, 1.75])
    assert w.dtype == opt._accumulator(w).dtype
