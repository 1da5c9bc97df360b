"""``gk.jit`` closing over a tensor a tape records: the tensor is an implicit input of the
compiled program, so the tape's derivatives flow through it. Each checked against ``jax``
differentiating the hand-written rewrite (the capture written as the expression it is)."""

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

gnp = gk.numpy

X = np.array([0.3, -1.2, 0.8], np.float32)
Z = np.array([1.5, -0.5, 2.0], np.float32)


def _body(y, z):
    return jnp.sum(y * z + jnp.exp(y) * y)


def test_a_capture_carries_the_gradient_and_later_calls_trace_nothing():
    x = gk.Variable(X)
    with gk.GradientTape(persistent=True) as tape:
        y = gnp.sin(x) * 2.0

        @gk.jit
        def f(z):
            return gnp.sum(y * z + gnp.exp(y) * y)

        first = f(Z)
        traces = f.trace_count
        outs = [first, f(Z * 2.0), f(Z * 3.0)]
        total = outs[0] + outs[1] + outs[2]
    assert f.trace_count == traces  # the capture is an input: no value of it is baked in

    def rewrite(x):
        y = jnp.sin(x) * 2.0
        return sum(_body(y, Z * k) for k in (1.0, 2.0, 3.0))

    np.testing.assert_allclose(total, rewrite(X), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(total, x), jax.grad(rewrite)(X), rtol=1e-5)
    y_value = np.sin(X) * 2.0
    expected_dy = jax.grad(lambda y: sum(_body(y, Z * k) for k in (1.0, 2.0, 3.0)))(y_value)
    np.testing.assert_allclose(tape.gradient(total, y), expected_dy, rtol=1e-5)


def test_nested_tapes_give_the_second_derivative_through_a_capture():
    x = gk.Variable(0.7)
    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            y = x * x

            @gk.jit
            def f(z):
                return gnp.sin(y) * z + y * y * y

            out = f(3.0)
        g = inner.gradient(out, x)
    second = outer.gradient(g, x)

    def rewrite(x):
        y = x * x
        return jnp.sin(y) * 3.0 + y * y * y

    np.testing.assert_allclose(g, jax.grad(rewrite)(0.7), rtol=1e-5)
    np.testing.assert_allclose(second, jax.grad(jax.grad(rewrite))(0.7), rtol=1e-5)


def test_jacobian_through_a_capture():
    x = gk.Variable(X)
    with gk.GradientTape() as tape:
        y = gnp.tanh(x)

        @gk.jit
        def f(z):
            return y[:, None] * z[None, :2] + gnp.flip(y)[:, None]

        out = f(Z)

    def rewrite(x):
        y = jnp.tanh(x)
        return y[:, None] * Z[None, :2] + jnp.flip(y)[:, None]

    np.testing.assert_allclose(tape.jacobian(out, x), jax.jacrev(rewrite)(X), rtol=1e-5)


def test_a_variable_assigned_from_a_capture_inside_the_call_keeps_the_path():
    # gradkit's exact semantics: the assignment inside the call is a step of the pure function,
    # so the gradient reaches x through the capture and through the assigned Variable.
    x = gk.Variable(X)
    v = gk.Variable(np.zeros(3, np.float32))
    with gk.GradientTape() as tape:
        y = x * 3.0

        @gk.jit
        def f(z):
            v.assign(y * z)
            return gnp.sum(v * y)

        loss = f(Z) + gnp.sum(v * v)

    def rewrite(x):
        y = x * 3.0
        v = y * Z
        return jnp.sum(v * y) + jnp.sum(v * v)

    np.testing.assert_allclose(loss, rewrite(X), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, x), jax.grad(rewrite)(X), rtol=1e-5)
    np.testing.assert_allclose(v.numpy(), X * 3.0 * Z, rtol=1e-6)


def test_a_function_also_closing_over_a_variable_reads_its_value_at_each_call():
    w = gk.Variable(2.0)
    x = gk.Variable(X)
    with gk.GradientTape() as tape:
        y = gnp.square(x)

        @gk.jit
        def f(z):
            return gnp.sum(y * z * w)

        first = f(Z)
        w.assign(5.0)
        second = f(Z)
        total = first + second
    dx, dw = tape.gradient(total, [x, w])

    np.testing.assert_allclose(total, np.sum(X**2 * Z) * 7.0, rtol=1e-5)
    np.testing.assert_allclose(dx, 2 * X * Z * 7.0, rtol=1e-5)
    # w's entry value is read by the first call only (the second reads the assigned 5.0).
    np.testing.assert_allclose(dw, np.sum(X**2 * Z), rtol=1e-5)


def test_a_capture_outside_any_tape_is_a_value():
    y = gnp.sin(gk.Variable(X) * 1.0)

    @gk.jit
    def f(z):
        return y * z

    np.testing.assert_allclose(f(Z), np.sin(X) * Z, rtol=1e-6)


def test_a_call_reuses_its_trace_and_what_that_trace_captured():
    # As jax.jit bakes in what a function closes over when traced, and as TensorFlow's concrete
    # function keeps its captured inputs: the trace for Z's shape keeps the tensor it captured.
    x = gk.Variable(2.0)
    y = None

    @gk.jit
    def f(z):
        return y * z

    with gk.GradientTape(persistent=True) as tape:
        y = x * 3.0
        first = f(Z)
        traces = f.trace_count
        y = x * 5.0  # rebinding the closure's name: the trace for Z's shape keeps the first y
        same_shape = f(Z)
        assert f.trace_count == traces
        other_shape = f(Z[:2])  # a new trace reads the closure again
    np.testing.assert_allclose(same_shape, 6.0 * Z, rtol=1e-6)
    np.testing.assert_allclose(other_shape, 10.0 * Z[:2], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(first, x), jax.grad(lambda x: jnp.sum(x * 3.0 * Z))(2.0), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(same_shape, x), 3.0 * np.sum(Z), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(other_shape, x), 5.0 * np.sum(Z[:2]), rtol=1e-6)
