"""``tf.function`` creating Variables on its first call (TensorFlow's lazy-build pattern): an initial
value computed inside the trace from constants, shapes or other Variables is lifted out of the call
(TensorFlow's init_scope) and computed once; one computed from the arguments is refused, as
TensorFlow refuses it when it compiles with XLA; a Variable created on a later call is refused, as
TensorFlow refuses it. Oracles: real TensorFlow and hand-derived values."""

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf
from gradkit._errors import GradkitTypeError, GradkitValueError

X = np.array([[0.3, -0.2, 0.5], [1.0, 0.4, -0.7], [0.1, 0.2, 0.3], [-0.6, 0.9, 0.05]], np.float32)


def p_lazy_module_built_on_first_call(tf):
    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(tf.ones((3, 2)))
            return x @ self.w

    m = M()
    x = tf.ones((4, 3))
    return [m(x), m(x * 2), m.w]


def p_initial_values_from_shapes_callables_and_other_variables(tf):
    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(lambda: tf.fill((1, x.shape[-1]), 2.0))
                self.b = tf.Variable(tf.zeros_like(self.w) + tf.reshape(tf.range(3, dtype=tf.float32), (1, 3)))
                self.s = tf.Variable(tf.reduce_sum(self.w) * tf.ones([]))
            return x * self.w + self.b + self.s

    m = M()
    return [m(tf.constant(X)), m(tf.constant(X) * 2.0), m.w, m.b, m.s]


def p_keras_dense_built_inside_tf_function(tf):
    dense = tf.keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(dense(x)))
        grads = tape.gradient(loss, dense.trainable_variables)
        opt.apply_gradients(zip(grads, dense.trainable_variables))
        return loss

    x = tf.constant(X)
    return [step(x), step(x), dense.kernel, dense.bias]


def p_gradient_outside_on_and_after_the_first_call(tf):
    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(tf.ones((3, 2)) * 0.5)
            return tf.reduce_sum(tf.sin(x @ self.w))

    m = M()
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        y = m(x)
    first = tape.gradient(y, m.w)
    with tf.GradientTape() as tape:
        y = m(x * 2.0)
    return [first, tape.gradient(y, m.w), y]


def p_variable_created_on_a_later_call(tf):
    class M(tf.Module):
        def __init__(self):
            self.per_size = {}

        @tf.function
        def __call__(self, x):
            n = x.shape[0]
            if n not in self.per_size:
                self.per_size[n] = tf.Variable(tf.ones(n))
            return x * self.per_size[n]

    m = M()
    m(tf.ones(3))
    return m(tf.ones(4))  # a retrace (new shape) that creates a Variable: ValueError in both


def p_variable_kept_unread_on_a_later_call(tf):
    # The call neither reads nor assigns the Variable it keeps: still refused on a retrace.
    class M(tf.Module):
        def __init__(self):
            self.made = []

        @tf.function
        def __call__(self, x):
            self.made.append(tf.Variable(1.0))
            return x * 2.0

    m = M()
    m(tf.constant(1.0))
    return m(tf.constant([1.0, 2.0]))


def p_variable_kept_unread_on_the_first_call_only(tf):
    class M(tf.Module):
        def __init__(self):
            self.made = None

        @tf.function
        def __call__(self, x):
            if self.made is None:
                self.made = tf.Variable(3.0)
            return x * 2.0

    m = M()
    return [m(tf.constant(1.0)), m(tf.constant([1.0, 2.0])), m.made]


def p_unconditional_variable_kept_each_call(tf):
    kept = []

    @tf.function
    def f(x):
        kept.append(tf.Variable(1.0))
        return x + kept[-1]

    return f(tf.constant(1.0))


def p_a_known_initial_value_then_a_traced_one(tf):
    # The first Variable's initial value is known while tracing, the second's is computed: both
    # are made on the first call, under one `if`, as TensorFlow's guide writes it.
    class M(tf.Module):
        def __init__(self):
            self.count = None

        @tf.function
        def __call__(self, x):
            if self.count is None:
                self.count = tf.Variable(tf.constant(0) + 1)
                self.w = tf.Variable(tf.ones([1, 3]) * tf.cast(tf.constant(3) * 2, tf.float32))
            self.count.assign_add(1)
            return x * self.w * tf.cast(self.count, tf.float32)

    m = M()
    return [m(tf.constant(X)), m(tf.constant(X)), m.count, m.w]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_lazy_module_values_and_gradients_by_hand():
    # y = sum(sin(x @ w)): dy/dw = x^T cos(x @ w); w starts at 0.5 everywhere.
    m = gtf.Module()
    m.w = None

    @gtf.function
    def f(x):
        if m.w is None:
            m.w = gtf.Variable(gtf.ones((3, 2)) * 0.5)
        return gtf.reduce_sum(gtf.sin(x @ m.w))

    w0 = np.full((3, 2), 0.5, np.float32)
    with gtf.GradientTape() as tape:
        y = f(gtf.constant(X))
    np.testing.assert_allclose(y.numpy(), np.sum(np.sin(X @ w0)), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(y, m.w).numpy(), X.T @ np.cos(X @ w0), rtol=1e-5)
    m.w.assign(w0 * 3.0)  # a new value is read by the next call (an input, not a constant)
    traces = f.trace_count
    np.testing.assert_allclose(f(gtf.constant(X)).numpy(), np.sum(np.sin(X @ (w0 * 3.0))), rtol=1e-6)
    assert f.trace_count == traces


def test_random_initial_values_are_drawn_once_and_apart_from_the_calls_draws():
    gtf.random.set_seed(7)

    class M(gtf.Module):
        def __init__(self):
            self.w = None

        @gtf.function
        def __call__(self, x):
            if self.w is None:
                self.w = gtf.Variable(gtf.random.normal((64,)))
                self.v = gtf.Variable(gtf.random.normal((64,), seed=3))
            return x * self.w + gtf.random.normal((64,))

    m = M()
    x = gtf.ones(64)
    noise = m(x).numpy() - m.w.numpy()
    w, v = m.w.numpy(), m.v.numpy()
    assert abs(np.mean(w)) < 0.5 and 0.5 < np.std(w) < 1.5  # a standard normal draw, not a placeholder
    assert not np.allclose(w, v) and not np.allclose(noise, w) and not np.allclose(noise, v)
    second = m(x).numpy() - w
    assert not np.allclose(second, noise)  # each call draws afresh; the weights stay
    np.testing.assert_array_equal(m.w.numpy(), w)
    gtf.random.set_seed(7)
    again = M()
    again(x)
    np.testing.assert_array_equal(again.w.numpy(), w)  # set_seed fixes the initializer's draw


def test_an_initial_value_from_the_arguments_is_a_clear_error_and_changes_nothing():
    count = gtf.Variable(5.0)

    class M(gtf.Module):
        def __init__(self):
            self.w = None

        @gtf.function
        def __call__(self, x):
            count.assign_add(1.0)
            if self.w is None:
                self.w = gtf.Variable(x * 2.0, name="from_input")
            return x * self.w

    m = M()
    with pytest.raises(GradkitTypeError, match=r"^\[gradkit\] Variable 'from_input' was created from a traced") as e:
        m(gtf.ones(3))
    message = str(e.value)
    assert "depends on the arguments" in message and "init_scope" in message and "assign" in message
    assert float(count.numpy()) == 5.0  # the failed call assigned nothing
    with pytest.raises(GradkitTypeError, match=r"^\[gradkit\] Variable 'from_input'.*depends on the arguments"):
        m.w.numpy()  # it has no value (not the placeholder it was traced with), and the error says why


def test_a_variable_kept_by_a_failed_first_call_says_why_it_has_no_value_and_takes_an_assignment():
    built = {}

    @gtf.function
    def step(x):
        if "w" not in built:
            built["w"] = gtf.Variable(gtf.ones(3), name="w")
        w = built["w"]
        w.assign(w * 2.0)
        return gtf.tensordot(w, x, 1)

    with pytest.raises(Exception, match="3"):
        step(gtf.ones(4))  # a shape error after the Variable was created
    w = built["w"]
    assert "<none>" in repr(w)
    with pytest.raises(GradkitTypeError, match=r"^\[gradkit\] Variable 'w'.*raised an error.*Assign it one"):
        w.numpy()
    w.assign(np.ones(3, np.float32))  # given a value, the function runs: w = 2 w, then w . x
    np.testing.assert_allclose(step(gtf.constant([1.0, 2.0, 3.0])).numpy(), 12.0)
    np.testing.assert_allclose(w.numpy(), 2.0 * np.ones(3))


def test_tensorflow_also_leaves_a_variable_of_a_failed_first_call_without_its_initial_value():
    tf = pytest.importorskip("tensorflow")
    built = {}

    @tf.function
    def step(x):
        if "w" not in built:
            built["w"] = tf.Variable(tf.ones(3))
        return tf.tensordot(built["w"], x, 1)

    with pytest.raises(ValueError):
        step(tf.ones(4))
    assert built["w"].numpy().size == 0  # not the initial value of ones(3)


def test_tensorflow_refuses_an_initial_value_from_the_arguments_under_xla():
    # gradkit always compiles as TensorFlow's jit_compile=True does; there TensorFlow cannot lift
    # the initializer either (without XLA it initializes the Variable inside the call instead).
    tf = pytest.importorskip("tensorflow")

    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function(jit_compile=True)
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(x * 2.0)
            return x * self.w

    with pytest.raises(Exception, match="lift variable creations"):
        M()(tf.ones(3))


def test_a_variable_created_on_a_later_call_is_refused_before_anything_is_assigned():
    count = gtf.Variable(0.0)
    made = {}

    @gtf.function
    def f(x):
        count.assign_add(1.0)
        n = x.shape[0]
        if n not in made:
            made[n] = gtf.Variable(gtf.ones(n))
        return x * made[n]

    np.testing.assert_array_equal(f(gtf.ones(3)).numpy(), np.ones(3))
    with pytest.raises(GradkitValueError, match=r"^\[gradkit\] \S*f created Variable 'Variable' after its first") as e:
        f(gtf.ones(4))
    assert "singleton" in str(e.value) and "if self.v is None" in str(e.value)
    assert float(count.numpy()) == 1.0


def test_a_variable_the_function_does_not_keep_is_still_a_local_accumulator():
    # gradkit's documented extension (TensorFlow refuses any tf.Variable created in the function
    # after its first trace): a Variable created and dropped by each call is local to it.
    @gtf.function
    def f(x):
        acc = gtf.Variable(gtf.zeros(3))
        for i in range(3):
            acc.assign_add(x * float(i))
        return acc.read_value()

    np.testing.assert_allclose(f(gtf.ones(3)).numpy(), np.full(3, 3.0))
    np.testing.assert_allclose(f(gtf.ones(3) * 2.0).numpy(), np.full(3, 6.0))


def test_gk_jit_lifts_a_constant_initial_value_of_a_layer_built_on_its_first_call():
    # The same in the core, without TensorFlow's names (oracle: NumPy).
    import jax.numpy as jnp

    class Scale:
        def __init__(self):
            self.w = None

        def __call__(self, x):
            if self.w is None:
                self.w = gk.Variable(jnp.arange(3.0) + 1.0, name="w")
            return x * self.w

    layer = Scale()
    step = gk.jit(lambda x: layer(x))
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_allclose(step(x), x * np.array([1.0, 2.0, 3.0]))
    layer.w.assign(np.array([1.0, 3.0, -1.0], np.float32))
    np.testing.assert_allclose(step(x), x * np.array([1.0, 3.0, -1.0]))
