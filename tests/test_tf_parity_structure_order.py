"""Structures in, structures out, against real TensorFlow: a tape's gradients, Jacobians and
forward-mode JVPs of a dict come back with the caller's key order (zipping them with the dict of
parameters pairs each gradient with its own Variable), tf.custom_gradient takes nested
arguments as they came, with one gradient per tensor in them; and a watch inside the tape's own
stop_recording is ignored, as there."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import programs, run_program  # noqa: E402

import gradkit as gk  # noqa: E402


def p_gradient_of_a_dict_keeps_its_key_order(tf):
    params = {"w": tf.Variable(2.0), "b": tf.Variable(10.0), "a": tf.Variable([1.0, 2.0])}
    with tf.GradientTape() as tape:
        loss = params["w"] * 3.0 + params["b"] * 0.5 + tf.reduce_sum(params["a"] ** 2)
    grads = tape.gradient(loss, params)
    for g, v in zip(grads.values(), params.values()):
        v.assign_sub(g)
    return list(grads), grads, [v.numpy() for v in params.values()]


def p_gradient_of_nested_dicts_in_a_list(tf):
    x, y = tf.Variable(1.0), tf.Variable(4.0)
    with tf.GradientTape() as tape:
        loss = x * y * y
    grads = tape.gradient(loss, [{"y": y, "x": x}, {"z": x}])
    return [list(d) for d in grads], grads


def p_jacobian_of_a_dict_keeps_its_key_order(tf):
    z, a = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = z * a
    jac = tape.jacobian(y, {"z": z, "a": a})
    return list(jac), jac


def p_forward_accumulator_jvp_of_a_dict(tf):
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as acc:
        out = {"sq": x * x, "lin": 3.0 * x}
    jvp = acc.jvp(out)
    return list(jvp), jvp


def _through(tf, call, a, b, extra=()):
    """``call(a, b)`` under a tape watching the constants ``a`` and ``b``: its gradients with
    respect to them (and to ``extra``)."""
    a, b = tf.constant(a), tf.constant(b)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = call(a, b)
    return y, tape.gradient(y, [a, b, *extra])


def p_custom_gradient_takes_a_list(tf):
    @tf.custom_gradient
    def f(xs):
        def grad(dy):
            return [dy * xs[1] * tf.ones_like(xs[0]), tf.reduce_sum(dy * xs[0])]

        return tf.reduce_sum(xs[0]) * xs[1], grad

    return _through(tf, lambda a, b: f([a, b]), [1.0, 2.0], 3.0)


def p_custom_gradient_takes_a_dict(tf):
    @tf.custom_gradient
    def f(d):
        def grad(dy):
            return {"z": dy * 2.0 * tf.ones_like(d["z"]), "a": dy * 3.0}

        return tf.reduce_sum(d["z"]) * 2.0 + d["a"] * 3.0, grad

    return _through(tf, lambda a, b: f({"z": a, "a": b}), [1.0, 2.0], 3.0)


def p_custom_gradient_grads_nested_in_a_list(tf):
    @tf.custom_gradient
    def f(x, y):
        def grad(dy):
            return [[dy * y, dy * x]]

        return x * y, grad

    return _through(tf, f, 1.0, 3.0)


def p_custom_gradient_one_stacked_gradient_for_two_inputs_refuses(tf):
    @tf.custom_gradient
    def f(x, y):
        def grad(dy):
            return tf.stack([dy, dy])

        return x * y, grad

    return _through(tf, f, 1.0, 3.0)


def p_custom_gradient_tuple_with_variables_and_none(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(xs):
        def grad(dy, variables=None):
            return [dy * v, None], [dy * xs[0] * 10.0]

        return xs[0] * v + xs[1], grad

    return _through(tf, lambda a, b: f((a, b)), 1.0, 3.0, extra=[v])


def p_custom_gradient_list_inside_function(tf):
    @tf.custom_gradient
    def f(xs):
        def grad(dy):
            return [dy * 2.0, dy * 3.0]

        return xs[0] * 2.0 + xs[1] * 3.0, grad

    return _through(tf, tf.function(lambda a, b: f([a, b])), 1.0, 3.0)


def p_watch_inside_stop_recording_is_ignored(tf):
    x, v = tf.constant(2.0), tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        with tape.stop_recording():
            tape.watch(x)
            tape.watch(v)
        y = x * x + v * v
    return tape.gradient(y, [x, v]), len(tape.watched_variables())


@pytest.mark.parametrize("program", programs(globals()), ids=lambda p: p.__name__)
def test_structures_match_tensorflow(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome


def test_gradkit_tape_keeps_a_dicts_key_order():
    params = {"w": gk.Variable(2.0), "b": gk.Variable(10.0)}
    with gk.GradientTape() as tape:
        loss = params["w"] * 3.0 + params["b"] * params["b"]
    grads = tape.gradient(loss, params)
    assert list(grads) == ["w", "b"]
    np.testing.assert_allclose([float(grads["w"]), float(grads["b"])], [3.0, 20.0])  # d/dw 3w, d/db b^2
