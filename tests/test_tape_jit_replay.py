"""A ``gk.jit`` / ``tf.function`` call a tape records runs the program traced at the call.

``jax.jit`` and ``tf.function`` trace the Python body once per argument signature and keep the
Python values read while tracing; a later call with the same signature reuses that trace. A tape
computes a recorded call later (a result's first read, a gradient, a replay under an outer
tape), after the Python the body reads may have changed: it must still compute the traced
program, and run none of the body's Python again. The ``gk.jit`` programs are checked against
``jax.jit`` of the same function called in the same order; the ``tf.function`` programs against
real TensorFlow running the same program text.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

Z = np.array([1.5, -0.5, 2.0], np.float32)
X0 = 2.0


def _oracle_calls(fn, change):
    """``jax.jit(fn)`` on (x, Z), called once, ``change()``, called again, as the gradkit programs
    below call theirs: both values, and the gradient of each one's sum with respect to x (taken
    after both calls, so after the change)."""
    jitted = jax.jit(fn)
    values = [jitted(jnp.float32(X0), Z)]
    change()
    values.append(jitted(jnp.float32(X0), Z))
    grads = [jax.grad(lambda x: jnp.sum(jitted(x, Z)))(jnp.float32(X0)) for _ in values]
    return values, grads


def test_a_python_float_read_when_traced_is_kept_by_the_recorded_call():
    scale = [2.0]
    x = gk.Variable(X0)
    f = gk.jit(lambda z: x * z * scale[0])
    with gk.GradientTape(persistent=True) as tape:
        a = f(Z)
        scale[0] = 3.0
        b = f(Z)
    got = [np.asarray(a), np.asarray(b), np.asarray(tape.gradient(a, x)), np.asarray(tape.gradient(b, x))]

    scale[0] = 2.0
    values, grads = _oracle_calls(lambda x, z: x * z * scale[0], lambda: scale.__setitem__(0, 3.0))
    for g, want in zip(got, [*values, *grads]):
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_the_reproduction_with_a_rebound_global_style_closure():
    x = gk.Variable(X0)
    scale = 2.0
    f = gk.jit(lambda z: x * z * scale)
    with gk.GradientTape(persistent=True) as tape:
        a = f(Z)
        scale = 3.0
        b = f(Z)
    jac = tape.jacobian(a, x)
    want = jax.jit(lambda x, z: x * z * 2.0)(jnp.float32(X0), Z)
    np.testing.assert_allclose(np.asarray(a), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jac), jax.jacrev(lambda x: x * Z * 2.0)(jnp.float32(X0)), rtol=1e-6)
    assert scale == 3.0


def test_a_mutated_closed_over_list_is_read_as_it_was_when_traced():
    coeffs = [1.0, 2.0]
    x = gk.Variable(X0)
    f = gk.jit(lambda z: x * x * z * sum(coeffs))
    with gk.GradientTape(persistent=True) as tape:
        a = f(Z)
        coeffs.append(5.0)
        b = f(Z)
    got = [np.asarray(a), np.asarray(b), np.asarray(tape.gradient(a, x)), np.asarray(tape.gradient(b, x))]

    del coeffs[2:]
    values, grads = _oracle_calls(lambda x, z: x * x * z * sum(coeffs), lambda: coeffs.append(5.0))
    for g, want in zip(got, [*values, *grads]):
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_the_bodys_print_runs_no_more_often_than_under_jax_jit(capsys):
    def make(x_read):
        def body(z):
            print("tracing body")
            return x_read() * z * 2.0

        return body

    x = gk.Variable(X0)
    f = gk.jit(make(lambda: x))
    with gk.GradientTape(persistent=True) as tape:
        a = f(Z)
        first = capsys.readouterr().out.count("tracing body")
        b = f(Z)
    np.asarray(a), np.asarray(b)
    grads = [tape.gradient(a, x), tape.gradient(b, x)]
    np.asarray(grads[0]), np.asarray(grads[1])
    later = capsys.readouterr().out.count("tracing body")

    oracle = jax.jit(lambda x, z: make(lambda: x)(z))
    oracle(jnp.float32(X0), Z)
    capsys.readouterr()
    oracle(jnp.float32(X0), Z)
    jax.grad(lambda x: jnp.sum(oracle(x, Z)))(jnp.float32(X0))
    assert first >= 1
    # After the first call jax.jit runs the body's Python no more: a call, a value read and a
    # gradient all reuse its trace.
    assert later == capsys.readouterr().out.count("tracing body") == 0


def test_materialising_a_recorded_call_traces_nothing():
    scale = [2.0]
    x = gk.Variable(X0)
    f = gk.jit(lambda z: x * z * scale[0])
    with gk.GradientTape() as tape:
        a = f(Z)
        traces = f.trace_count
        scale[0] = 3.0
    np.asarray(tape.gradient(a, x))
    np.asarray(a)
    assert f.trace_count == traces


def test_nested_tapes_differentiate_the_traced_program_twice():
    scale = [2.0]
    x = gk.Variable(X0)
    f = gk.jit(lambda z: x * x * z * scale[0])
    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            a = f(Z)
            scale[0] = 3.0
            b = f(Z)
            total = gk.numpy.sum(a) + gk.numpy.sum(b)
        g = inner.gradient(total, x)
    gg = outer.gradient(g, x)

    scale[0] = 2.0
    oracle = jax.jit(lambda x, z: x * x * z * scale[0])
    oracle(jnp.float32(X0), Z)
    scale[0] = 3.0

    def total_fn(x):
        return jnp.sum(oracle(x, Z)) + jnp.sum(oracle(x, Z))

    np.testing.assert_allclose(np.asarray(g), jax.grad(total_fn)(jnp.float32(X0)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gg), jax.grad(jax.grad(total_fn))(jnp.float32(X0)), rtol=1e-6)


def test_forward_mode_sees_the_traced_program():
    scale = [2.0]
    x = gk.Variable(X0)
    f = gk.jit(lambda z: x * x * z * scale[0])
    with gk.ForwardAccumulator(x, 1.0) as acc:
        a = f(Z)
        scale[0] = 3.0
    oracle = jax.jit(lambda x: x * x * Z * 2.0)
    _, tangent = jax.jvp(oracle, (jnp.float32(X0),), (jnp.float32(1.0),))
    np.testing.assert_allclose(np.asarray(acc.jvp(a)), tangent, rtol=1e-6)


def test_an_assignment_inside_the_call_is_differentiated_as_traced():
    scale = [2.0]
    x = gk.Variable(X0)
    w = gk.Variable(1.0)

    @gk.jit
    def f(z):
        w.assign(w * x * scale[0])
        return gk.numpy.sum(w * z)

    with gk.GradientTape(persistent=True) as tape:
        a = f(Z)
        scale[0] = 3.0
    grads = tape.gradient(a, [x, w])

    def oracle(x, w):
        w = w * x * 2.0
        return jnp.sum(w * Z)

    want = jax.grad(oracle, argnums=(0, 1))(jnp.float32(X0), jnp.float32(1.0))
    np.testing.assert_allclose(np.asarray(a), oracle(jnp.float32(X0), jnp.float32(1.0)), rtol=1e-6)
    for g, v in zip(grads, want):
        np.testing.assert_allclose(np.asarray(g), v, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(w.value), X0 * 2.0, rtol=1e-6)


# -- tf.function against real TensorFlow ------------------------------------------------------


def p_a_python_float_rebound_between_calls(tf):
    x = tf.Variable(X0)
    scale = [2.0]
    f = tf.function(lambda z: x * z * scale[0])
    z = tf.constant(Z)
    with tf.GradientTape(persistent=True) as tape:
        a = f(z)
        scale[0] = 3.0
        b = f(z)
    return [a, b, tape.gradient(a, x), tape.gradient(b, x)]


def p_a_closed_over_list_appended_to_between_calls(tf):
    x = tf.Variable(X0)
    coeffs = [1.0, 2.0]
    f = tf.function(lambda z: x * x * z * sum(coeffs))
    z = tf.constant(Z)
    with tf.GradientTape(persistent=True) as tape:
        a = f(z)
        coeffs.append(5.0)
        b = f(z)
    return [a, b, tape.gradient(a, x), tape.gradient(b, x)]


def p_the_body_runs_once_for_a_watched_argument(tf):
    runs = []
    scale = [2.0]

    @tf.function
    def f(z):
        runs.append(1)
        return z * z * scale[0]

    z = tf.constant(Z)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(z)
        a = f(z)
        scale[0] = 3.0
        b = f(z)
    grads = [tape.gradient(a, z), tape.gradient(b, z)]
    return [a, b, *grads, tf.constant(len(runs))]


def p_nested_tapes_after_the_value_changed(tf):
    x = tf.Variable(X0)
    scale = [2.0]
    f = tf.function(lambda z: x * x * z * scale[0])
    z = tf.constant(Z)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            a = f(z)
            scale[0] = 3.0
            total = tf.reduce_sum(a) + tf.reduce_sum(f(z))
        g = inner.gradient(total, x)
    return [g, outer.gradient(g, x)]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_tf_function_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    run_both_ok(program)


def test_static_and_keyword_arguments_and_a_variable_argument_replay_their_own_trace():
    scale = [2.0]
    x = gk.Variable(X0)
    w = gk.Variable(Z)

    def body(v, power, *, shift):
        return gk.numpy.sum(v * x**power * scale[0] + shift)

    f = gk.jit(body, static_argnums=1)
    with gk.GradientTape(persistent=True) as tape:
        a = f(w, 2, shift=Z)
        b = f(w, 3, shift=Z)
        scale[0] = 3.0
        c = f(w, 2, shift=Z)  # the trace for power=2, with scale 2.0
        total = a + b + c
    got = [a, b, c, *tape.gradient(total, [x, w])]

    scale[0] = 2.0
    oracle = jax.jit(lambda v, x, power, *, shift: jnp.sum(v * x**power * scale[0] + shift), static_argnums=2)
    args = (jnp.asarray(Z), jnp.float32(X0))
    want = [oracle(*args, 2, shift=Z), oracle(*args, 3, shift=Z)]
    scale[0] = 3.0
    want.append(oracle(*args, 2, shift=Z))

    def total(v, x):
        return oracle(v, x, 2, shift=Z) + oracle(v, x, 3, shift=Z) + oracle(v, x, 2, shift=Z)

    want += list(reversed(jax.grad(total, argnums=(0, 1))(*args)))
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), v, rtol=1e-6)


def test_calls_recorded_in_a_loop_share_one_op_and_a_new_trace_is_another():
    x = gk.Variable(X0)
    f = gk.jit(lambda z: x * z)
    with gk.GradientTape() as tape:
        outs = [f(Z * k) for k in range(4)]
        other = f(Z[:2])  # another signature: another trace
        total = sum(gk.numpy.sum(o) for o in outs) + gk.numpy.sum(other)
    # One op for the calls of one trace, so the tape compiles one program for them.
    assert len({id(o._node.op) for o in outs}) == 1
    assert other._node.op is not outs[0]._node.op
    want = jax.grad(lambda x: sum(jnp.sum(x * Z * k) for k in range(4)) + jnp.sum(x * Z[:2]))(jnp.float32(X0))
    np.testing.assert_allclose(np.asarray(tape.gradient(total, x)), want, rtol=1e-6)


def test_a_tape_inside_a_compiled_step_records_the_inner_calls_trace():
    scale = [2.0]
    x = gk.Variable(X0)
    inner = gk.jit(lambda z: x * x * z * scale[0])

    @gk.jit
    def step(z):
        with gk.GradientTape() as tape:
            y = gk.numpy.sum(inner(z))
            scale[0] += 1.0
            total = y + gk.numpy.sum(inner(z * 2.0))  # the same signature: the same trace
        return tape.gradient(total, x)

    got = [step(Z), step(Z)]

    scale[0] = 2.0
    inner_jax = jax.jit(lambda x, z: x * x * z * scale[0])

    def step_jax(x, z):
        def total(x):
            y = jnp.sum(inner_jax(x, z))
            scale[0] += 1.0
            return y + jnp.sum(inner_jax(x, z * 2.0))

        return jax.grad(total)(x)

    step_jax = jax.jit(step_jax)
    want = [step_jax(jnp.float32(X0), Z), step_jax(jnp.float32(X0), Z)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
