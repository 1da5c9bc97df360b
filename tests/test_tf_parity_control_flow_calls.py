"""How tf.while_loop and tf.switch_case take their arguments, as TensorFlow does: loop_vars a
sequence, branch_index a tensor, and a body's lone result for a one-element loop_vars inside
tf.function, also while a tape records the call."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit as gk  # noqa: E402
import gradkit.tf as gtf  # noqa: E402

X = np.array([0.46, -1.15, 1.35], np.float32)
W = np.array([-0.74, 0.2, 0.5], np.float32)


@pytest.mark.parametrize("wrap", ["eager", "function"])
@pytest.mark.parametrize(
    "loop_vars",
    [
        lambda tf, x: x,
        lambda tf, x: x[0],
        lambda tf, x: tf.Variable(x),
        lambda tf, x: 0.5,
    ],
    ids=["vector", "scalar", "variable", "number"],
)
def test_loop_vars_that_are_not_a_sequence_raise_as_in_tensorflow(loop_vars, wrap):
    def program(tf):
        x = tf.constant(X)

        def f(x):
            return tf.while_loop(
                lambda y: tf.reduce_max(y) < 100.0, lambda y: y * 2.0, loop_vars(tf, x), maximum_iterations=2
            )

        return (f if wrap == "eager" else tf.function(f))(x)

    out = run_both(program)
    assert isinstance(out, gk.GradkitError) and "tuple or list" in str(out)


@pytest.mark.parametrize("index", [1, np.int32(1), "variable"], ids=["int", "numpy", "variable"])
def test_a_switch_case_index_that_is_not_a_tensor_raises_as_in_tensorflow(index):
    def program(tf):
        x = tf.constant(X)
        i = tf.Variable(1) if isinstance(index, str) else index
        return tf.switch_case(i, [lambda: x, lambda: x * 2.0])

    out = run_both(program)
    assert isinstance(out, gk.GradkitError) and "tensor" in str(out)


@pytest.mark.parametrize("bound", [1, 3])
def test_a_lone_body_result_in_tf_function_under_a_tape_is_the_loop_variable(bound):
    """TensorFlow's graph while_loop takes a lone result for a one-element loop_vars; gradkit's
    did too, except when a tape recording the call traced it (it then raised)."""

    def program(tf):
        x = tf.constant(X)

        @tf.function
        def f(x):
            y0 = tf.cond(tf.reduce_sum(x) > -0.75, lambda: x, lambda: -x)
            return tf.while_loop(
                lambda y: tf.reduce_max(y) < 100.0, lambda y: tf.tanh(y) * x + 1.0, [y0], maximum_iterations=bound
            )[0]

        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
            loss = tf.reduce_sum(y * W)
        return [y, tape.gradient(loss, x)]

    y, dx = _ok(program)
    # NumPy: the loop runs `bound` times (the condition stays True), and its derivative by hand.
    value, d = X.astype(np.float64), np.ones(3)
    for _ in range(bound):
        value, d = np.tanh(value) * X + 1.0, (1 - np.tanh(value) ** 2) * d * X + np.tanh(value)
    np.testing.assert_allclose(y, value, rtol=1e-5)
    np.testing.assert_allclose(dx, d * W, rtol=1e-5)


def test_executing_eagerly_is_false_while_tf_function_traces_under_a_tape():
    seen = []

    @gtf.function
    def f(x):
        seen.append(gtf.executing_eagerly())
        return gtf.while_loop(lambda y: gtf.reduce_sum(y) < 10.0, lambda y: [y * 2.0], [x], maximum_iterations=2)[0]

    x = gtf.constant(X)
    with gtf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.gradient(y, x) is not None
    assert seen and not any(seen) and gtf.executing_eagerly()
