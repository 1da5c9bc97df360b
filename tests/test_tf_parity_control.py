"""TensorFlow's comparison, logical and control-flow ops (cond, while_loop, map_fn, scan, foldl,
boolean_mask, ...) in gradkit.tf: values and gradients against real TensorFlow, eagerly and
inside tf.function."""

import collections
import re

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

X = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]], np.float32)
_P = collections.namedtuple("_P", "a b")


def _ok(program):
    out = run_both(program)
    assert not isinstance(out, Exception), out


def _with_gradient(f):
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as tape:
            out = f(tf, x)
            loss = tf.reduce_sum(out * out) if out.dtype.name.startswith("float") else None
        return [out, None if loss is None else tape.gradient(loss, x)]

    return program


CASES = {
    "comparisons": lambda tf, x: (
        x * tf.cast(tf.equal(x, 0.3), tf.float32)
        + x * tf.cast(tf.not_equal(x, 0.3), tf.float32)
        + x * tf.cast(tf.greater(x, 0.1), tf.float32)
        + x * tf.cast(tf.greater_equal(x, 0.1), tf.float32)
        + x * tf.cast(tf.less(x, 0.1), tf.float32)
        + x * tf.cast(tf.less_equal(x, 0.1), tf.float32)
    ),
    "logical": lambda tf, x: (
        x * tf.cast(tf.logical_and(x > 0, x < 1), tf.float32)
        + x * tf.cast(tf.logical_or(x > 1, x < -1), tf.float32)
        + x * tf.cast(tf.logical_not(x > 0), tf.float32)
        + x * tf.cast(tf.math.logical_xor(x > 0, x > 0.5), tf.float32)
    ),
    "reduce_logsumexp": lambda tf, x: tf.reduce_logsumexp(x, axis=1),
    "argmin_argmax": lambda tf, x: tf.cast(tf.argmin(x, axis=1) + tf.argmax(x, axis=0)[:2], tf.float32) * x[:, 0],
    "division_negation": lambda tf, x: tf.truediv(x, 2.0) + tf.realdiv(1.0, x) + tf.negative(x),
    "math_extras": lambda tf, x: tf.math.softmax(x) + tf.math.log_softmax(x, axis=0) + tf.math.expm1(x),
    "cond": lambda tf, x: tf.cond(tf.reduce_sum(x) > 0, lambda: x * x, lambda: -x),
    "cond_false": lambda tf, x: tf.cond(tf.reduce_sum(x) < 0, lambda: x * x, lambda: tf.sin(x)),
    "while_loop": lambda tf, x: tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x + 1.0), (0, x))[1],
    "while_loop_max_iterations": lambda tf, x: tf.while_loop(
        lambda y: tf.reduce_sum(y) < 100.0, lambda y: [y * 2.0 + x], [x * 1.0], maximum_iterations=2
    )[0],
    "map_fn": lambda tf, x: tf.map_fn(lambda row: tf.reduce_sum(row * row) * row, x),
    "map_fn_tuple": lambda tf, x: tf.map_fn(lambda r: r[0] * r[1], (x, x + 1.0), fn_output_signature=tf.float32),
    "scan": lambda tf, x: tf.scan(lambda a, row: a * row + 1.0, x, initializer=tf.ones([3])),
    "scan_no_initializer": lambda tf, x: tf.scan(lambda a, row: a + row * row, x),
    "foldl": lambda tf, x: tf.foldl(lambda a, row: a * row, x, initializer=tf.ones([3])),
    "map_fn_nested": lambda tf, x: tf.map_fn(lambda r: r[0] * r[1][0], (x, (x * 2.0,)), fn_output_signature=tf.float32),
    "map_fn_dict": lambda tf, x: tf.map_fn(lambda d: d["a"] * 2.0, {"a": x}, fn_output_signature=tf.float32),
    "scan_nested": lambda tf, x: tf.scan(
        lambda a, r: (a[0] + r, (a[1][0] * r,)), x, initializer=(tf.zeros([3]), (tf.ones([3]),))
    )[1][0],
    "while_loop_namedtuple": lambda tf, x: (
        tf.while_loop(lambda a, b: a < 3, lambda a, b: _P(a + 1, b * x), _P(tf.constant(0), x)).b
    ),
    "repeat_broadcast_and_tensor": lambda tf, x: tf.repeat(x, [2], axis=0) + tf.repeat(x, tf.constant([2, 2]), axis=0),
    "boolean_mask": lambda tf, x: tf.boolean_mask(x, x > 0),
    "boolean_mask_rows": lambda tf, x: tf.boolean_mask(x, [True, False]) * 2.0,
    "boolean_mask_axis": lambda tf, x: tf.boolean_mask(x, [True, False, True], axis=1),
    "repeat": lambda tf, x: tf.repeat(x, 2, axis=0)[1:3] + tf.repeat(x, [1, 2, 1], axis=1)[:, :3],
    "repeat_flat": lambda tf, x: tf.repeat(x, 2),
    "roll": lambda tf, x: tf.roll(x, 1, axis=1) + tf.roll(x, shift=[1, -1], axis=[0, 1]),
    "searchsorted": lambda tf, x: tf.cast(tf.searchsorted(tf.sort(x), x), tf.float32) * x,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    _ok(_with_gradient(CASES[name]))


@pytest.mark.parametrize(
    "name", ["cond", "cond_false", "while_loop", "while_loop_max_iterations", "map_fn", "scan", "boolean_mask_rows"]
)
def test_inside_tf_function_match_tensorflow(name):
    f = CASES[name]

    def program(tf):
        x = tf.Variable(X)
        forward = tf.function(lambda: f(tf, x))
        with tf.GradientTape() as tape:
            out = forward()
            loss = tf.reduce_sum(out * out)
        return [out, tape.gradient(loss, x)]

    _ok(program)


def test_a_traced_cond_under_a_tape_inside_tf_function_is_a_clear_error():
    import gradkit.tf as gtf
    from gradkit import GradkitError

    x = gtf.Variable(X)

    @gtf.function
    def step():
        with gtf.GradientTape() as tape:
            out = gtf.cond(gtf.reduce_sum(x) > 0, lambda: x * x, lambda: -x)
        return tape.gradient(out, x)

    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf.cond with a traced condition .* outside the tf.function"):
        step()


@pytest.mark.parametrize("mask", [[True, False, True], [[True, False], [True, True]], True])
def test_a_boolean_mask_of_the_wrong_shape_raises_as_in_tensorflow(mask):
    assert isinstance(run_both(lambda tf: tf.boolean_mask(tf.constant(X), mask)), ValueError)


def test_a_while_loop_body_of_another_structure_raises_as_in_tensorflow():
    def program(tf):
        x = tf.constant(X)
        return tf.while_loop(lambda y: tf.reduce_sum(y) < 9.0, lambda y: y * 2.0, [x])

    assert isinstance(run_both(program), ValueError)


def test_is_tensor_and_executing_eagerly_match_tensorflow():
    def program(tf):
        seen = []

        @tf.function
        def traced(x):
            seen.append(tf.executing_eagerly())
            return x * 2.0

        traced(tf.constant(1.0))
        facts = [tf.is_tensor(tf.constant(1.0)), tf.is_tensor(tf.Variable(1.0)), tf.is_tensor(1.0)]
        return [np.array(facts + [tf.executing_eagerly()] + seen[:1])]

    _ok(program)


def test_print_prints_values(capsys):
    import gradkit.tf as gtf

    gtf.print("loss", gtf.constant([1.0, 2.0]), output_stream=__import__("sys").stdout)
    assert capsys.readouterr().out == "loss [1 2]\n"  # TensorFlow's summary: 2.0 prints as 2


def _prints(tf):
    import sys

    @tf.function
    def traced(x):
        tf.print("in", x, {"a": x * 2}, summarize=1)
        return x

    traced(tf.constant([1.0, 2.0, 3.0]))
    tf.print(tf.range(20))
    tf.print(tf.constant([1.5, 2.25, 3.0]), 1.0, tf.constant(1 / 3), tf.constant(123456789.0), tf.constant(1e-8))
    tf.print(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([True, False]))
    tf.print("a", 1, 2.5, [1, 2], {"k": tf.constant(1)}, (tf.constant(1.5),))
    tf.print(tf.reshape(tf.range(64), (8, 8)))
    tf.print(tf.reshape(tf.range(24), (2, 3, 4)))
    tf.print(tf.range(20), summarize=-1)
    tf.print(tf.range(20), summarize=2, output_stream=sys.stdout)
    tf.print(
        tf.constant(np.nan), tf.constant([-np.inf]), tf.constant(np.float16(0.1)), tf.constant([1 + 2j], tf.complex64)
    )


def test_print_writes_what_tensorflow_writes(capfd):
    import gradkit.tf as gtf

    _prints(tf_real)
    expected = capfd.readouterr()
    _prints(gtf)
    got = capfd.readouterr()
    assert (got.out, _printed(got.err)) == (expected.out, _printed(expected.err))


def _printed(err: str) -> str:
    # TensorFlow's runtime logs from its own threads (absl's "W0000 00:00:..." lines, an
    # iterator's end of sequence) can land in any test's stderr: what tf.print wrote is the rest.
    return "".join(line for line in err.splitlines(keepends=True) if not re.match(r"[IWEF]\d{4} ", line))
