"""gradkit.tf against real TensorFlow: a tape entered again, complex Jacobians, Variable
updates by large Python ints, the gradient of a Variable with respect to itself, and the
order in which tf.Module lists its Variables."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import _tape, run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit._errors import GradkitError  # noqa: E402

# -- a tape entered again continues recording ---------------------------------------------


def p_reentered_tape_sees_both_blocks(tf):
    out = []
    for persistent in (False, True):
        x = tf.Variable(3.0)
        t = _tape(tf, persistent=persistent)
        with t:
            y = x * x
        with t:
            z = y * x
        out.append(t.gradient(z, x))
        if persistent:
            out.append(t.gradient(y, x))
    return out


def p_reentered_after_a_gradient(tf):
    x = tf.Variable(3.0)
    t = _tape(tf)  # used up by its gradient: entered again, it starts afresh
    with t:
        y = x * x
    out = [t.gradient(y, x)]
    with t:
        z = y * x
    out.append(t.gradient(z, x))
    p = _tape(tf, persistent=True)  # a persistent one keeps what it recorded
    with p:
        y = x * x
    out.append(p.gradient(y, x))
    with p:
        z = y * x
    return out + [p.gradient(z, x), p.gradient(y, x)]


def p_reentered_three_times(tf):
    x = tf.Variable(2.0)
    t = _tape(tf)
    y = 1.0
    for _ in range(3):
        with t:
            y = y * x
    return t.gradient(y, x)


def p_reentered_with_a_watched_tensor_and_a_new_variable(tf):
    c = tf.constant(2.0)
    u = tf.Variable(4.0)
    t = _tape(tf, persistent=True)
    with t:
        t.watch(c)
        y = c * c
    with t:
        z = y * c * u
    return [t.gradient(z, c), t.gradient(z, u), t.gradient(y, c), len(t.watched_variables())]


def p_reentered_ops_in_between_are_not_recorded(tf):
    x = tf.Variable(3.0)
    t = _tape(tf, persistent=True)
    with t:
        y = x * x
        with t.stop_recording():
            v = y * x
    w = y * 2.0
    with t:
        z = w * x + v * y
    return t.gradient(z, x)


def p_reentered_while_an_outer_tape_records(tf):
    x = tf.Variable(3.0)
    outer = _tape(tf, persistent=True)
    t = _tape(tf, persistent=True)
    with outer:
        with t:
            y = x * x
        w = y * 2.0
        with t:
            z = w * x
        gz = t.gradient(z, x)
    return [gz, t.gradient(y, x), outer.gradient(z, x), outer.gradient(gz, x)]


def p_reentered_around_assignments(tf):
    # TensorFlow parity (track_assignments=False under gradkit): an assignment cuts.
    x, c, v = tf.Variable(3.0), tf.Variable(1.0), tf.Variable(2.0)
    t = _tape(tf, persistent=True)
    with t:
        c.assign(x * 2.0)
        a = v * 1.0
    v.assign(5.0)
    with t:
        z = c * x
        b = v * v
    return [t.gradient(z, x), t.gradient(z, c), t.gradient(b, v), t.gradient(a, v)]


def p_reentered_inside_tf_function(tf):
    x = tf.Variable(2.0)

    @tf.function
    def f():
        t = _tape(tf)
        with t:
            y = x * x
        with t:
            z = y * x
        return t.gradient(z, x)

    return [f(), f()]


def p_nested_with_on_one_tape_is_a_value_error(tf):
    t = _tape(tf)
    with t:
        with t:
            pass


# -- Jacobians with complex targets or sources ---------------------------------------------


def p_complex_jacobians(tf):
    z = tf.Variable([1 + 2j, 3 - 1j, -0.5 + 0.25j], dtype=tf.complex64)
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        holomorphic = tf.reshape(z * z, [3, 1]) * tf.constant([[1.0 + 0j, 2j]], dtype=tf.complex64)
        conj = z * tf.math.conj(z) + z
        real = tf.math.real(z * tf.math.conj(z))
        from_real = tf.cast(x, tf.complex64) * (1 + 2j)
        mixed = tf.math.real(tf.reduce_sum(z)) * x
    return [
        t.jacobian(holomorphic, z),
        t.jacobian(conj, z),
        t.jacobian(real, z),
        t.jacobian(from_real, x),
        t.jacobian(mixed, [z, x]),
        t.jacobian(real, x),
        t.jacobian(real, x, unconnected_gradients=tf.UnconnectedGradients.ZERO),
    ]


# -- Variable updates by Python ints -------------------------------------------------------


def p_float_variable_takes_a_large_python_int(tf):
    out = []
    for big in (2**31, 2**40, 2**64):
        for op in ("assign", "assign_add", "assign_sub"):
            v = tf.Variable(1.0)
            getattr(v, op)(big)
            out.append(v.numpy())
    w = tf.Variable([1.0, 2.0])
    w[0].assign(2**40)
    return out + [w.numpy()]


def test_int32_variable_refuses_an_int_it_cannot_hold():
    # TensorFlow wraps the int around silently (tf.Variable(1).assign_add(2**40) leaves 1,
    # .assign(2**31) gives -2**31); gradkit refuses it, leaving the Variable unchanged.
    assert int(tf_real.Variable(1).assign_add(2**40).numpy()) == 1
    v = gtf.Variable(1)
    for op, verb in (("assign_add", "add"), ("assign_sub", "subtract"), ("assign", "assign")):
        value = 2**40 if op != "assign" else 2**31
        with pytest.raises(ValueError, match=rf"^\[gradkit\] cannot {verb} the Python int {value} .* int32"):
            getattr(v, op)(value)
        assert int(v.numpy()) == 1
    w = gtf.Variable([1, 2])
    with pytest.raises(ValueError, match=r"^\[gradkit\] cannot write the Python int -2147483649 into"):
        w[0].assign(-(2**31) - 1)
    assert w.numpy().tolist() == [1, 2]
    v.assign_add(2**31 - 3)  # in range: as TensorFlow
    assert int(v.numpy()) == 2**31 - 2
    with pytest.raises(ValueError, match=r"^\[gradkit\] cannot add the Python int 1000.* float32: it is beyond"):
        gtf.Variable(1.0).assign_add(10**400)


# -- the gradient of a Variable with respect to itself -------------------------------------


def p_gradient_of_a_variable_with_respect_to_itself(tf):
    v = tf.Variable(3.0)
    m = tf.Variable([1.0, 2.0])
    c = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as watched:
        watched.watch(v)
        watched.watch(m)
        watched.watch(c)
    with tf.GradientTape(persistent=True) as unwatched:
        pass
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as no_access:
        _ = v * 2.0
    with tf.GradientTape(persistent=True) as read:
        _ = v * 2.0
    out = []
    for t in (watched, unwatched, no_access, read):
        out += [t.gradient(v, v), t.gradient(v, v, unconnected_gradients="zero"), t.gradient(m, m)]
        out += [t.gradient([v, v], [v]), t.gradient(v, [v, m]), t.gradient(v, v, output_gradients=5.0)]
    return out + [watched.gradient(c, c), watched.jacobian(m, m), watched.jacobian(v, v)]


def p_gradient_of_a_target_that_is_its_own_source(tf):
    v, u = tf.Variable(3.0), tf.Variable([1.0, 2.0])
    frozen = tf.Variable(1.0, trainable=False)
    c = tf.constant(2.0)
    with _tape(tf, persistent=True) as t:  # parity under gradkit: v stands for the Variable
        v.assign(v * 2.0)
        y = u * 2.0 + frozen
    og = [tf.constant([3.0, 4.0]), tf.constant(2.0)]
    return [
        t.gradient(v, v),
        t.gradient(c, c),
        t.gradient([c, y], c),
        t.gradient([u, y], u),
        t.gradient(frozen, frozen),
        t.gradient(u, u, output_gradients=og[0]),
        t.gradient([u, v], [u, v], output_gradients=og),
        t.jacobian(u, u),
    ]


# -- tf.Module lists its Variables as TensorFlow does ----------------------------------------


def p_module_variable_order(tf):
    class Inner(tf.Module):
        def __init__(self, tag):
            super().__init__()
            self.z = tf.Variable(0.0, name=tag + "_z")
            self.a = tf.Variable(0.0, name=tag + "_a", trainable=False)
            self.deeper = [] if tag != "b1" else [Inner("b1_inner")]

    class Outer(tf.Module):
        def __init__(self):
            super().__init__()
            self.zeta = tf.Variable(1.0, name="zeta")
            self.child = Inner("child")
            self.alpha = tf.Variable(1.0, name="alpha")
            self.blocks = [Inner("b0"), tf.Variable(2.0, name="in_list"), Inner("b1")]
            self.d = {"y": tf.Variable(3.0, name="d_y"), "b": (tf.Variable(3.0, name="d_b"),)}
            self.again = self.alpha
            self.shared = self.child.z
            self.Big = tf.Variable(5.0, name="Big")
            self._private = tf.Variable(6.0, name="private")

    m = Outer()
    names = [[v.name for v in vs] for vs in (m.variables, m.trainable_variables, m.non_trainable_variables)]
    return names + [[s.z.name for s in m.submodules]]


# -- the tape's API surface: what TensorFlow refuses, gradkit.tf refuses (with a [gradkit] message)


def p_gradient_of_a_none_target(tf):
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        _ = x * x
    return t.gradient(None, x)


def p_gradient_of_a_target_list_holding_none(tf):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient([y, None], x)


def p_gradient_of_a_tape_never_entered(tf):
    x = tf.constant(2.0)
    return tf.GradientTape().gradient(x, x)


def p_jacobian_of_a_tape_never_entered(tf):
    x = tf.constant([2.0])
    return tf.GradientTape(persistent=True).jacobian(x, x)


def p_reset_outside_the_context(tf):
    x = tf.Variable(2.0)
    t = tf.GradientTape(persistent=True)
    with t:
        _ = x * x
    t.reset()
    return [v.numpy() for v in t.watched_variables()]


def p_stop_recording_outside_the_context(tf):
    t = tf.GradientTape()
    with t.stop_recording():
        pass


def p_stop_recording_nested_in_its_own(tf):
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        with t.stop_recording():
            with t.stop_recording():
                x * 2.0


def p_watch_a_python_number(tf):
    with tf.GradientTape() as t:
        t.watch(3.0)


def p_watch_none(tf):
    with tf.GradientTape() as t:
        t.watch(None)


def p_watch_a_list_ending_in_none(tf):
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, None])


def p_batch_jacobian_of_a_vector_target(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x * x, axis=1)
    return t.batch_jacobian(y, x)


def p_batch_jacobian_with_respect_to_a_vector(tf):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reshape(x * x, [2, 1])
    return t.batch_jacobian(y, x)


def p_batch_jacobian_of_empty_examples(tf):
    x = tf.constant(np.ones((2, 3), np.float32))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x[:, :0] * 2.0
        z = x * 2.0
        e = tf.constant(np.ones((2, 0), np.float32))
        t.watch(e)
        w = tf.concat([z, e * 3.0], axis=1)
    return [t.batch_jacobian(y, x), t.batch_jacobian(w, e)]


def p_custom_gradient_one_gradient_for_two_inputs(tf):
    @tf.custom_gradient
    def f(x, y):
        def grad(dz):
            return dz * 2.0  # one tensor for two inputs

        return x * y, grad

    a, b = tf.constant([2.0, 3.0]), tf.constant([5.0, 7.0])
    with tf.GradientTape() as t:
        t.watch([a, b])
        z = f(a, b)
    return t.gradient(z, [a, b])


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    run_both(program)


def test_reentered_tape_matches_tensorflow_exactly():
    # run_both compares exception classes only; make sure the programs that should give
    # values did give them under both.
    for program in (p_reentered_tape_sees_both_blocks, p_reentered_while_an_outer_tape_records):
        out = run_both(program)
        assert not isinstance(out, Exception) and all(np.all(np.isfinite(g)) for g in out)


@pytest.mark.parametrize(
    "program, match",
    [
        (p_gradient_of_a_none_target, "target=None"),
        (p_gradient_of_a_target_list_holding_none, "holding None"),
        (p_gradient_of_a_tape_never_entered, "recorded nothing"),
        (p_jacobian_of_a_tape_never_entered, "recorded nothing"),
        (p_reset_outside_the_context, "not recording"),
        (p_stop_recording_outside_the_context, "needs the tape to be recording"),
        (p_stop_recording_nested_in_its_own, "already stopped"),
        (p_watch_a_python_number, "watch takes Variables"),
        (p_watch_none, "watch takes Variables"),
        (p_watch_a_list_ending_in_none, "watch takes Variables"),
        (p_batch_jacobian_of_a_vector_target, "target of rank 2 or more"),
        (p_batch_jacobian_with_respect_to_a_vector, "source of rank 2 or more"),
        (p_custom_gradient_one_gradient_for_two_inputs, "returned 1 input gradient"),
    ],
    ids=lambda p: getattr(p, "__name__", ""),
)
def test_refused_calls_raise_a_gradkit_error_of_tensorflows_class(program, match):
    # run_both checks the class against TensorFlow's; here, that it is gradkit's own message.
    with pytest.raises(GradkitError, match=match) as e:
        program(gtf)
    assert str(e.value).startswith("[gradkit]")


def test_batch_jacobian_of_an_empty_batch_is_empty():
    """TensorFlow fails on a batch of no examples (ZeroDivisionError inside its pfor); the
    per-example Jacobians of no examples are an empty (0, *target_dims, *source_dims) array."""
    x = gtf.constant(np.ones((0, 2), np.float32))
    with gtf.GradientTape() as t:
        t.watch(x)
        y = x * x
    bj = t.batch_jacobian(y, x)
    assert bj.shape == (0, 2, 2) and bj.dtype == np.float32


def test_custom_gradient_of_the_wrong_shape_is_a_gradkit_error():
    """TensorFlow hands a grad_fn's wrong-shaped gradient back as is (shape (3,) for a (2,)
    input); jax's custom_vjp cannot, so gradkit says which input and which shapes."""

    @gtf.custom_gradient
    def f(x):
        def grad(dy):
            return gtf.constant([1.0, 2.0, 3.0])

        return x * 2.0, grad

    x = gtf.constant([2.0, 1.0])
    with gtf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    with pytest.raises(
        ValueError, match=r"^\[gradkit\] custom_gradient: grad_fn returned a gradient of shape \(3,\) for input 0"
    ):
        t.gradient(y, x)


def test_a_variable_gradient_of_the_wrong_shape_from_custom_gradient_is_a_gradkit_error():
    v = gtf.Variable(3.0, name="scale")

    @gtf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x]  # (2,) for a scalar Variable

        return x * v, grad

    x = gtf.constant([1.0, 2.0])
    with gtf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    with pytest.raises(
        ValueError,
        match=r"^\[gradkit\] custom_gradient: grad_fn returned a gradient of shape \(2,\) for Variable 'scale'",
    ):
        t.gradient(y, [x, v])


def test_output_gradients_shorter_than_the_targets_is_a_gradkit_error():
    """TensorFlow reads past the end of a short output_gradients list (ones some runs, a
    segmentation fault others: no oracle to run); gradkit.tf refuses it."""
    x = gtf.constant([1.0, 2.0])
    with gtf.GradientTape() as t:
        t.watch(x)
        y, w = x * x, x + 1.0
    with pytest.raises(ValueError, match=r"^\[gradkit\] output_gradients has 1 entries but the target has 2"):
        t.gradient([y, w], x, output_gradients=[gtf.constant([1.0, 2.0])])


@pytest.mark.parametrize("structured", [False, True])
def test_a_none_output_gradient_is_refused_as_tensorflow_refuses_it(structured):
    for tf in (tf_real, gtf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as t:
            y, w = x * 2.0, x * x
        target, cotangents = ([y, w], [None, tf.constant([1.0, 10.0])]) if structured else (w, [None])
        with pytest.raises(ValueError, match=r"\[gradkit\] output_gradients\[0\] is None" if tf is gtf else "None"):
            t.gradient(target, x, output_gradients=cotangents)


def test_stop_recording_refusals_are_both_of_tensorflows_classes():
    """TensorFlow raises RuntimeError for a tape never entered and ValueError for one whose
    recording is stopped; gradkit's error is both."""
    for program, kind in (
        (p_stop_recording_outside_the_context, RuntimeError),
        (p_stop_recording_nested_in_its_own, ValueError),
    ):
        with pytest.raises(kind, match="not recording"):
            program(tf_real)
        with pytest.raises(kind, match=r"^\[gradkit\]") as e:
            program(gtf)
        assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
