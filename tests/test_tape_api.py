"""GradientTape API behaviour (TensorFlow 2 semantics unless SEMANTICS.md says otherwise).

Expected values come from pure-JAX rewrites (jax.grad / jax.vjp / jax.jvp) or hand derivations.
"""

from __future__ import annotations

import inspect
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import compile_counter

import gradkit as gk

gnp = gk.numpy
HERE = os.path.basename(__file__)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual is not None
    got = actual.numpy() if hasattr(actual, "numpy") else actual
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=rtol, atol=atol)


def lineno() -> int:
    return inspect.currentframe().f_back.f_lineno


# --- persistence, unconnected, output_gradients ----------------------------------------------------


def test_non_persistent_second_gradient_raises():
    x = gk.Variable(3.0)
    with gk.GradientTape() as tape:
        y = x * x
    close(tape.gradient(y, x), 6.0)
    with pytest.raises(RuntimeError, match=r"^\[gradkit\] .*persistent"):
        tape.gradient(y, x)


def test_a_failed_gradient_call_does_not_use_up_the_tape():
    x = gk.Variable(3.0)
    with gk.GradientTape() as tape:
        y = x * x
    with pytest.raises(TypeError, match=r"^\[gradkit\] a gradient source"):
        tape.gradient(y, "x")
    close(tape.gradient(y, x), 6.0)  # the one successful call


def test_a_variable_target_after_the_tape_is_its_final_value():
    w0 = np.array([1.0, -2.0], np.float32)
    w = gk.Variable(w0)
    with gk.GradientTape(persistent=True) as tape:
        w.assign(w * w)
        inside = tape.gradient(w, w)
    outside = tape.gradient(w, w)  # w holds w0**2: its gradient with respect to w's entry value
    close(inside, 2 * w0)
    close(outside, 2 * w0)
    w.assign(w0)  # assigned after the tape: no longer the recorded value, so not connected
    assert tape.gradient(w, w) is None


def test_persistent_allows_many_calls():
    x = gk.Variable(3.0)
    with gk.GradientTape(persistent=True) as tape:
        y = x * x
        z = y * y
    close(tape.gradient(z, x), jax.grad(lambda a: a**4)(3.0))  # 108
    close(tape.gradient(y, x), 6.0)
    close(tape.gradient(z, y), 18.0)  # dz/dy = 2y


def test_unconnected_zero_and_invalid_mode():
    x = gk.Variable(np.ones((2, 3), np.float32))
    u = gk.Variable(np.ones((4,), np.float32))
    with gk.GradientTape(persistent=True) as tape:
        y = gnp.sum(x * 2.0)
    assert tape.gradient(y, u) is None
    gz = tape.gradient(y, [x, u], unconnected_gradients="zero")
    close(gz[0], np.full((2, 3), 2.0))
    assert tuple(gz[1].shape) == (4,)
    close(gz[1], np.zeros(4))
    gz2 = tape.gradient(y, u, unconnected_gradients=gk.UnconnectedGradients.ZERO)
    close(gz2, np.zeros(4))
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="zeros")


def test_output_gradients_is_vjp():
    w0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)
    x0 = np.array([0.3, -0.7], np.float32)
    ct = np.array([1.0, -2.0, 0.5], np.float32)
    w, x = gk.Variable(w0), gk.Variable(x0)
    with gk.GradientTape() as tape:
        y = gnp.tanh(gnp.matmul(x, w))
    gx, gw = tape.gradient(y, [x, w], output_gradients=jnp.asarray(ct))
    _, vjp = jax.vjp(lambda a, b: jnp.tanh(a @ b), x0, w0)
    ex, ew = vjp(jnp.asarray(ct))
    close(gx, ex)
    close(gw, ew)


def test_nested_targets_and_sources_mirror():
    a, b = gk.Variable(1.5), gk.Variable(np.array([1.0, 2.0], np.float32))
    with gk.GradientTape() as tape:
        t1 = a * a
        t2 = gnp.sum(b * a)
    g = tape.gradient([t1, {"t": t2}], {"a": a, "list": [b, (a,)]})
    assert set(g) == {"a", "list"}
    assert isinstance(g["list"], list) and isinstance(g["list"][1], tuple)

    def pure(av, bv):
        return av * av + jnp.sum(bv * av)

    ea, eb = jax.grad(pure, argnums=(0, 1))(1.5, jnp.array([1.0, 2.0]))
    close(g["a"], ea)
    close(g["list"][0], eb)
    close(g["list"][1][0], ea)


# --- watching -------------------------------------------------------------------------------------


def test_watch_accessed_false_and_watch():
    a, b = gk.Variable(2.0), gk.Variable(5.0)
    with gk.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    assert tape.watched_variables() == (a,)
    ga, gb = tape.gradient(y, [a, b])
    close(ga, 5.0)
    assert gb is None


def test_watched_variables_and_trainable_false():
    a = gk.Variable(2.0, name="a")
    frozen = gk.Variable(3.0, name="frozen", trainable=False)
    with gk.GradientTape(persistent=True) as tape:
        y = a * frozen
    assert tape.watched_variables() == (a,)
    close(tape.gradient(y, a), 3.0)
    assert tape.gradient(y, frozen) is None
    with gk.GradientTape() as tape2:
        tape2.watch(frozen)
        y2 = a * frozen
    g = tape2.gradient(y2, [a, frozen])
    close(g[0], 3.0)
    close(g[1], 2.0)


def test_several_tapes_own_watched_sets():
    a, b = gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape(watch_accessed_variables=False) as ta, gk.GradientTape(watch_accessed_variables=False) as tb:
        ta.watch(a)
        tb.watch(b)
        y = a * a * b
    assert ta.watched_variables() == (a,)
    assert tb.watched_variables() == (b,)
    ga = ta.gradient(y, [a, b])
    gb = tb.gradient(y, [a, b])
    close(ga[0], 2 * 2.0 * 3.0)
    assert ga[1] is None
    assert gb[0] is None
    close(gb[1], 4.0)


# --- track_assignments parity (TensorFlow) --------------------------------------------------------


def test_track_assignments_false_is_tf():
    a, b, c = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape(persistent=True, track_assignments=False) as tape:
        c.assign(a + b)
        loss = gnp.mean(c**2)
    assert tape.gradient(loss, b) is None
    assert tape.gradient(loss, a) is None
    close(tape.gradient(loss, c), 6.0)  # 2c with c = 3 after the assignment


def test_track_assignments_false_matches_real_tensorflow():
    tf = pytest.importorskip("tensorflow")
    ta, tb, tc = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        tc.assign(ta + tb)
        tloss = tf.reduce_mean(tc**2)
    want = [t.gradient(tloss, v) for v in (ta, tb, tc)]
    a, b, c = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape(persistent=True, track_assignments=False) as tape:
        c.assign(a + b)
        loss = gnp.mean(c**2)
    got = [tape.gradient(loss, v) for v in (a, b, c)]
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            close(g, w.numpy())


# --- recording boundaries ---------------------------------------------------------------------------


def test_plain_jnp_on_recorded_tensor_raises_recording_error():
    x = gk.Variable(1.0)
    with gk.GradientTape():
        y = x * 2.0
        with pytest.raises(gk.GradkitError, match="gk.numpy") as info:
            jnp.sin(y)
    assert type(info.value).__name__ == "RecordingError"
    assert "[gradkit]" in str(info.value)


def test_jax_array_plus_recorded_tensor_records():
    x = gk.Variable(np.array([1.0, 2.0], np.float32))
    c = jnp.array([3.0, 4.0])
    with gk.GradientTape() as tape:
        y = c + x * x
        z = gnp.sum(c * y)
    close(tape.gradient(z, x), jax.grad(lambda v: jnp.sum(c * (c + v * v)))(jnp.array([1.0, 2.0])))


def test_lifted_jit_is_one_op():
    calls = []

    def f(v):
        calls.append(1)
        return jnp.sin(v) ** 2 * jnp.cos(v)

    lifted = gk.lift(jax.jit(f))
    x = gk.Variable(np.array([0.3, 0.9], np.float32))
    with gk.GradientTape() as tape:
        y = lifted(x)
        loss = gnp.sum(y)
    node = y._node
    assert node.op is not None and node.inputs[0][0].op is None  # one op straight on the leaf
    close(tape.gradient(loss, x), jax.grad(lambda v: jnp.sum(f(v)))(jnp.array([0.3, 0.9])))


def test_lifted_optax_update():
    optax = pytest.importorskip("optax")
    opt = optax.sgd(0.1, momentum=0.9)
    p0 = jnp.array([1.0, -2.0])
    state = opt.init(p0)
    update = gk.lift(lambda g, s: opt.update(g, s)[0])
    w = gk.Variable(p0)
    with gk.GradientTape() as tape:
        g = 2.0 * w
        u = update(g, state)
        loss = gnp.sum((w + u) ** 2)

    def pure(wv):
        uv, _ = opt.update(2.0 * wv, state)
        return jnp.sum((wv + uv) ** 2)

    close(tape.gradient(loss, w), jax.grad(pure)(p0))


def test_an_op_with_float_and_integer_results_keeps_the_float_gradients():
    # top_k's values carry gradients, its indices do not (TensorFlow gives None past them).
    w = gk.Variable(np.array([1.0, 3.0, 2.0], np.float32))
    with gk.GradientTape(persistent=True) as tape:
        values, indices = gk.lift(jax.lax.top_k)(w * 1.0, 2)
        loss = gnp.sum(values**2)
        through_indices = gnp.sum(indices.astype(jnp.float32))
    close(tape.gradient(loss, w), jax.grad(lambda v: jnp.sum(jax.lax.top_k(v, 2)[0] ** 2))(w.value))
    assert tape.gradient(through_indices, w) is None
    assert "integer or boolean result" in tape.explain(through_indices, w)


def test_gk_jit_function_takes_arrays_concrete_and_recorded_tensors_alike():
    w = gk.Variable(np.array([0.5, -1.5], np.float32))

    @gk.jit
    def f(x):
        return gnp.sum(gnp.sin(w * x))

    def pure(wv, x):
        return jnp.sum(jnp.sin(wv * x))

    x = np.array([2.0, 0.5], np.float32)
    concrete = gk.numpy.cos(gk.Tensor(jnp.asarray(x)))  # a Tensor no tape records
    close(f(x), pure(w.value, x))
    close(f(concrete), pure(w.value, jnp.cos(x)))
    with gk.GradientTape() as tape:
        t = gk.Tensor(jnp.asarray(x))
        tape.watch(t)
        y = f(t * 2.0)
    gw, gt = tape.gradient(y, [w, t])
    want_w, want_x = jax.grad(lambda wv, xv: pure(wv, xv * 2.0), argnums=(0, 1))(w.value, jnp.asarray(x))
    close(gw, want_w)
    close(gt, want_x)


def test_gk_jit_step_with_tape_compiles_once():
    w = gk.Variable(np.array([0.5, -0.5], np.float32))
    lr = gk.Variable(0.1, trainable=False)

    @gk.jit
    def step(x):
        with gk.GradientTape() as tape:
            loss = gnp.sum((w * x - 1.0) ** 2)
        g = tape.gradient(loss, w)
        w.assign_sub(lr * g)
        return loss

    x = jnp.array([1.0, 2.0])
    wv = jnp.array([0.5, -0.5])
    pure_grad = jax.jit(jax.grad(lambda v: jnp.sum((v * x - 1.0) ** 2)))
    wv = wv - 0.1 * pure_grad(wv)
    step(x)
    traces = step.trace_count
    assert traces <= 2  # one trace, plus at most one re-trace that discovers the Variables it reads
    with compile_counter() as compiles:
        for _ in range(99):
            step(x)
    for _ in range(99):
        wv = wv - 0.1 * pure_grad(wv)
    assert step.trace_count == traces
    assert len(compiles) == 0
    close(w.value, wv, rtol=1e-4, atol=1e-5)


# --- ForwardAccumulator -----------------------------------------------------------------------------


def f_pure(v):
    return jnp.sum(jnp.sin(v) * v**2)


def test_forward_accumulator_jvp():
    x0 = jnp.array([0.2, -0.4, 1.3])
    t0 = jnp.array([1.0, 0.5, -2.0])
    x = gk.Variable(x0)
    with gk.ForwardAccumulator(x, t0) as acc:
        y = gnp.sin(x) * x**2
    _, want = jax.jvp(lambda v: jnp.sin(v) * v**2, (x0,), (t0,))
    close(acc.jvp(y), want)


def test_forward_over_reverse_hvp():
    x0 = jnp.array([0.2, -0.4, 1.3])
    t0 = jnp.array([1.0, 0.5, -2.0])
    x = gk.Variable(x0)
    with gk.ForwardAccumulator(x, t0) as acc:
        with gk.GradientTape() as tape:
            loss = gnp.sum(gnp.sin(x) * x**2)
        g = tape.gradient(loss, x)
    _, want = jax.jvp(jax.grad(f_pure), (x0,), (t0,))
    close(acc.jvp(g), want)


# --- explain ----------------------------------------------------------------------------------------


def test_explain_connected():
    x = gk.Variable(1.0, name="xv")
    with gk.GradientTape() as tape:
        y = gnp.sin(x) * 2.0
    msg = tape.explain(y, x)
    assert msg.startswith("connected")
    assert "xv" in msg and "sin" in msg


def test_explain_stop_gradient_names_site():
    x = gk.Variable(1.0, name="xv")
    with gk.GradientTape() as tape:
        line = lineno() + 1
        y = gk.stop_gradient(x * x) + 1.0
    msg = tape.explain(y, x)
    assert tape.gradient(y, x) is None
    assert "None" in msg and "stop_gradient" in msg
    assert f"{HERE}:{line}" in msg


def test_explain_stop_recording():
    x = gk.Variable(1.0, name="xv")
    with gk.GradientTape() as tape:
        with tape.stop_recording():
            y = x * x
        z = y + 1.0
    msg = tape.explain(z, x)
    assert "None" in msg and "stop_recording" in msg


def test_explain_assignment_overwrite():
    a, b, c = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b"), gk.Variable(3.0, name="cv")
    with gk.GradientTape() as tape:
        line = lineno() + 1
        c.assign(a + b)
        loss = c * c
    msg = tape.explain(loss, c)
    assert "None" in msg and "overwritten" in msg and "cv" in msg
    assert f"{HERE}:{line}" in msg


def test_explain_parity_assignment_cut():
    a, c = gk.Variable(1.0, name="av"), gk.Variable(3.0, name="c")
    with gk.GradientTape(track_assignments=False) as tape:
        line = lineno() + 1
        c.assign(a * 2.0)
        loss = c * c
    msg = tape.explain(loss, a)
    assert "None" in msg and "track_assignments=False" in msg
    assert f"{HERE}:{line}" in msg


def test_explain_never_watched():
    a = gk.Variable(1.0, name="av")
    with gk.GradientTape(watch_accessed_variables=False) as tape:
        y = a * a
    msg = tape.explain(y, a)
    assert "never watched" in msg and "watch_accessed_variables=False" in msg


# --- record-time shape errors -----------------------------------------------------------------------


def test_shape_error_at_record_time():
    a = gk.Variable(np.ones((2, 3), np.float32))
    b = gk.Variable(np.ones((2, 3), np.float32))
    with gk.GradientTape():
        y = a * 2.0
        with pytest.raises(TypeError) as info:
            line = lineno() + 1
            gnp.matmul(y, b)
    tb = info.traceback
    assert any(entry.path.name == HERE and entry.lineno + 1 == line for entry in tb)


# --- regressions ------------------------------------------------------------------------------------


def test_gnp_reshape_of_variable_outside_tape():
    v = gk.Variable(np.array([1.0, 2.0], np.float32))
    close(gnp.reshape(v, (1, -1)), [[1.0, 2.0]])


def test_batch_jacobian_inside_gk_jit_equals_per_example_jacobians():
    w = gk.Variable(np.ones((3, 2), np.float32))

    @gk.jit
    def per_example(x):
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = gnp.tanh(x @ w)
        return tape.batch_jacobian(y, x)

    x = jnp.arange(12.0, dtype=jnp.float32).reshape(4, 3) / 10
    want = jax.vmap(jax.jacrev(lambda xi: jnp.tanh(xi @ jnp.ones((3, 2)))))(x)
    np.testing.assert_allclose(per_example(x), want, rtol=1e-5, atol=1e-6)


def test_explain_names_the_line_where_a_value_left_the_tape_through_numpy():
    v, w = gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape() as tape:
        y = v * 2.0
        line = inspect.currentframe().f_lineno + 1
        z = w * y.numpy()
    assert tape.gradient(z, v) is None
    message = tape.explain(z, v)
    assert "NumPy" in message and f"{os.path.basename(__file__)}:{line}" in message


def test_explain_names_an_integer_cast():
    v = gk.Variable(2.5)
    with gk.GradientTape() as tape:
        line = inspect.currentframe().f_lineno + 1
        n = v.value.astype(jnp.int32)
        y = n.astype(jnp.float32) * 2.0
    assert tape.gradient(y, v) is None  # TensorFlow's answer too: no gradient through integers
    message = tape.explain(y, v)
    assert "integer" in message and f"{os.path.basename(__file__)}:{line}" in message


def test_complex_python_scalar_operand_is_recorded():
    """z = Re(w * 1j * (1 + 2j)) = Re(w * (-2 + 1j)) = -2w, so dz/dw = -2 (by hand)."""
    w = gk.Variable(jnp.float32(2.0))
    with gk.GradientTape() as tape:
        z = gk.numpy.real((w * 1j) * (1 + 2j))
    assert float(z) == pytest.approx(-4.0)
    assert float(tape.gradient(z, w)) == pytest.approx(-2.0)


def test_many_inner_tapes_in_one_session_see_variables_in_constant_time():
    """Each inner tape under one outer tape records its own source for a Variable; the
    gradient of each is the hand-derived d(w^2)/dw = 2w, whatever the number of tapes."""
    w = gk.Variable(jnp.float32(3.0))
    with gk.GradientTape(persistent=True):
        for _ in range(200):
            with gk.GradientTape() as inner:
                y = w * w
            assert float(inner.gradient(y, w)) == pytest.approx(6.0)


def test_output_gradients_broadcast_to_the_target_or_raise():
    w0 = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    w = gk.Variable(w0)
    with gk.GradientTape(persistent=True) as tape:
        y = w * w
    _, pull = jax.vjp(lambda a: a * a, w0)
    close(tape.gradient(y, w, output_gradients=2.0), pull(np.full((2, 3), 2.0, np.float32))[0])
    row = np.array([1.0, 0.0, -1.0], np.float32)
    close(tape.gradient(y, w, output_gradients=row), pull(np.broadcast_to(row, (2, 3)))[0])
    for bad in (np.ones((3, 2), np.float32), np.ones(2, np.float32)):
        with pytest.raises(ValueError, match=r"^\[gradkit\] output_gradients has an entry of shape"):
            tape.gradient(y, w, output_gradients=bad)


def test_a_used_tape_entered_again_starts_afresh_and_a_persistent_one_continues():
    x = gk.Variable(2.0)
    tape = gk.GradientTape()
    for k in (1.0, 2.0):
        with tape:
            y = x * x * k
        close(tape.gradient(y, x), 4.0 * k)
    tape = gk.GradientTape(persistent=True)
    with tape:
        y = x * x
    with tape:  # continues recording, as TensorFlow's tape does: d(x**3)/dx = 3 x**2
        z = y * x
    close(tape.gradient(z, x), 12.0)
    tape.reset()
    with tape:
        y = x * x * x
    close(tape.gradient(y, x), 12.0)


def test_jacobians_take_one_target_and_an_unconnected_batch_jacobian_is_zeros():
    x = gk.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    z = gk.Variable(np.zeros((2, 3), np.float32))
    with gk.GradientTape(persistent=True) as tape:
        y = x * x
    with pytest.raises(TypeError, match=r"^\[gradkit\] jacobian takes one target tensor, but got list"):
        tape.jacobian([y, y], x)
    # TensorFlow's batch_jacobian gives zeros for an unconnected source, whatever the mode.
    bj = tape.batch_jacobian(y, z)
    assert bj.shape == (2, 2, 3) and not np.asarray(bj).any()


def test_explain_a_watched_array():
    xs = jnp.array([0.5, -1.0, 2.0])
    with gk.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        vals = gnp.sin(xs) * 2.0
        idx = gnp.argmax(vals)
    assert tape.explain(vals, xs).startswith("connected:")
    assert "integer or boolean result" in tape.explain(idx, xs)


def test_a_slice_of_a_variable_as_a_gradient_target():
    v = gk.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    with gk.GradientTape(persistent=True) as tape:
        tail = v[1:]
        both = [v[0], v[0] * 2.0]
    close(tape.gradient(tail, v), [0.0, 1.0, 1.0])
    close(tape.gradient(both, v), [3.0, 0.0, 0.0])


def test_value_dependent_shape_on_the_tape_names_the_way_out():
    """A recorded op whose result shape depends on values cannot be traced; the error says what to do.

    Oracle: NumPy boolean indexing of the same values, and the hand derivative d(sum y^2)/dx = 2x on the kept
    entries."""
    x = gk.Variable(jnp.arange(4.0))
    mask = np.array([True, False, True, True])
    with gk.GradientTape() as tape:
        with pytest.raises(gk.GradkitError, match=r"gk\.numpy\.nonzero .*traced array .*\]\. Pass the size"):
            gk.numpy.nonzero(x)
        with pytest.raises(gk.GradkitError, match=r"gk\.numpy\.arange .*\. Compute on the value outside"):
            gk.numpy.arange(gk.numpy.sum(x))
        kept = x[mask]
        loss = gk.numpy.sum(kept * kept)
    np.testing.assert_allclose(np.asarray(kept), np.arange(4.0)[mask])
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, x)), 2 * np.arange(4.0) * mask)
