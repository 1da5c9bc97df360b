"""tf.case, tf.switch_case and tf.foldr: values, gradients and errors against real TensorFlow,
eagerly and inside tf.function (a traced choice there is jax.lax.switch), and through a
Variable assignment against a pure-JAX rewrite."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

X = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]], np.float32)


def _branches(tf, x):
    return [lambda: x * x, lambda: tf.sin(x), lambda: x * 3.0]


CASES = {
    "switch_0": lambda tf, x, i: tf.switch_case(tf.constant(0), _branches(tf, x)),
    "switch_2": lambda tf, x, i: tf.switch_case(i + 1, _branches(tf, x)),
    "switch_out_of_range_default": lambda tf, x, i: tf.switch_case(tf.constant(7), _branches(tf, x), lambda: -x),
    "switch_negative_last": lambda tf, x, i: tf.switch_case(tf.constant(-1), _branches(tf, x)),
    "switch_dict": lambda tf, x, i: tf.switch_case(i, {1: lambda: x + 1.0, 0: lambda: tf.exp(x)}),
    "switch_pairs": lambda tf, x, i: tf.switch_case(i - 1, [(1, lambda: x), (0, lambda: tf.tanh(x))]),
    "case_first_true": lambda tf, x, i: tf.case(
        [(tf.reduce_sum(x) > 100.0, lambda: x), (tf.reduce_sum(x) > 0.0, lambda: x * x), (i > 0, lambda: -x)]
    ),
    "case_default": lambda tf, x, i: tf.case([(tf.reduce_sum(x) > 100.0, lambda: x)], default=lambda: tf.sin(x)),
    "case_exclusive": lambda tf, x, i: tf.case([(i < 0, lambda: x), (i > 0, lambda: x * 2.0)], exclusive=True),
    "foldr": lambda tf, x, i: tf.foldr(lambda a, row: a * row + 1.0, x, initializer=tf.ones([3])),
    "foldr_no_initializer": lambda tf, x, i: tf.foldr(lambda a, row: a * 2.0 - row, x),
}


def _program(name, traced=False):
    def program(tf):
        x = tf.Variable(X)

        def f(i):
            return CASES[name](tf, x, i)

        if traced:
            f = tf.function(f)
        with tf.GradientTape() as tape:
            y = f(tf.constant(1))
            loss = tf.reduce_sum(y * y)
        return [y, tape.gradient(loss, x)]

    return program


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    _ok(_program(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_inside_tf_function_match_tensorflow(name):
    _ok(_program(name, traced=True))


def test_a_traced_index_is_lax_switch_and_picks_per_call():
    calls = []

    @gtf.function
    def f(i, x):
        calls.append(1)
        return gtf.switch_case(i, [lambda: x, lambda: x * 2.0], default=lambda: -x)

    x = gtf.constant(3.0)
    assert [float(f(gtf.constant(k), x)) for k in (0, 1, 5, -2)] == [3.0, 6.0, -3.0, -3.0]
    assert len(calls) == 1  # one trace: the index is an argument of the compiled program


def test_the_gradient_through_an_assigned_variable_is_exact():
    def pure(source):
        v = jnp.tanh(source)
        acc = jnp.ones(3)
        for row in v[::-1]:
            acc = acc * row + 1.0
        return jnp.sum(jnp.sin(v) * 2.0) + jnp.sum(acc)

    source, v = gtf.Variable(X), gtf.Variable(np.zeros_like(X))
    with gtf.GradientTape() as tape:
        v.assign(gtf.tanh(source))
        picked = gtf.switch_case(gtf.constant(1), [lambda: v * v, lambda: gtf.sin(v) * 2.0])
        chosen = gtf.case([(gtf.reduce_sum(v) > 100.0, lambda: v)], default=lambda: picked)
        loss = gtf.reduce_sum(chosen) + gtf.reduce_sum(gtf.foldr(lambda a, r: a * r + 1.0, v, gtf.ones([3])))
    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(X)), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, source).numpy(), jax.grad(pure)(jnp.asarray(X)), rtol=1e-5)


BAD = {
    "case_none_true_no_default": lambda tf: tf.case([(tf.constant(False), lambda: tf.constant(1.0))]),
    "switch_float_index": lambda tf: tf.switch_case(tf.constant(1.0), [lambda: tf.constant(1.0)]),
    "switch_bad_keys": lambda tf: tf.switch_case(
        tf.constant(0), {0: lambda: tf.constant(1.0), 2: lambda: tf.constant(2.0)}
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf\.(case|switch_case)"):
        BAD[name](gtf)


@pytest.mark.parametrize(
    "x,exclusive,with_default",
    [
        (2.0, True, True),
        (6.0, True, True),
        (9.0, True, True),
        (9.0, False, False),
        (2.0, False, False),
        (6.0, True, False),
        (2.0, True, False),  # no default: the last pair is it, and exclusive counts the others only
    ],
)
def test_a_traced_case_checks_exclusive_and_a_missing_default_when_it_runs(x, exclusive, with_default):
    def program(tf):
        v = tf.Variable(3.0)

        @tf.function
        def f(x):
            default = (lambda: x) if with_default else None
            return tf.case([(x < 5, lambda: x * 10), (x < 7, lambda: x * 100)], default=default, exclusive=exclusive)

        try:
            return f(tf.constant(x))
        finally:
            assert float(v.numpy()) == 3.0

    out = run_both(program)
    expect_error = (exclusive and x < 5 and with_default) or (not with_default and x >= 7)
    assert isinstance(out, Exception) == expect_error, out
    if expect_error:
        assert str(out).startswith("[gradkit] tf.case:"), out
