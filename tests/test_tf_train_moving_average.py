"""``tf.train.ExponentialMovingAverage``: values, shadow names and errors against real TensorFlow
2.21; gradients through ``apply`` (which TensorFlow's tape loses: None) against a hand derivation
and a pure-JAX rewrite of the same updates."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf


def p_apply_moves_each_shadow_towards_its_variable(tf):
    w = tf.Variable([1.0, 2.0], name="ema_w")
    u = tf.Variable(3.0, name="ema_u")
    ema = tf.train.ExponentialMovingAverage(0.9)
    before = [ema.average(w), ema.average_name(w)]
    returned = ema.apply([w, u])
    first = ema.average(w).numpy()
    w.assign([3.0, 4.0])
    ema.apply([w])  # only w's shadow moves
    u.assign(5.0)
    ema.apply((w, u))
    shadow = ema.average(w)
    return before + [
        returned,
        first,
        shadow,
        ema.average(u),
        shadow.name,
        ema.average_name(w),
        ema.average(u).name,
        shadow.trainable,
        ema.name,
    ]


def p_num_updates_lowers_the_decay_early_on(tf):
    x = tf.Variable(0.0, name="ema_steps")
    step = tf.Variable(5)
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    ema.apply([x])
    x.assign(10.0)
    ema.apply([x])  # decay min(0.99, 6/15)
    step.assign(1000)
    x.assign(20.0)
    ema.apply([x])  # decay 0.99
    return ema.average(x)


def p_half_precision_shadow_keeps_its_dtype(tf):
    h = tf.Variable([1.0, -2.0], dtype=tf.float16, name="ema_half")
    b = tf.Variable([1.0], dtype=tf.bfloat16, name="ema_bf16")
    ema = tf.train.ExponentialMovingAverage(0.3, name="Half")
    ema.apply([h, b])
    h.assign([2.0, 7.0])
    b.assign([3.0])
    ema.apply([h, b])
    return [tf.cast(ema.average(h), tf.float32), ema.average(h).dtype.name, ema.average(b).dtype.name]


def p_names_are_unique_per_shadow(tf):
    v = tf.Variable(1.0, name="ema_named")
    first, second, other = (
        tf.train.ExponentialMovingAverage(0.5),
        tf.train.ExponentialMovingAverage(0.5),
        tf.train.ExponentialMovingAverage(0.5, name="Slow"),
    )
    for ema in (first, second, other):
        ema.apply([v])
    return [first.average(v).name, second.average(v).name, other.average(v).name, second.average_name(v)]


def p_applying_nothing_does_nothing(tf):
    ema = tf.train.ExponentialMovingAverage(0.5)
    return [ema.apply(), ema.apply([])]


def p_variables_to_restore_maps_average_names_to_variables(tf):
    w = tf.Variable(4.0, name="ema_restore")
    ema = tf.train.ExponentialMovingAverage(0.5, name="Restore")
    ema.apply([w])
    everything = ema.variables_to_restore()  # every Variable averaged in the process, by name
    return [ema.variables_to_restore([w]), everything["ema_restore/Restore"]]


def p_inside_a_function_the_shadow_starts_from_the_value_before_the_call(tf):
    w = tf.Variable(2.0, name="ema_in_function")
    ema = tf.train.ExponentialMovingAverage(0.5)

    @tf.function
    def step(x):
        w.assign(x)
        ema.apply([w])
        return ema.average(w).read_value()

    return [step(tf.constant(3.0)), step(tf.constant(5.0)), ema.average(w).name]


def p_a_tensor_is_refused(tf):
    return tf.train.ExponentialMovingAverage(0.5).apply([tf.constant(1.0)])


def p_an_integer_variable_is_refused(tf):
    return tf.train.ExponentialMovingAverage(0.5).apply([tf.Variable(1)])


def p_a_failed_apply_moves_no_shadow(tf):
    w = tf.Variable(1.0, name="ema_failed")
    ema = tf.train.ExponentialMovingAverage(0.5)
    ema.apply([w])
    w.assign(3.0)
    try:
        ema.apply([w, tf.Variable([1, 2])])
    except TypeError:
        pass
    return ema.average(w)


def p_the_compat_v1_name(tf):
    return tf.compat.v1.train.ExponentialMovingAverage is tf.train.ExponentialMovingAverage


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_a_failed_apply_makes_no_shadow():
    w = gtf.Variable(1.0)
    ema = gtf.train.ExponentialMovingAverage(0.5)
    with pytest.raises(TypeError, match=r"\[gradkit\].*half, float, or double"):
        ema.apply([w, gtf.Variable(1)])
    assert ema.average(w) is None


def test_average_of_a_non_variable_says_what_to_pass():
    with pytest.raises(AttributeError, match=r"\[gradkit\].*Pass the Variable given to apply"):
        gtf.train.ExponentialMovingAverage(0.5).average(3)


def _two_steps(tape_fn=None):
    """A loss of the average after two applies with the Variable tripled in between; decay a Variable."""
    decay = gtf.Variable(0.9)
    a = gtf.Variable(1.0)
    ema = gtf.train.ExponentialMovingAverage(decay)

    def program():
        with gtf.GradientTape() as tape:
            ema.apply([a])
            a.assign(a * 3.0)
            ema.apply([a])
            loss = ema.average(a) ** 2
        return loss, tape.gradient(loss, [a, decay])

    return tape_fn(program)() if tape_fn else program()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
def test_gradient_through_apply_matches_the_hand_derivation(compiled):
    # s0 = a (a copy no tape records, as TensorFlow's init_scope); s1 = d s0 + (1 - d) a;
    # s2 = d s1 + (1 - d) 3a = d^2 s0 + (1 - d)(d + 3) a; loss = s2^2.
    loss, (d_a, d_decay) = _two_steps(gtf.function if compiled else None)
    a, d, s0 = 1.0, 0.9, 1.0
    s2 = d * d * s0 + (1 - d) * (d + 3) * a
    np.testing.assert_allclose(loss.numpy(), s2**2, rtol=1e-6)
    np.testing.assert_allclose(d_a.numpy(), 2 * s2 * (1 - d) * (d + 3), rtol=1e-5)
    np.testing.assert_allclose(d_decay.numpy(), 2 * s2 * (2 * d * s0 + (1 - d - (d + 3)) * a), rtol=1e-5)


def test_meta_gradient_of_an_averaged_sgd_run_matches_pure_jax():
    """Three SGD steps on w, each followed by ema.apply; the loss of the averaged weights. gradkit's
    tape against jax.grad of the same updates written as a pure function."""
    x = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]], np.float32)
    y = np.array([1.0, -1.0, 0.5], np.float32)
    w0 = np.array([0.3, -0.2], np.float32)
    lr, decay = 0.1, 0.8

    def inner_loss(w):
        return jnp.mean((x @ w - y) ** 2)

    def pure(w, lr):
        shadow = jax.lax.stop_gradient(w)  # the shadow's first value: a copy, as init_scope makes it
        shadow = shadow - (shadow - w) * (1 - decay)
        for _ in range(3):
            w = w - lr * jax.grad(inner_loss)(w)
            shadow = shadow - (shadow - w) * (1 - decay)
        return jnp.sum(shadow**2)

    w = gtf.Variable(w0)
    rate = gtf.Variable(lr)
    ema = gtf.train.ExponentialMovingAverage(decay)
    with gtf.GradientTape() as outer:
        ema.apply([w])
        for _ in range(3):
            with gtf.GradientTape() as inner:
                loss = gtf.reduce_mean((gtf.linalg.matvec(gtf.constant(x), w) - y) ** 2)
            w.assign_sub(rate * inner.gradient(loss, w))
            ema.apply([w])
        meta = gtf.reduce_sum(ema.average(w) ** 2)
    d_w, d_lr = outer.gradient(meta, [w, rate])
    want_w, want_lr = jax.grad(pure, argnums=(0, 1))(w0, lr)
    np.testing.assert_allclose(meta.numpy(), pure(w0, lr), rtol=1e-5)
    np.testing.assert_allclose(d_w.numpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_lr.numpy(), want_lr, rtol=1e-5, atol=1e-6)


def test_applying_in_a_loop_of_same_shaped_steps_traces_only_on_the_first_call():
    w = gtf.Variable([1.0, 2.0])
    ema = gtf.train.ExponentialMovingAverage(0.5)

    @gtf.function
    def step(x):
        w.assign(x)
        ema.apply([w])

    counts = []
    for value in ([3.0, 4.0], [5.0, 6.0], [7.0, 8.0]):
        step(gtf.constant(value))
        counts.append(step.experimental_get_tracing_count())
    # shadow: 1 -> 2 -> 3.5 -> 5.25 (first element), as s - (s - x) / 2 with s0 = 1.
    np.testing.assert_allclose(ema.average(w).numpy(), [5.25, 6.25])
    # The first call makes the shadow and is traced again without making it, as in TensorFlow (2, 2, 2).
    assert counts[1:] == counts[:1] * 2
