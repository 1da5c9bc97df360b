"""A second derivative with respect to a value the first derivative does not depend on is None.

gradkit records a derivative taken under another tape as one op; its results' dependence
on that op's inputs is read from its program, so the outer tape gives None exactly where
TensorFlow (whose derivative graph is recorded op by op) does. Oracle: real TensorFlow,
the same program text under both modules (``run_both``).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from _oracles import count_compiles  # noqa: E402
from test_tf_parity import run_both  # noqa: E402

import gradkit as gk  # noqa: E402
import gradkit.tf as gtf  # noqa: E402


def p_first_gradient_without_y(tf):
    x, y = tf.Variable(3.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            z = x * x + y
        g = t1.gradient(z, x)  # 2x: does not read y
    return [t2.gradient(g, y), t2.gradient(g, x), t2.gradient(g, y, unconnected_gradients="zero")]


def p_first_gradient_reads_the_other_factor(tf):
    x, y = tf.Variable(3.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            z = x * y
        g = t1.gradient(z, x)  # y: reads y, not x
    return [t2.gradient(g, y), t2.gradient(g, x)]


def p_gradient_list_each_result_its_own(tf):
    x, y = tf.Variable([1.0, 2.0]), tf.Variable(0.5)
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            z = tf.reduce_sum(tf.sin(x) * y) + tf.reduce_sum(x**2) + 3.0 * y
        gx, gy = t1.gradient(z, [x, y])
    return [t2.gradient(gx, [x, y]), t2.gradient(gy, [x, y])]


def p_output_gradients_read_y(tf):
    x, y = tf.Variable(3.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            z = x * x
        g = t1.gradient(z, x, output_gradients=y * 4.0)
        h = t1.gradient(z, x, output_gradients=tf.constant(4.0))
    return [t2.gradient(g, [x, y]), t2.gradient(h, [x, y])]


def p_jacobian_under_outer_tape(tf):
    x, y = tf.Variable([1.0, 2.0, 3.0]), tf.Variable([0.5, -1.0, 2.0])
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape(persistent=True) as t1:
            z = x * x + y
            w = x * y
        jz = t1.jacobian(z, x)  # diag(2x): no y
        jw = t1.jacobian(w, x)  # diag(y): no x
    return [
        t2.gradient(jz, [x, y]),
        t2.gradient(jw, [x, y]),
        t2.jacobian(jz, y),
        t2.jacobian(jz, y, unconnected_gradients="zero"),
    ]


def p_hessian_with_a_linear_parameter(tf):
    w = tf.Variable([0.3, -0.2])
    b = tf.Variable(0.7)
    data = tf.constant([[1.0, 2.0], [0.5, -1.0], [2.0, 0.1]])
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            logits = tf.linalg.matvec(data, w)
            loss = tf.reduce_sum(tf.math.softplus(logits)) + tf.reduce_sum(logits) * b + 2.0 * b
        gw, gb = inner.gradient(loss, [w, b])
    return [outer.jacobian(gw, [w, b]), outer.jacobian(gb, [w, b]), outer.gradient(gb, w)]


def p_maml_inner_step(tf):
    w = tf.Variable([0.5, -0.3])
    shift = tf.Variable(1.5)  # enters the inner loss additively only
    lr = tf.Variable(0.1)
    x_in = tf.constant([[1.0, 2.0], [0.5, 1.0]])
    x_out = tf.constant([[2.0, -1.0], [1.0, 0.0]])
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            inner_loss = tf.reduce_sum(tf.linalg.matvec(x_in, w) ** 2) + shift
        g = inner.gradient(inner_loss, w)
        w_fast = w - lr * g
        outer_loss = tf.reduce_sum(tf.tanh(tf.linalg.matvec(x_out, w_fast)))
    return [outer.gradient(outer_loss, [w, shift, lr]), outer.gradient(g, shift, unconnected_gradients="zero")]


def p_batch_jacobian_under_outer_tape(tf):
    x = tf.Variable([[1.0, 2.0], [3.0, -1.0]])
    y = tf.Variable([[0.5, 2.0]])
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            t1.watch(x)
            z = x**3 + y
        bj = t1.batch_jacobian(z, x)  # diag(3x^2) per example: no y
    return [t2.gradient(bj, [x, y])]


def p_forward_accumulator_under_tape(tf):
    x, y = tf.Variable(2.0), tf.Variable(-1.5)
    with tf.GradientTape(persistent=True) as tape:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            z = x * x + y
            u = x * y
            v = tf.sin(x) + y * y
            w = 3.0 * x + y
        jvps = [acc.jvp(t) for t in (z, u, v, w)]
    # 2x, y, cos(x), 3: none reads y. TensorFlow's JVP of a product reads both factors (the
    # one without a tangent gets a zero one): d/dx of the JVPs of x * y and 3x is 0, not None.
    return [tape.gradient(j, [x, y]) for j in jvps]


def p_third_order(tf):
    x, y = tf.Variable(1.5), tf.Variable(-0.5)
    with tf.GradientTape(persistent=True) as t3:
        with tf.GradientTape(persistent=True) as t2:
            with tf.GradientTape() as t1:
                z = x * x * x + x * y + y
            g1 = t1.gradient(z, x)  # 3x^2 + y
        g2x, g2y = t2.gradient(g1, [x, y])  # 6x, 1
    return [g2x, g2y, t3.gradient(g2x, [x, y]), t3.gradient(g2y, [x, y])]


def p_meta_step_in_tf_function(tf):
    w = tf.Variable([0.5, -0.3])
    shift = tf.Variable(1.5)
    x = tf.constant([[1.0, 2.0], [0.5, 1.0]])

    @tf.function
    def step(lr):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner_loss = tf.reduce_sum(tf.linalg.matvec(x, w) ** 2) + shift
            w_fast = w - lr * inner.gradient(inner_loss, w)
            loss = tf.reduce_sum(tf.tanh(tf.linalg.matvec(x, w_fast)))
        gw, gs = outer.gradient(loss, [w, shift], unconnected_gradients="zero")
        return gw, gs

    return [step(tf.constant(0.1)), step(tf.constant(0.2))]


def p_tf_function_call_inputs_it_does_not_use(tf):
    # A tf.function call is one recorded op; each output depends on what its program reads:
    # not on an unused argument, nor on a Variable behind stop_gradient.
    v, w = tf.Variable([3.0, 4.0]), tf.Variable(1.0)

    @tf.function
    def f(a, b):
        return b * 2.0 + tf.stop_gradient(w) * v

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x, v)
    return t.gradient(y, [x, v, w])


def p_tf_function_call_results_the_target_does_not_use(tf):
    # The call is one op in TensorFlow: a source read only by a result the target does not
    # use gets zeros; one no result reads, None.
    v, w, unused = tf.Variable([3.0, 4.0]), tf.Variable(2.0), tf.Variable(5.0)

    @tf.function
    def f(a):
        return tf.reduce_sum(a * v), w * a

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        s, u = f(x)
        loss = s * 2.0
    return t.gradient(loss, [x, v, w, unused])


def p_tf_function_reads_a_variable_only_through_comparisons_and_int_casts(tf):
    # A boolean or integer value carries no derivative: None for v, as in TensorFlow.
    v, w = tf.Variable([1.0, -2.0]), tf.Variable([3.0, 4.0])

    @tf.function
    def f(x):
        return tf.where(v > 0.0, w * x, x * 2.0), tf.cast(tf.cast(v, tf.int32), tf.float32) * x

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        a, b = f(x)
        la, lb = tf.reduce_sum(a), tf.reduce_sum(b)
    return [t.gradient(la, [v, w]), t.gradient(lb, [v, w])]


def p_second_derivatives_of_kinked_activations_are_zeros(tf):
    # TensorFlow's gradient kernels of relu, relu6, leaky_relu and abs have gradients of their
    # own (zeros), though their first derivatives select with a comparison.
    x = tf.Variable([1.0, -2.0, 3.0, 7.0])
    out = []
    for f in (tf.nn.relu, tf.nn.relu6, tf.nn.leaky_relu, tf.abs, lambda z: tf.where(z > 0, z * z, 0.0)):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(f(x))
            g = inner.gradient(y, x)
        out.append(outer.gradient(g, x))
    return out


PROGRAMS = [
    p_second_derivatives_of_kinked_activations_are_zeros,
    p_tf_function_reads_a_variable_only_through_comparisons_and_int_casts,
    p_tf_function_call_inputs_it_does_not_use,
    p_tf_function_call_results_the_target_does_not_use,
    p_first_gradient_without_y,
    p_first_gradient_reads_the_other_factor,
    p_gradient_list_each_result_its_own,
    p_output_gradients_read_y,
    p_jacobian_under_outer_tape,
    p_hessian_with_a_linear_parameter,
    p_maml_inner_step,
    p_batch_jacobian_under_outer_tape,
    p_forward_accumulator_under_tape,
    p_third_order,
    p_meta_step_in_tf_function,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__[2:])
def test_second_order_none_matches_tensorflow(program):
    run_both(program)


def test_a_meta_step_in_tf_function_compiles_once():
    """The dependence is read when the step is traced; later same-shaped calls compile nothing."""
    w, shift = gtf.Variable([0.5, -0.3]), gtf.Variable(1.5)
    x = gtf.constant([[1.0, 2.0], [0.5, 1.0]])

    @gtf.function
    def step(lr):
        with gtf.GradientTape() as outer:
            with gtf.GradientTape() as inner:
                inner_loss = gtf.reduce_sum(gtf.linalg.matvec(x, w) ** 2) + shift
            w_fast = w - lr * inner.gradient(inner_loss, w)
            loss = gtf.reduce_sum(gtf.tanh(gtf.linalg.matvec(x, w_fast)))
        return outer.gradient(loss, [w, shift], unconnected_gradients="zero")

    step(gtf.constant(0.1))
    assert count_compiles(lambda: [step(gtf.constant(v)) for v in (0.2, 0.3)]) == 0


def test_explain_names_the_derivative_that_does_not_read_the_source():
    x, y = gtf.Variable(3.0), gtf.Variable(2.0)
    with gtf.GradientTape(persistent=True) as t2:
        with gtf.GradientTape() as t1:
            z = x * x + y
        g = t1.gradient(z, x)
    assert t2.gradient(g, y) is None
    msg = t2.explain(g, y)
    assert msg.startswith("gradient is None") and "'gradient'" in msg
    assert t2.explain(g, x).startswith("connected")


def _tf_nested(f, x_value, y_value):
    """TensorFlow's second derivatives of ``d f(x, y) / dx`` with respect to x and y (None-ness kept)."""
    x, y = tf_real.Variable(x_value), tf_real.Variable(y_value)
    with tf_real.GradientTape(persistent=True) as t2:
        with tf_real.GradientTape() as t1:
            z = f(tf_real, x, y)
        g = t1.gradient(z, x)
    return [None if r is None else r.numpy() for r in t2.gradient(g, [x, y])]


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x, y: x * x + y,
        lambda m, x, y: m.sin(x) * y,
        lambda m, x, y: 3.0 * x + y * y,
    ],
    ids=["square_plus_y", "sin_times_y", "linear_in_x"],
)
def test_functional_grad_under_tape_matches_nested_tensorflow_tapes(f):
    """``gk.grad`` called under a tape is one recorded program: its dependence is read from it."""
    expected = _tf_nested(f, 0.7, -1.2)
    x, y = gk.Variable(jnp.float32(0.7)), gk.Variable(jnp.float32(-1.2))
    with gk.GradientTape(persistent=True) as tape:
        g = gk.grad(lambda: f(gk.numpy, x, y), wrt=x)()
    got = tape.gradient(g, [x, y])
    for e, r in zip(expected, got):
        assert (e is None) == (r is None), (expected, got)
        if e is not None:
            np.testing.assert_allclose(np.asarray(r), e, rtol=1e-5)


def test_recorded_gradient_reads_its_dependence_once_per_structure():
    """A repeated MAML step plans its outer gradient once: no new trace of the derivative op."""
    from gradkit._tape import dependence

    w, shift = gk.Variable(jnp.array([0.5, -0.3])), gk.Variable(jnp.float32(1.5))
    x = jnp.array([[1.0, 2.0], [0.5, 1.0]])

    def step():
        with gk.GradientTape() as outer:
            with gk.GradientTape() as inner:
                inner_loss = gk.numpy.sum((x @ w) ** 2) + shift
            w_fast = w - 0.1 * inner.gradient(inner_loss, w)
            loss = gk.numpy.sum(gk.numpy.tanh(x @ w_fast))
        return outer.gradient(loss, [w, shift])

    assert step()[1] is None
    walks = []
    original = dependence._walk
    dependence._walk = lambda *a: walks.append(1) or original(*a)
    try:
        for _ in range(3):
            gw, gs = step()
    finally:
        dependence._walk = original
    assert walks == [] and gs is None
    expected = jax.grad(lambda v: jnp.sum(jnp.tanh(x @ (v - 0.1 * jax.grad(lambda u: jnp.sum((x @ u) ** 2))(v)))))(
        jnp.array([0.5, -0.3])
    )
    np.testing.assert_allclose(np.asarray(gw), expected, rtol=1e-5)
