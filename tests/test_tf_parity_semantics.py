"""gradkit.tf against real TensorFlow where JAX's conventions differ from TensorFlow's:
gradients at ties and kinks, integer reductions, ops TensorFlow gives no gradient,
Variable assignment keywords and scatters, Keras' list-valued variable properties."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


def p_maximum_minimum_ties(tf):
    x = tf.Variable([0.0, 1.0, 2.0])
    y = tf.Variable([0.0, 1.0, 1.0])
    with tf.GradientTape() as t:
        z = tf.reduce_sum(tf.maximum(x, 1.0) * 3.0) + tf.reduce_sum(tf.minimum(x, y) * 5.0)
        z = z + tf.reduce_sum(tf.maximum(y, x) * 7.0) + tf.reduce_sum(tf.minimum(1.0, x) * 11.0)
    return t.gradient(z, [x, y])


def p_maximum_nan(tf):
    return [tf.maximum(float("nan"), 1.0), tf.maximum(1.0, float("nan")), tf.minimum([float("nan")], [1.0])]


KINKS = {
    "relu": lambda tf, x: tf.nn.relu(x),
    "relu6": lambda tf, x: tf.nn.relu6(x),
    "leaky_relu": lambda tf, x: tf.nn.leaky_relu(x, alpha=0.1),
    "clip_by_value": lambda tf, x: tf.clip_by_value(x, 0.0, 6.0),
    "abs": lambda tf, x: tf.abs(x) + abs(x),
    "reduce_max_tie": lambda tf, x: tf.reduce_max(tf.stack([x, tf.zeros_like(x) + 3.0]), axis=0),
}


@pytest.mark.parametrize("name", sorted(KINKS))
def test_gradient_at_kinks(name):
    def program(tf):
        x = tf.Variable([-1.0, 0.0, 3.0, 6.0, 7.0])
        lo, hi = tf.Variable(0.0), tf.Variable(6.0)
        with tf.GradientTape() as t:
            y = KINKS[name](tf, x) * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
            if name == "clip_by_value":
                y = y + tf.clip_by_value(x, lo, hi)
        return t.gradient(y, [x, lo, hi], unconnected_gradients=tf.UnconnectedGradients.ZERO)

    run_both(program)


@pytest.mark.parametrize(
    "fn", ["reduce_mean", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_euclidean_norm"]
)
@pytest.mark.parametrize("values,dtype", [([1, 2, 4], "int32"), ([-1, -2, -4], "int32"), ([7, 2, 4], "int8")])
def test_integer_reductions_keep_the_dtype(fn, values, dtype):
    def program(tf):
        x = tf.constant(values, dtype=getattr(tf, dtype))
        f = getattr(tf.math, fn)
        outs = [f(x), f(tf.reshape(tf.concat([x, x], 0), [2, 3]), axis=1, keepdims=True)]
        return outs + [o.dtype.name for o in outs]

    run_both(program)


@pytest.mark.parametrize("fn", ["reduce_std", "reduce_variance", "reduce_logsumexp"])
def test_float_only_reductions_reject_integers(fn):
    run_both(lambda tf: getattr(tf.math, fn)(tf.constant([1, 2, 4])))


def p_top_level_reduce_mean_integer(tf):
    a = tf.constant([1, 2, 4])
    return [tf.reduce_mean(a), tf.reduce_mean(a).dtype.name, tf.reduce_mean(tf.constant([-7, 2]))]


NO_GRADIENT = {
    "round": lambda tf, x, y: tf.round(x),
    "math.round": lambda tf, x, y: tf.math.round(x),
    "floor": lambda tf, x, y: tf.math.floor(x),
    "ceil": lambda tf, x, y: tf.math.ceil(x),
    "rint": lambda tf, x, y: tf.math.rint(x),
    "floordiv_operator": lambda tf, x, y: x // 0.7,
    "floordiv_operator_reflected": lambda tf, x, y: 5.0 // x,
    "floordiv": lambda tf, x, y: tf.math.floordiv(x, y),
    "sign": lambda tf, x, y: tf.sign(x),
    "floormod": lambda tf, x, y: tf.math.floormod(x, y),
    "mod_operator": lambda tf, x, y: x % y,
    "argmax": lambda tf, x, y: tf.argmax(x),
}


@pytest.mark.parametrize("name", sorted(NO_GRADIENT))
def test_gradient_of_piecewise_constant_ops_is_tensorflows(name):
    # TensorFlow: None for round/floor/ceil/rint/floordiv (zeros with ZERO); sign has a zero gradient.
    def program(tf):
        x = tf.Variable([0.4, 1.6, -2.5])
        y = tf.Variable([0.7, 0.7, 0.7])
        with tf.GradientTape(persistent=True) as t:
            z = NO_GRADIENT[name](tf, x, y)
            w = tf.cast(z, tf.float32) * x
        return [
            z,
            t.gradient(z, [x, y]),
            t.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO),
            t.gradient(w, x),
        ]

    run_both(program)


def test_explain_names_the_op_without_a_gradient():
    x = gtf.Variable([0.4, 1.6])
    with gtf.GradientTape() as t:
        y = gtf.math.floor(x)
    assert t.gradient(y, x) is None
    assert "tf.math.floor (it has no gradient in TensorFlow)" in t.explain(y, x)


def p_assign_keywords(tf):
    v = tf.Variable([1.0, 2.0])
    out = [
        v.assign([3.0, 4.0], read_value=False),
        v.assign_add([1.0, 1.0], use_locking=True, read_value=False),
        v.assign_sub([0.5, 0.5], name="step", read_value=False),
        v.numpy(),
        v.assign([5.0, 6.0], use_locking=False, name="a").numpy(),
        v[0].assign(9.0, name="first").numpy(),
    ]
    return out + [v.numpy()]


def p_variable_scatters(tf):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    v.scatter_nd_update([[0, 1], [2, 0]], [10.0, 30.0])
    a = v.numpy()
    v.scatter_nd_add([[1], [1]], [[1.0, 1.0], [2.0, 2.0]])
    b = v.numpy()
    v.scatter_nd_sub([[2, 1]], [6.0])
    c = v.numpy()
    v.scatter_update(tf.IndexedSlices(tf.constant([[7.0, 8.0]]), tf.constant([0])))
    d = v.numpy()
    return [a, b, c, d]


def p_tensor_scatter_gradients(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    u = tf.constant([10.0, 30.0])
    w = tf.constant([0.5, 1.5, 2.5])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, u, w])
        a = tf.tensor_scatter_nd_update(x, [[0, 1], [2, 0]], u * u)
        b = tf.tensor_scatter_nd_add(x, [[1], [1], [0]], tf.stack([w[:2], w[1:], w[::2]]))
        loss = tf.reduce_sum(a * a) + tf.reduce_sum(tf.sin(b))
    return [a, b, t.gradient(loss, [x, u, w])]


def p_variables_properties_are_lists(tf):
    dense = tf.keras.layers.Dense(2)
    bn = tf.keras.layers.BatchNormalization()
    x = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    dense(x)
    bn(x, training=True)
    out = [len([x] + bn.trainable_variables), len(dense.trainable_variables + bn.non_trainable_variables)]
    for layer in (dense, bn):
        for prop in ("variables", "trainable_variables", "non_trainable_variables", "weights", "trainable_weights"):
            out.append(type(getattr(layer, prop)).__name__)

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(1.0)

    out += [type(M().trainable_variables).__name__, type(M().variables).__name__]
    return out


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    run_both(program)


def test_unknown_attribute_of_submodules_is_a_gradkit_error():
    for where, namespace in [
        ("gradkit.tf.keras", gtf.keras),
        ("gradkit.tf.keras.layers", gtf.keras.layers),
        ("gradkit.tf.keras.optimizers", gtf.keras.optimizers),
        ("gradkit.tf.keras.utils", gtf.keras.utils),
        ("gradkit.tf.dtypes", gtf.dtypes),
        ("gradkit.tf.math", gtf.math),
    ]:
        with pytest.raises(AttributeError, match=rf"^\[gradkit\] {where} has no 'NotAThing'"):
            _ = namespace.NotAThing


def p_watched_variables_in_creation_order(tf):
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        _ = c * b * a  # read in the reverse order
    return [float(v.numpy()) for v in t.watched_variables()]


def test_watched_variables_in_creation_order():
    run_both(p_watched_variables_in_creation_order)


@pytest.mark.parametrize("second", ["tape", "parity_tape", "watch", "forward_accumulator"])
def test_a_parity_tape_counts_each_read_once_when_another_tape_first_sees_the_variable(second):
    # The other tape's first look at u rebinds it to a node still on the parity tape's path:
    # no extra term for the parity tape (it counted u twice), as TensorFlow gives.
    def program(tf):
        u = tf.Variable(3.0)
        kwargs = {"track_assignments": False} if tf is gtf else {}
        with tf.GradientTape(**kwargs) as t1:
            a = u * 1.0
            if second == "forward_accumulator":
                with tf.autodiff.ForwardAccumulator(u, tf.constant(1.0)):
                    b = u * 2.0
            else:
                inner = {"parity_tape": kwargs}.get(second, {})
                with tf.GradientTape(**inner) as t2:
                    if second == "watch":
                        t2.watch(u)
                    b = u * 2.0
            c = u * 5.0
            loss = a + c + 0.0 * b
        return t1.gradient(loss, u)

    np.testing.assert_allclose(np.asarray(program(gtf)), np.asarray(program(tf_real)))


@pytest.mark.parametrize("outer_reads_first", [True, False])
@pytest.mark.parametrize("outer_derivative", ["gradient", "jacobian"])
def test_nested_parity_tapes_count_a_read_after_an_inner_assignment_once(outer_derivative, outer_reads_first):
    # When the outer tape reads v first, the inner tape's source for v is on the outer
    # tape's path; the inner tape's term for a later read (after the assignment cut it) must
    # not give the outer tape, differentiating the inner gradient, a second path to v next
    # to its own term: gradkit gave twice TensorFlow's second derivative. When both first see
    # v together they share one term, which must keep the outer tape's path.
    def program(tf):
        v, w = tf.Variable(2.0), tf.Variable(3.0)
        kwargs = {"track_assignments": False} if tf is gtf else {}
        with tf.GradientTape(persistent=True, **kwargs) as t1:
            y = v * w if outer_reads_first else tf.constant(6.0)
            with tf.GradientTape(**kwargs) as t2:
                v.assign(y * v)
                z = v * v * w
            g = t2.gradient(z, [v, w])
        if outer_derivative == "jacobian":
            return [g, t1.jacobian(g[0], [v, w]), t1.jacobian(g[1], [v, w])]
        return [g, t1.gradient(g[0], [v, w]), t1.gradient(g[1], [v, w]), t1.gradient(z, [v, w])]

    run_both(program)


_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["read", "assign", "assign_add", "assign_sub", "slice", "index"]),
        st.integers(0, 2),
        st.integers(0, 2),
        st.sampled_from([0.5, 1.5]),
    ),
    max_size=4,
)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(_STEPS, _STEPS)
@example([("read", 0, 0, 0.5)], [("assign", 0, 1, 0.5)])  # the inner tape's source is on the outer's path
def test_random_assignment_programs_under_nested_parity_tapes_match_tensorflow(before, after):
    # Reads and assignments of three Variables under an outer parity tape, then under it and
    # an inner one (which first sees a Variable after the outer tape may have read it): first-order
    # gradients of both, the outer gradient of the inner gradient, and a Jacobian.
    def program(tf):
        kwargs = {"track_assignments": False} if tf is gtf else {}
        vs = [tf.Variable([1.0, 2.0, 3.0]), tf.Variable([0.5, -1.0, 2.0]), tf.Variable([3.0, 1.0, -2.0])]
        reads = []
        with tf.GradientTape(persistent=True, **kwargs) as outer:
            inner = tf.GradientTape(persistent=True, **kwargs)
            for kind, i, j, c in before + [("open_inner", 0, 0, 1.0)] + after:
                if kind == "read":
                    reads.append(tf.reduce_sum(vs[i] * vs[j]) * c)
                elif kind == "assign":
                    vs[i].assign(vs[j] * c + vs[i])
                elif kind == "assign_add":
                    vs[i].assign_add(tf.sin(vs[j]) * c)
                elif kind == "assign_sub":
                    vs[i].assign_sub(vs[j] * vs[i] * c)
                elif kind == "slice":
                    vs[i][0:2].assign(vs[j][1:3] * c)
                elif kind == "index":
                    vs[i][1].assign(vs[j][0] * vs[i][2] * c)
                else:
                    inner.__enter__()
            loss = tf.add_n(reads + [tf.reduce_sum(v * v) for v in vs])
            inner.__exit__(None, None, None)
            g = inner.gradient(loss, vs)
            inner_sq = tf.add_n([tf.reduce_sum(e * e) for e in g if e is not None] + [tf.constant(0.0)])
        return [
            g,
            outer.gradient(loss, vs),
            outer.gradient(inner_sq, vs, unconnected_gradients="zero"),
            outer.jacobian(vs[0] * loss, vs),
        ]

    run_both(program)
