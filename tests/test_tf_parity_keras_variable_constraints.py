"""``tf.Variable(constraint=...)`` and Keras' optimizers, which project each Variable by its
constraint after every ``apply_gradients`` call (one that only accumulates gradients too), against
real TensorFlow/Keras 3, eagerly and in ``tf.function``; a meta-gradient through a projected
step, and a failing constraint that leaves every Variable unchanged."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

CONSTRAINTS = {
    "non_neg": lambda tf: tf.keras.constraints.NonNeg(),
    "max_norm": lambda tf: tf.keras.constraints.MaxNorm(1.0, axis=0),
    "unit_norm": lambda tf: tf.keras.constraints.UnitNorm(axis=1),
    "lambda": lambda tf: lambda w: tf.clip_by_value(w, -0.5, 0.75),
}
OPTIMIZERS = {
    "sgd_momentum": lambda opts: opts.SGD(0.3, momentum=0.9),
    "adam": lambda opts: opts.Adam(0.2),
    "sgd_accumulating": lambda opts: opts.SGD(0.3, gradient_accumulation_steps=2),
}


def _train(tf, constraint, make_optimizer, compiled):
    w = tf.Variable([[0.5, -1.0], [2.0, 0.25], [-0.3, 0.8]], constraint=constraint(tf))
    free = tf.Variable([1.0, -2.0])
    opt = make_optimizer(tf.keras.optimizers)

    def step(k):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(w * k)) + tf.reduce_sum(w**2) + tf.reduce_sum(free**2 * k)
        opt.apply_gradients(zip(tape.gradient(loss, [w, free]), [w, free]))

    if compiled:
        step = tf.function(step)
    out = []
    for k in range(4):
        step(tf.constant(1.0 + k))
        out += [w.numpy(), free.numpy()]
    return out


CASES = [(c, o, False) for c in sorted(CONSTRAINTS) for o in sorted(OPTIMIZERS)]
CASES += [(c, "adam", True) for c in sorted(CONSTRAINTS)]  # the projection compiled: one optimizer


@pytest.mark.parametrize(
    "constraint, optimizer, compiled", CASES, ids=[f"{c}-{o}-{'tf.function' if f else 'eager'}" for c, o, f in CASES]
)
def test_optimizers_project_by_the_variables_constraint_as_keras(constraint, optimizer, compiled):
    run_both_ok(lambda tf: _train(tf, CONSTRAINTS[constraint], OPTIMIZERS[optimizer], compiled))


def test_variable_constraint_reads_back_and_is_checked_as_tensorflow():
    for tf in (tf_real, gtf):
        assert tf.Variable(1.0).constraint is None
        fn = tf.keras.constraints.NonNeg()
        assert tf.Variable(1.0, constraint=fn).constraint is fn
        with pytest.raises(ValueError) as info:
            tf.Variable(1.0, constraint=5)
    assert str(info.value).startswith("[gradkit]")


def test_a_meta_gradient_through_a_projected_step():
    """By hand: w' = max(w - lr * 2w, 0) = max((1 - 2 lr) w, 0) with lr = 0.25 keeps the positive
    entries at w / 2 (derivative 1/2) and sets the negative ones to 0 (derivative 0); meta =
    sum(w' * d), so d meta/d w = d / 2 where w > 0 and d meta/d lr = -sum(2 w d) over them."""
    d = np.array([2.0, 3.0, 5.0], np.float32)
    w = gtf.Variable([1.0, -0.5, 0.5], constraint=gtf.keras.constraints.NonNeg())
    lr = gtf.Variable(0.25)
    opt = gtf.keras.optimizers.SGD(0.1)
    opt.learning_rate = lr
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            loss = gtf.reduce_sum(w**2)
        opt.apply_gradients([(inner.gradient(loss, w), w)])
        meta = gtf.reduce_sum(w * gtf.constant(d))
    dw, dlr = outer.gradient(meta, [w, lr])
    np.testing.assert_allclose(w.numpy(), [0.5, 0.0, 0.25])
    np.testing.assert_allclose(np.asarray(dw), [1.0, 0.0, 2.5])
    np.testing.assert_allclose(float(dlr), -(2 * 1.0 * 2.0 + 2 * 0.5 * 5.0))


@pytest.mark.parametrize(
    "constraint",
    [lambda w: w[:1], lambda w: 1 / 0],
    ids=["wrong_shape", "raises"],
)
@pytest.mark.parametrize("accumulation", [None, 2], ids=["", "accumulating"])
def test_a_failing_constraint_leaves_every_variable_unchanged(constraint, accumulation):
    w = gtf.Variable([1.0, -0.5], constraint=constraint)
    other = gtf.Variable([2.0])
    opt = gtf.keras.optimizers.Adam(0.1, gradient_accumulation_steps=accumulation)
    opt.build([other, w])
    before = [v.numpy() for v in [w, other, *opt.variables]]
    with pytest.raises((ValueError, ZeroDivisionError)):
        opt.apply_gradients([(gtf.constant([1.0]), other), (gtf.constant([1.0, 1.0]), w)])
    after = [v.numpy() for v in [w, other, *opt.variables]]
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
