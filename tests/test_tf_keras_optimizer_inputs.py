"""What ``apply_gradients`` refuses (a gradient of another shape, a pair without a Variable, a
Variable in two pairs), each with a [gradkit] error and no Variable or optimizer state changed; and
a schedule's rate read from an optimizer or called directly is a tensor, as in Keras.

Oracles: the Variables' values before the call, the schedule's formula by hand, and TensorFlow
where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf


def _optimizer_and_variables():
    opt = gtf.keras.optimizers.Adam(0.1)
    a, b = gtf.Variable([1.0, 2.0, 3.0]), gtf.Variable([[1.0, 2.0]])
    opt.build([a, b])
    return opt, a, b


def _unchanged(opt, a, b):
    assert a.numpy().tolist() == [1.0, 2.0, 3.0]
    assert b.numpy().tolist() == [[1.0, 2.0]]
    assert int(opt.iterations) == 0
    assert all(float(np.abs(v.numpy()).sum()) == 0 for v in opt.variables[2:])  # Adam's moments


@pytest.mark.parametrize("gradient", [np.ones(4, "float32"), np.ones((), "float32"), np.ones((1,), "float32")])
def test_a_gradient_of_another_shape_is_refused_and_nothing_changes(gradient):
    opt, a, b = _optimizer_and_variables()
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*shape"):
        opt.apply_gradients([(gtf.ones((1, 2)), b), (gtf.constant(gradient), a)])
    _unchanged(opt, a, b)


def test_the_shape_error_is_also_a_value_error_inside_a_tf_function():
    opt, a, b = _optimizer_and_variables()
    step = gtf.function(lambda: opt.apply_gradients([(gtf.ones((2,)), a)]))
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        step()
    _unchanged(opt, a, b)


def test_a_pair_without_a_variable_is_refused():
    opt, a, b = _optimizer_and_variables()
    with pytest.raises(TypeError, match=r"\[gradkit\].*not a tf.Variable"):
        opt.apply_gradients([(gtf.ones((3,)), a), (gtf.ones((3,)), gtf.ones((3,)))])
    _unchanged(opt, a, b)


def test_a_variable_in_two_pairs_is_refused_rather_than_losing_a_gradient():
    opt, a, b = _optimizer_and_variables()
    with pytest.raises(ValueError, match=r"\[gradkit\].*more than one pair"):
        opt.apply_gradients([(gtf.ones((3,)), a), (gtf.ones((3,)), a)])
    _unchanged(opt, a, b)
    # A second pair whose gradient is None is only skipped, as in Keras.
    with pytest.warns(UserWarning):
        opt.apply_gradients([(gtf.ones((3,)), a), (None, a)])
    assert int(opt.iterations) == 1


def test_a_schedules_rate_is_a_tensor():
    schedule = gtf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    opt = gtf.keras.optimizers.SGD(schedule)
    opt.iterations.assign(2)
    assert gtf.is_tensor(opt.learning_rate)
    np.testing.assert_allclose(opt.learning_rate.numpy(), 0.1 * 0.5 ** (2 / 2), rtol=1e-6)
    np.testing.assert_allclose(schedule(3).numpy(), 0.1 * 0.5 ** (3 / 2), rtol=1e-6)


def test_a_user_schedule_is_given_the_step_counter():
    class Halving(gtf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            self.seen = step.numpy()  # Keras passes the optimizer's iterations Variable
            return 1.0 / (1.0 + gtf.cast(step, gtf.float32))

    schedule = Halving()
    opt = gtf.keras.optimizers.SGD(schedule)
    w = gtf.Variable([1.0])
    opt.apply_gradients([(gtf.constant([1.0]), w)])
    opt.apply_gradients([(gtf.constant([1.0]), w)])
    assert int(schedule.seen) == 1
    np.testing.assert_allclose(w.numpy(), [1.0 - 1.0 - 0.5], rtol=1e-6)


def test_tensorflow_refuses_the_shape_too():
    tf = pytest.importorskip("tensorflow")
    a = tf.Variable([1.0, 2.0, 3.0])
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.keras.optimizers.SGD(0.1).apply_gradients([(tf.ones(4), a)])


def test_a_variable_the_optimizer_was_not_built_with_is_refused_and_nothing_changes():
    opt, a, b = _optimizer_and_variables()
    stranger = gtf.Variable([5.0])
    with pytest.raises(ValueError, match=r"\[gradkit\] Unknown variable.*new optimizer"):
        opt.apply_gradients([(gtf.ones((3,)), a), (gtf.ones((1,)), stranger)])
    _unchanged(opt, a, b)
    assert stranger.numpy().tolist() == [5.0]
    assert len(opt.variables) == 1 + 1 + 2 * 2  # iterations, learning rate, Adam's two slots of a and b


@pytest.mark.parametrize("second", ["both", "other"])
def test_tensorflow_refuses_a_variable_built_after_the_first_step_too(second):
    """The same program under both modules: the first step builds the optimizer with v1 only."""
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    def program(tf):
        v1, v2 = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
        opt = tf.keras.optimizers.Adam(0.1)
        opt.apply_gradients([(tf.constant([1.0, 1.0]), v1)])
        pairs = [(tf.constant([2.0]), v2)]
        if second == "both":
            pairs.insert(0, (tf.constant([1.0, 1.0]), v1))
        return opt.apply_gradients(pairs)

    assert isinstance(run_both(program), ValueError)
