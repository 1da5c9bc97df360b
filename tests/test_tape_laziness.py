"""Laziness must never show: values are computed when read, never when not needed, and
what was recorded is what the program saw at that moment."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
from gradkit._tape import record

gnp = gk.numpy


def _count_materializations(monkeypatch):
    calls = []
    original = record.materialize

    def counting(node):
        if node.values is None:
            calls.append(node)
        return original(node)

    monkeypatch.setattr(record, "materialize", counting)
    return calls


def test_a_value_assigned_under_a_tape_is_exact_when_read_afterwards():
    w = gk.Variable(jnp.array([1.0, 2.0]))
    with gk.GradientTape():
        w.assign(gnp.sin(w) * 3.0)
    np.testing.assert_allclose(w.numpy(), 3.0 * np.sin([1.0, 2.0]), rtol=1e-6)
    assert isinstance(w.value, jax.Array)  # resolved to a plain array on the first read


def test_a_pending_value_overwritten_before_any_read_is_never_computed(monkeypatch):
    calls = _count_materializations(monkeypatch)
    w = gk.Variable(jnp.array([1.0, 2.0]))
    with gk.GradientTape() as tape:
        w.assign(gnp.sin(w) * 3.0)
        loss = gnp.sum(w**2)
    tape.gradient(loss, w)
    w.assign(jnp.array([0.5, 0.5]))  # the next step resets the weights
    assert calls == []
    np.testing.assert_allclose(w.numpy(), [0.5, 0.5])


def test_writing_into_a_numpy_constant_after_recording_does_not_change_the_program():
    data = np.array([1.0, 2.0], np.float32)
    v = gk.Variable(jnp.array([3.0, 4.0]))
    with gk.GradientTape() as tape:
        y = gnp.sum(v * data)
    data[:] = 100.0  # TensorFlow eager would already have used the old values
    np.testing.assert_allclose(y.numpy(), 3.0 * 1.0 + 4.0 * 2.0)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [1.0, 2.0])


def test_a_numpy_constant_written_to_between_two_uses_in_one_recording_is_read_as_it_is_then():
    """A buffer refilled in place between two ops of one step: each op sees the values it held
    at that op, as NumPy and TensorFlow eager do (the second op is not the first's constant).
    Oracle: jax.grad of the same two products with the two values written out."""
    data = np.array([1.0, 2.0, 3.0], np.float32)
    first = data.copy()
    v = gk.Variable(jnp.array([0.5, -1.0, 2.0]))
    with gk.GradientTape() as tape:
        y1 = gnp.sum(v * data)
        data[0] = 10.0
        y2 = gnp.sum(gnp.sin(v) * data)
        loss = y1 * y2
    second = data.copy()

    def pure(v):
        return jnp.sum(v * first) * jnp.sum(jnp.sin(v) * second)

    v0 = jnp.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(float(loss), float(pure(v0)), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), jax.grad(pure)(v0), rtol=1e-5)


@pytest.mark.parametrize(
    "view",
    [
        lambda buffer: np.broadcast_to(buffer[:3], (2, 3)),
        lambda buffer: np.lib.stride_tricks.sliding_window_view(buffer, 3)[:2],
    ],
    ids=["broadcast_to", "sliding_window_view"],
)
def test_a_read_only_view_of_a_buffer_written_to_after_recording_does_not_change_the_program(view):
    """A read-only view still changes when the buffer it views is written to. Oracle: the same
    products in JAX on the values the view held when it was recorded."""
    buffer = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    data = view(buffer)
    seen = np.array(data)
    w0 = jnp.array([[0.5, -1.0, 2.0], [0.3, 0.1, -0.7]])
    w = gk.Variable(w0)
    with gk.GradientTape() as tape:
        y = gnp.sin(w) * data
        z = gnp.cos(w) * data
    g = tape.gradient(y, w)
    buffer[:] = 100.0  # the next window of a stream, written into the same buffer
    np.testing.assert_allclose(y.numpy(), np.sin(w0) * seen, rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), np.cos(w0) * seen, rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), jax.grad(lambda w: jnp.sum(jnp.sin(w) * seen))(w0), rtol=1e-6)


def test_a_read_only_view_written_to_between_two_uses_in_one_recording_is_read_as_it_is_then():
    """Oracle: jax.grad of the two products with the two values written out."""
    buffer = np.array([1.0, 2.0, 3.0], np.float32)
    data = np.broadcast_to(buffer, (3,))
    first = np.array(data)
    w0 = jnp.array([0.5, -1.0, 2.0])
    w = gk.Variable(w0)
    with gk.GradientTape() as tape:
        y1 = gnp.sum(w * data)
        buffer[0] = 10.0
        y2 = gnp.sum(gnp.sin(w) * data)
        loss = y1 * y2
    second = np.array(data)

    def pure(w):
        return jnp.sum(w * first) * jnp.sum(jnp.sin(w) * second)

    np.testing.assert_allclose(float(loss), float(pure(w0)), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), jax.grad(pure)(w0), rtol=1e-5)


def test_tensors_read_first_inside_a_gk_jit_step_keep_no_tracer():
    """A tensor recorded eagerly and first computed inside a compiled step (an intermediate
    tensor: a gradient hands back only its targets' values; a gradient taken in the step hands
    back its target) is still readable after the step. Oracle: the same functions in JAX."""
    w0 = jnp.array([0.3, -0.2, 0.5])
    w = gk.Variable(w0)
    with gk.GradientTape(persistent=True) as tape:
        y = gnp.sin(w) * 2.0
        y_target = y * 1.0  # the gradient's target: y itself stays uncomputed
        loss = gnp.sum(y * w)
    g = tape.gradient(y_target, w)

    @gk.jit
    def step():
        return gnp.sum(y) * 3.0, tape.gradient(loss, w)

    total, g_loss = step()
    np.testing.assert_allclose(np.asarray(g), np.asarray(2.0 * jnp.cos(w0)), rtol=1e-6)
    np.testing.assert_allclose(float(total), float(6.0 * jnp.sum(jnp.sin(w0))), rtol=1e-6)
    loss_fn = lambda w: jnp.sum(2.0 * jnp.sin(w) * w)  # noqa: E731
    np.testing.assert_allclose(np.asarray(g_loss), np.asarray(jax.grad(loss_fn)(w0)), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), np.asarray(2.0 * jnp.sin(w0)), rtol=1e-6)
    np.testing.assert_allclose(float(loss), float(loss_fn(w0)), rtol=1e-6)


def test_a_tensor_read_first_inside_a_loop_body_of_a_gk_jit_step_is_readable_after_it():
    """The body of a lax loop is a trace of its own inside the step's: a tensor left
    uncomputed (an intermediate of a gradient's target) read first there keeps no tracer of
    it. Oracle: JAX."""
    w0 = jnp.array([0.3, -0.2, 0.5])
    w = gk.Variable(w0)

    @gk.jit
    def step():
        with gk.GradientTape() as tape:
            y = gnp.tanh(w) * 3.0
            y_target = y * 1.0  # the gradient's target: y itself stays uncomputed
        g = tape.gradient(y_target, w)
        total = jax.lax.fori_loop(0, 3, lambda i, acc: acc + jnp.asarray(y), jnp.zeros(3))
        return g, total, y * 2.0

    g, total, y2 = step()
    np.testing.assert_allclose(np.asarray(g), np.asarray(3.0 * (1.0 - jnp.tanh(w0) ** 2)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(total), np.asarray(9.0 * jnp.tanh(w0)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(y2), np.asarray(6.0 * jnp.tanh(w0)), rtol=1e-6)


def test_one_constant_used_by_many_ops_is_one_input(monkeypatch):
    data = np.ones((3,), np.float32)
    v = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    with gk.GradientTape():
        y = v * data + data
        z = gnp.sum(y * data)
    assert len(z._node.leaves) == 2  # v's entry value and the one constant


def test_a_steps_graph_and_values_are_freed_without_the_cycle_collector():
    """No reference cycles: a big result or a step's constants go when their last user does."""
    import gc
    import weakref

    v = gk.Variable(jnp.ones((4, 4)))
    batch = np.ones((4, 4), np.float32)
    gc.collect()
    gc.disable()
    try:
        with gk.GradientTape() as tape:
            y = gnp.sum((v * batch) ** 2)
        jac = tape.gradient(y, v)
        refs = [weakref.ref(y._node), weakref.ref(y._node.leaves[0]), weakref.ref(jac._node)]
        del y, jac, tape
        assert [r() for r in refs] == [None, None, None]
    finally:
        gc.enable()


def test_targets_read_after_their_gradient_have_their_values(monkeypatch):
    """A gradient hands back its targets' values (a loss or per-example losses, read for
    logging, cost no second call), except a derivative's results (a gradient differentiated
    again), which are computed only if read."""
    calls = _count_materializations(monkeypatch)
    theta = gk.Variable(jnp.array([0.3, -0.2, 0.5]))
    v = jnp.array([1.0, 2.0, -1.0])

    def f(t):
        return jnp.sum(jnp.tanh(t) ** 3)

    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            loss = gnp.sum(gnp.tanh(theta) ** 3)
        g = inner.gradient(loss, theta)
    hvp = outer.gradient(g, theta, output_gradients=v)
    expected_hvp = jax.jvp(jax.grad(f), (theta.value,), (v,))[1]  # the Hessian is symmetric
    np.testing.assert_allclose(np.asarray(hvp), np.asarray(expected_hvp), rtol=1e-5)
    assert calls == []
    np.testing.assert_allclose(g.numpy(), np.asarray(jax.grad(f)(theta.value)), rtol=1e-6)
    assert len(calls) == 1  # g, computed on its read

    calls.clear()
    x = jnp.array([0.1, 0.7, -0.4])
    with gk.GradientTape(persistent=True) as tape:
        y = gnp.sin(theta) * x
        loss = gnp.sum(y**2)
    tape.gradient(loss, theta)
    tape.gradient(y, theta)
    np.testing.assert_allclose(float(loss), float(jnp.sum((jnp.sin(theta.value) * x) ** 2)), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), np.asarray(jnp.sin(theta.value) * x), rtol=1e-6)
    assert calls == []  # both came back with their gradients
