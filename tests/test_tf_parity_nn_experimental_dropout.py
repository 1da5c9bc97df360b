"""``tf.nn.experimental.general_dropout`` and ``stateless_dropout`` against real TensorFlow:
given the same uniform draws (a deterministic sampler) the outputs and gradients are TensorFlow's;
a stateless mask repeats for its seed and drops about ``rate`` of the entries."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.arange(1, 13, dtype="float32").reshape(3, 4)
DRAWS = np.linspace(0, 0.99, 12, dtype="float32").reshape(3, 4)


def _sampler(tf):
    def sample(shape, dtype):
        return tf.constant(DRAWS[tuple(slice(0, d) for d in shape)], dtype=dtype)

    return sample


def p_general_dropout(tf):
    return tf.nn.experimental.general_dropout(X, 0.4, _sampler(tf))


def p_general_dropout_noise_shape(tf):
    return tf.nn.experimental.general_dropout(X, 0.4, _sampler(tf), noise_shape=[3, 1])


def p_general_dropout_gradient_with_a_tensor_rate(tf):
    x = tf.Variable(X)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.experimental.general_dropout(x, tf.constant(0.4), _sampler(tf)) ** 2)
    return [y, tape.gradient(y, x)]


def p_rate_zero_returns_x(tf):
    return tf.nn.experimental.stateless_dropout(X, 0.0, seed=[1, 2])


def p_stateless_dropout_refuses_rate_one(tf):
    return tf.nn.experimental.stateless_dropout(X, 1.0, seed=[1, 2])


def p_general_dropout_refuses_integers(tf):
    return tf.nn.experimental.general_dropout(X.astype("int32"), 0.5, _sampler(tf))


def test_stateless_dropout_repeats_for_its_seed():
    x = np.ones((200, 100), "float32")
    first = gtf.nn.experimental.stateless_dropout(x, 0.3, seed=[3, 4]).numpy()
    again = gtf.nn.experimental.stateless_dropout(x, 0.3, seed=[3, 4]).numpy()
    other = gtf.nn.experimental.stateless_dropout(x, 0.3, seed=[4, 3]).numpy()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert set(np.unique(first).tolist()) == {0.0, np.float32(1 / 0.7)}
    assert abs((first == 0).mean() - 0.3) < 0.02
    compiled = gtf.function(lambda v: gtf.nn.experimental.stateless_dropout(v, 0.3, seed=[3, 4]))
    np.testing.assert_array_equal(compiled(x).numpy(), first)


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
