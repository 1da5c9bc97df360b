"""``tf.function``: arguments are gk.Tensors inside (a tape records their operators), nested
arguments and input_signature, one compilation for same-shaped calls, and a clear error for
Python control flow on tensor values (there is no autograph)."""

import jax
import numpy as np
import pytest
from _oracles import count_compiles

import gradkit.tf as gtf
from gradkit._errors import GradkitTypeError


def p_watch_argument_python_operators(tf):
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x + x**3 - 2.0 / (x + 1.0)
        return t.gradient(y, x)

    return [f(tf.constant(3.0)), f(tf.constant(-0.5))]


def p_watch_argument_indexing_and_nested_structures(tf):
    @tf.function
    def f(inputs, scale):
        x, y = inputs["x"], inputs["pair"][1]
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, y])
            z = tf.reduce_sum(x[0] * x[1:] ** 2) * y * scale
        return t.gradient(z, {"x": x, "y": y})

    return f({"x": tf.constant([1.0, 2.0, 3.0]), "pair": [tf.constant(0.0), tf.constant(2.0)]}, 1.5)


def p_input_signature(tf):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32)])
    def f(x, s):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(x * x) * s
        return t.gradient(y, x)

    return [f([1, 2], 2.0), f(tf.constant([1.0, 2.0, 3.0]), tf.constant(0.5))]


def p_input_signature_rejects_another_dtype(tf):
    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
    def f(x):
        return x * 2.0

    return f(tf.constant([1, 2]))


def p_input_signature_wrong_number_of_arguments(tf):
    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(x):
        return x * 2.0

    return f(tf.constant(1.0), tf.constant(2.0))


def p_variable_and_watched_argument(tf):
    v = tf.Variable(2.0)

    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = v * x * x
        return t.gradient(y, [v, x])

    return f(tf.constant(3.0))


def p_tensors_recorded_eagerly_read_first_inside_a_function(tf):
    # A tensor left uncomputed (an intermediate of a gradient's target) is closed over by a
    # function; a tape recorded eagerly is differentiated inside a function. Both are read
    # again afterwards.
    w = tf.Variable([0.4, -0.6, 0.2])
    with tf.GradientTape(persistent=True) as t:
        y = tf.tanh(w) * 3.0
        y_target = y * 1.0  # the gradient's target: y itself stays uncomputed
        loss = tf.reduce_sum(y * w)
    g = t.gradient(y_target, w)

    @tf.function
    def mean_of_y():
        return tf.reduce_mean(y)

    @tf.function
    def gradient_of_loss():
        return t.gradient(loss, w)

    return [g, mean_of_y(), gradient_of_loss(), y, loss]


def p_a_gradients_target_read_first_inside_cond_and_while_loop_bodies(tf):
    # The branch and the loop body are traces of their own inside the function's: a tensor
    # left uncomputed (an intermediate of a gradient's target) is read first there and again
    # after them.
    w = tf.Variable([0.4, -0.6, 0.2])

    @tf.function
    def step(flag):
        with tf.GradientTape() as t:
            y = tf.tanh(w) * 3.0
            y_target = y * 1.0  # the gradient's target: y itself stays uncomputed
        g = t.gradient(y_target, w)
        z = tf.cond(flag > 0, lambda: tf.reduce_sum(y) * 2.0, lambda: tf.reduce_sum(y))
        _, total = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + y), (tf.constant(0), tf.zeros(3)))
        return g, z, total, y * 1.0

    return [step(tf.constant(1.0)), step(tf.constant(-1.0))]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_operators_on_arguments_are_recorded():
    # Oracle: d/dx (x*x + x**3) = 2x + 3x**2, by hand.
    @gtf.function
    def f(x):
        with gtf.GradientTape() as t:
            t.watch(x)
            y = x * x + x**3
        return t.gradient(y, x)

    np.testing.assert_allclose(f(gtf.constant([3.0, -1.0])).numpy(), [2 * 3 + 27, -2 + 3], rtol=1e-6)


def test_same_shaped_calls_compile_once():
    @gtf.function
    def f(inputs):
        x = inputs["x"]
        with gtf.GradientTape() as t:
            t.watch(x)
            y = gtf.reduce_sum(x * x * inputs["w"][0])
        return t.gradient(y, x)

    def call(i):
        return f({"x": gtf.constant([1.0, 2.0]) * i, "w": [gtf.constant(float(i))]})

    call(1).numpy()  # the first call compiles
    assert count_compiles(lambda: [call(i).numpy() for i in range(2, 6)]) == 0
    assert f.trace_count == 1
    np.testing.assert_allclose(call(3).numpy(), 2 * np.array([3.0, 6.0]) * 3.0)


@pytest.mark.parametrize(
    "body",
    [
        "if tf.reduce_sum(x) > 0:\n        return x * 2.0\n    return -x",
        "s = x\n    for _ in tf.range(n):\n        s = s + x\n    return s",
        "return x * float(x[0])",
    ],
    ids=["if", "for_range", "float"],
)
def test_python_control_flow_on_tensors_raises_a_gradkit_error(body):
    namespace = {"tf": gtf}
    exec(f"def f(x, n):\n    {body}\n", namespace)
    f = gtf.function(namespace["f"])
    # (an op that needed the value, tf.range's size, is named first)
    first = r"^\[gradkit\] f(: tf\.\w+ needed a tensor's value| needed the value of a tensor) while being traced"
    with pytest.raises(GradkitTypeError, match=first) as e:
        f(gtf.constant([1.0, 2.0]), gtf.constant(3))
    assert "no autograph" in str(e.value) and "tf.where" in str(e.value)
    tracer_errors = (
        jax.errors.ConcretizationTypeError,
        jax.errors.TracerArrayConversionError,
        jax.errors.TracerIntegerConversionError,
    )
    cause = e.value.__cause__
    # On Python 3.10 jax puts a jax.errors.SimplifiedTraceback between an error raised through
    # its API and that error's cause.
    simplified = getattr(jax.errors, "SimplifiedTraceback", None)
    if simplified is not None and isinstance(cause, simplified):
        cause = cause.__cause__
    assert isinstance(cause, tracer_errors)
    # Without tf.function the same code runs eagerly, as in TensorFlow.
    namespace["f"](gtf.constant([1.0, 2.0]), gtf.constant(3))
