"""A Variable's explicit reads are tensors of their own, and tf.function calls as TensorFlow
binds them: ``tape.gradient(loss, v.read_value())`` (or of ``tf.convert_to_tensor(v)``) counts
only the paths through that read; an ``input_signature`` function takes keyword arguments;
an unhashable Python argument is refused (it could change after a trace read it); ``tf.print``
of constants prints at every call; ``tf.numpy_function`` inside ``tf.function`` is refused
rather than run once at the trace; a ``custom_gradient`` whose ``grad_fn`` reads ``float(dy)``
gets its gradient. Oracles: hand derivations, and TensorFlow where it is installed."""

import dataclasses
import sys

import numpy as np
import pytest

import gradkit.tf as gtf


def _read_gradients(tf):
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        a = v.read_value()
        b = tf.convert_to_tensor(v)
        c = tf.identity(v)
        loss = a * 100.0 + b * 10.0 + c * 1000.0 + v * 1.0
    return [float(tape.gradient(loss, t)) for t in (a, b, c, v)]


def test_a_gradient_with_respect_to_one_read_counts_only_that_read():
    # loss = 100 a + 10 b + 1000 c + v, each read a tensor of its own: d/da = 100, d/db = 10,
    # d/dc = 1000, and d/dv sums every path (a hand derivation).
    assert _read_gradients(gtf) == [100.0, 10.0, 1000.0, 1111.0]


def test_read_gradients_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _read_gradients(gtf) == _read_gradients(tf)


def test_an_unrecorded_read_is_the_value():
    v = gtf.Variable([1.0, 2.0])
    np.testing.assert_array_equal(v.read_value().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(gtf.convert_to_tensor(v).numpy(), [1.0, 2.0])


def _keyword_calls(tf):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32)])
    def f(x, scale):
        return x * scale

    x, s = tf.constant([1.0, 2.0]), tf.constant(3.0)
    return [f(x=x, scale=s).numpy().tolist(), f(x, scale=s).numpy().tolist(), f(x, s).numpy().tolist()]


def test_an_input_signature_function_binds_keyword_arguments_by_name():
    assert _keyword_calls(gtf) == [[3.0, 6.0]] * 3


def test_keyword_binding_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _keyword_calls(gtf) == _keyword_calls(tf)


def test_an_input_signature_function_still_refuses_unknown_keywords():
    @gtf.function(input_signature=[gtf.TensorSpec([], gtf.float32)])
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"\[gradkit\].*input_signature"):
        f(y=gtf.constant(1.0))


@dataclasses.dataclass
class _Config:
    scale: float


def test_an_unhashable_python_argument_is_refused_as_tensorflow_refuses_it():
    @gtf.function
    def f(x, cfg):
        return x * cfg.scale

    with pytest.raises(TypeError, match=r"\[gradkit\].*_Config.*cannot be hashed.*frozen=True"):
        f(gtf.constant(1.0), _Config(2.0))
    tf = pytest.importorskip("tensorflow")

    @tf.function
    def g(x, cfg):
        return x * cfg.scale

    with pytest.raises(TypeError):
        g(tf.constant(1.0), _Config(2.0))


def test_a_frozen_dataclass_argument_is_a_python_value():
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        scale: float

    @gtf.function
    def f(x, cfg):
        return x * cfg.scale

    assert float(f(gtf.constant(1.0), Frozen(2.0))) == 2.0
    assert float(f(gtf.constant(1.0), Frozen(3.0))) == 3.0


def _printed_lines(tf, capsys):
    @tf.function
    def step(x):
        tf.print("step called", output_stream=sys.stdout)
        tf.print("const", tf.constant(7), output_stream=sys.stdout)
        return x + 1

    for i in range(3):
        step(tf.constant(float(i)))
    sys.stdout.flush()
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith(("step", "const"))]


def test_tf_print_of_constants_prints_at_every_call(capsys):
    assert _printed_lines(gtf, capsys) == ["step called", "const 7"] * 3


def test_tf_print_of_constants_matches_tensorflow(capfd):
    # capfd: TensorFlow's print writes to the file descriptor, past sys.stdout.
    tf = pytest.importorskip("tensorflow")
    assert _printed_lines(gtf, capfd) == _printed_lines(tf, capfd)


def test_numpy_function_inside_tf_function_is_refused_even_without_traced_inputs():
    calls = []

    def counter():
        calls.append(1)
        return np.float32(len(calls))

    @gtf.function
    def step(x):
        return x + gtf.numpy_function(counter, [], gtf.float32)

    with pytest.raises(TypeError, match=r"\[gradkit\] tf.numpy_function was called inside tf.function"):
        step(gtf.constant(0.0))
    assert calls == []  # not run once at the trace and baked in
    # Eagerly it runs at every call, as in TensorFlow.
    assert [float(gtf.numpy_function(counter, [], gtf.float32)) for _ in range(2)] == [1.0, 2.0]


def test_numpy_function_in_a_dataset_map_runs_per_element():
    calls = []

    def counter():
        calls.append(1)
        return np.float32(len(calls))

    ds = gtf.data.Dataset.range(3).map(lambda _: gtf.numpy_function(counter, [], gtf.float32))
    assert [float(v) for v in ds.as_numpy_iterator()] == [1.0, 2.0, 3.0]


def _branching_gradients(tf):
    @tf.custom_gradient
    def f(x):
        def grad(dy):
            return dy * 2.0 if float(dy) > 0 else dy * -1.0

        return x * 1.0, grad

    out = []
    for sign in (1.0, -1.0, 1.0):
        x = tf.constant(1.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = sign * f(x)
        out.append(float(tape.gradient(y, x)))
    return out


def test_a_grad_fn_that_branches_on_dy_runs_on_concrete_values():
    # dy = +1: grad 2 dy = 2; dy = -1: grad -dy = 1 (a hand derivation of the grad_fn).
    assert _branching_gradients(gtf) == [2.0, 1.0, 2.0]


def test_a_grad_fn_that_branches_on_dy_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _branching_gradients(gtf) == _branching_gradients(tf)
