"""A Keras optimizer's learning rate is a Variable, as in Keras, and its hyperparameters read back.

Custom training loops schedule the rate with ``opt.learning_rate.assign(...)``; gradkit.tf
kept the number itself, so that raised AttributeError ('float' object has no attribute
'assign'), a callable rate was not called, and ``opt.beta_1`` and friends did not exist.
"""

import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402


def _step(tf, opt, w):
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(w**2)
    opt.apply_gradients([(t.gradient(loss, w), w)])
    return w.numpy()


def test_the_rate_is_a_variable_to_assign_or_set():
    def program(tf):
        opt, w = tf.keras.optimizers.SGD(learning_rate=0.5), tf.Variable([1.0, 2.0])
        opt.learning_rate.assign(0.1)
        first = _step(tf, opt, w)
        opt.learning_rate = 0.01
        return [first, _step(tf, opt, w), opt.learning_rate, opt.learning_rate.numpy(), opt.learning_rate.trainable]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_a_new_rate_is_read_by_a_compiled_step():
    def program(tf):
        opt, w = tf.keras.optimizers.Adam(0.1), tf.Variable([1.0, 2.0])

        @tf.function
        def step():
            with tf.GradientTape() as t:
                loss = tf.reduce_sum(w**2)
            opt.apply_gradients([(t.gradient(loss, w), w)])
            return loss

        out = [step()]
        opt.learning_rate.assign(0.01)
        out += [step(), w.numpy()]
        opt.learning_rate = 0.5
        return out + [step(), w.numpy()]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_a_callable_rate_is_called_at_each_step():
    def program(tf):
        rate = [0.5]
        opt, w = tf.keras.optimizers.SGD(learning_rate=lambda: rate[0]), tf.Variable([1.0, 2.0])
        first = _step(tf, opt, w)
        rate[0] = 0.1
        return [first, _step(tf, opt, w)]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_hyperparameters_read_back_as_in_keras():
    def program(tf):
        adam, sgd = tf.keras.optimizers.Adam(), tf.keras.optimizers.SGD(momentum=0.5, nesterov=True)
        return [adam.learning_rate, adam.beta_1, adam.beta_2, adam.epsilon, adam.amsgrad, sgd.momentum, sgd.nesterov]

    out = run_both(program)
    assert not isinstance(out, Exception), out
